//! What the dynamic loader does before `main`: GCC's unwinder is linked in (build.rs, `static_unwinder`), so a start
//! does not find, map and relocate `libgcc_s.so.1` (docs/performance.md).

#[test]
fn the_binary_does_not_load_libgcc_s() {
    let path = env!("CARGO_BIN_EXE_rocmenv");
    let bytes = std::fs::read(path).expect("the built binary");
    let exe = rocmenv::elf::inspect(&bytes).expect("an ELF executable");
    assert!(
        !exe.is_static(),
        "{path} is dynamic (HIP and CUDA are loaded with dlopen)"
    );
    assert!(
        exe.needed.iter().any(|l| l == "libc.so.6"),
        "{:?}",
        exe.needed
    );
    if cfg!(static_unwinder) {
        assert!(
            !exe.needed.iter().any(|l| l.starts_with("libgcc_s")),
            "the build found libgcc_eh.a, yet the binary loads libgcc_s: {:?}",
            exe.needed
        );
    } else {
        eprintln!("SKIP: this build found no libgcc_eh.a and links the shared unwinder");
    }
}
