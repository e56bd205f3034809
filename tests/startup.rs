//! What the dynamic loader does before `main`: the binary needs glibc alone. GCC's unwinder is linked in
//! (build.rs, `static_unwinder`) and `pow` comes from the `libm` crate (src/main.rs), so a start maps and relocates
//! one library, not three (docs/performance.md).

#[test]
fn the_binary_loads_libc_alone() {
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
    assert!(
        !exe.needed.iter().any(|l| l.starts_with("libm.so")),
        "libm is needed again (a call to a libm function other than pow?): {:?}",
        exe.needed
    );
    if cfg!(static_unwinder) {
        assert!(
            !exe.needed.iter().any(|l| l.starts_with("libgcc_s")),
            "the build found libgcc_eh.a, yet the binary loads libgcc_s: {:?}",
            exe.needed
        );
    }
}
