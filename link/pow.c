/* pow for the rocmenv binary, so that it does not load glibc's libm.so.6 for this one function (build.rs
 * `local_pow`; docs/performance.md). The arithmetic is the libm crate's (musl's, in Rust: src/lib.rs
 * `rocmenv_libm_pow`). Hidden: the binary does not export it, so a library loaded later (the HIP or CUDA runtime)
 * still calls glibc's. A Rust #[no_mangle] definition would be exported, which is why this is C. */
double rocmenv_libm_pow(double x, double y);

__attribute__((visibility("hidden"))) double pow(double x, double y) {
    return rocmenv_libm_pow(x, y);
}
