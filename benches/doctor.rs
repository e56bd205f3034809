//! `doctor` end to end, in-process, on the 8-GPU fixture (target: 3 ms on a 2-core machine), and the matrix loads.

use criterion::{criterion_group, criterion_main, Criterion};
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use std::path::PathBuf;

fn doctor_8_gpus(c: &mut Criterion) {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/h100-x8-ubuntu2204");
    let opts = DoctorOptions {
        sysroot: Some(root),
        ..DoctorOptions::default()
    };
    c.bench_function("doctor h100-x8 fixture (probe + checks + JSON)", |b| {
        b.iter(|| {
            let r = build_report(&opts).expect("fixture loads");
            let mut out = Vec::new();
            rocmenv::report::render_json(&r, &mut out).unwrap();
            out
        })
    });
}

fn matrices_load(c: &mut Criterion) {
    c.bench_function("embedded matrices: the JSON build.rs made", |b| {
        b.iter(|| rocmenv::matrix::Matrices::embedded().expect("valid"))
    });
    c.bench_function(
        "embedded matrices: YAML parse + validate (as --matrices DIR)",
        |b| b.iter(|| rocmenv::matrix::Matrices::embedded_yaml().expect("valid")),
    );
}

criterion_group!(benches, doctor_8_gpus, matrices_load);
criterion_main!(benches);
