//! The embedded matrices load and hold real facts; broken matrix directories fail with file and line.

use rocmenv::gfx::GfxTarget;
use rocmenv::matrix::{Matrices, MatrixError, SupportStatus, Vendor};
use rocmenv::version::Version;

fn m() -> Matrices {
    Matrices::embedded().expect("embedded matrices load")
}

fn gfx(s: &str) -> GfxTarget {
    s.parse().unwrap()
}

#[test]
fn embedded_has_every_release() {
    let m = m();
    let want = [
        "5.7.0", "5.7.1", "6.0.0", "6.0.2", "6.1.0", "6.1.1", "6.1.2", "6.1.5", "6.2.0", "6.2.1", "6.2.2",
        "6.2.4", "6.3.0", "6.3.1", "6.3.2", "6.3.3", "6.4.0", "6.4.1", "6.4.2", "6.4.3", "7.0.0", "7.0.1",
        "7.0.2", "7.1.0", "7.1.1", "7.2.0",
    ];
    assert_eq!(m.rocm_versions(), want);
}
