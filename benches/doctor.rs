//! `doctor` end to end, in-process, on the 8-GPU fixture (target: 3 ms on a 2-core machine), the host probe of that
//! tree alone (the reads through `HostRoot`), and the matrix loads (every built-in file, and rocm.yaml alone).

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

fn probe_8_gpus(c: &mut Criterion) {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/h100-x8-ubuntu2204");
    let opts = rocmenv::host::ProbeOptions::default();
    c.bench_function("host probe of the h100-x8 fixture (open + reads)", |b| {
        b.iter(|| {
            let (host, session) =
                rocmenv::host::open(Some(&root), std::time::Duration::from_secs(5), None)
                    .expect("fixture opens");
            rocmenv::host::probe(&host, &*session, &opts)
        })
    });
}

fn matrices_load(c: &mut Criterion) {
    // The built-in files are parsed when first read (`matrix::Part`): each file is read here, so each is parsed.
    c.bench_function(
        "embedded matrices: the JSON build.rs made, every file",
        |b| {
            b.iter(|| {
                let m = rocmenv::matrix::Matrices::embedded().expect("valid");
                std::hint::black_box((&*m.rocm, &*m.cuda, &*m.ngc, &*m.gpus, &*m.firmware));
            })
        },
    );
    c.bench_function("embedded matrices: rocm.yaml's JSON alone", |b| {
        b.iter(|| {
            let m = rocmenv::matrix::Matrices::embedded().expect("valid");
            std::hint::black_box(&*m.rocm);
        })
    });
    c.bench_function(
        "embedded matrices: YAML parse + validate (as --matrices DIR)",
        |b| b.iter(|| rocmenv::matrix::Matrices::embedded_yaml().expect("valid")),
    );
}

criterion_group!(benches, doctor_8_gpus, probe_8_gpus, matrices_load);
criterion_main!(benches);
