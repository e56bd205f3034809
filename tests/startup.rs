//! What the dynamic loader does before `main`: GCC's unwinder and `pow` are linked in (build.rs, `static_unwinder`
//! and `local_pow`), so a start does not find, map and relocate `libgcc_s.so.1` and `libm.so.6` (docs/performance.md).

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

#[test]
fn the_binary_does_not_load_libm_nor_export_pow() {
    use object::{Object, ObjectSymbol};
    let path = env!("CARGO_BIN_EXE_rocmenv");
    let bytes = std::fs::read(path).expect("the built binary");
    if !cfg!(local_pow) {
        eprintln!("SKIP: this build compiled no link/pow.c (not linux-gnu, or no C compiler) and loads libm.so.6");
        return;
    }
    let exe = rocmenv::elf::inspect(&bytes).expect("an ELF executable");
    assert!(
        !exe.needed.iter().any(|l| l.starts_with("libm.so")),
        "the build defines pow, yet the binary loads libm: {:?}",
        exe.needed
    );
    // Exported, it would be what the HIP and CUDA runtimes loaded later call instead of glibc's.
    let file = object::File::parse(&*bytes).expect("an object file");
    let exported: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .filter(|n| n == "pow")
        .collect();
    assert!(exported.is_empty(), "{path} exports {exported:?}");
}

/// The binary's `pow` (musl's, from the libm crate) against glibc's, loaded as the HIP runtime would load it: the same
/// result within one unit in the last place over a spread of arguments, and the same special cases.
#[test]
fn the_linked_pow_agrees_with_glibc() {
    if !cfg!(local_pow) {
        eprintln!("SKIP: this build uses glibc's pow itself");
        return;
    }
    // SAFETY: libm.so.6 is glibc's math library; pow has this C signature.
    let glibc = unsafe { libloading::Library::new("libm.so.6") }.expect("glibc's libm.so.6");
    let glibc_pow: libloading::Symbol<unsafe extern "C" fn(f64, f64) -> f64> =
        unsafe { glibc.get(b"pow\0") }.expect("pow in libm.so.6");
    // `powf` calls `pow`, which must be link/pow.c's: the same bits as the libm crate's every time.
    let ours = |x: f64, y: f64| {
        let linked = std::hint::black_box(x).powf(std::hint::black_box(y));
        #[cfg(local_pow)]
        {
            let crate_pow = rocmenv::rocmenv_libm_pow(x, y);
            assert!(
                linked.to_bits() == crate_pow.to_bits() || (linked.is_nan() && crate_pow.is_nan()),
                "pow({x:e}, {y}) called from here is not link/pow.c's: {linked:e}, the libm crate's {crate_pow:e}"
            );
        }
        linked
    };
    let mut rng = fastrand::Rng::with_seed(37);
    for _ in 0..20_000 {
        let x = f64::from_bits(rng.u64(0x3C00_0000_0000_0000..0x4400_0000_0000_0000));
        let y = rng.f64() * 40.0 - 20.0;
        let (a, b) = (ours(x, y), unsafe { glibc_pow(x, y) });
        let ulps = (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        assert!(ulps <= 1, "pow({x:e}, {y}) = {a:e}, glibc {b:e}");
    }
    for (x, y) in [
        (2.0, 10.0),
        (0.0, 0.0),
        (-8.0, 1.0 / 3.0),
        (f64::INFINITY, -1.0),
        (-0.0, -1.0),
        (1.0, f64::NAN),
        (f64::NAN, 0.0),
        (-2.0, 3.0),
        (10.0, 400.0),
        (10.0, -400.0),
    ] {
        let (a, b) = (ours(x, y), unsafe { glibc_pow(x, y) });
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "pow({x}, {y}) = {a}, glibc {b}"
        );
    }
}
