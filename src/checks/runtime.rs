//! What the GPU runtimes themselves see (live only): "the driver is loaded but HIP sees 0 devices" is a finding.

use super::{Context, Finding, Status};
use crate::runtime::{ProbeStatus, RuntimeProbe};

const AREA: &str = "runtime";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let Some(r) = cx.runtime else {
        let why = "not checked under --sysroot (the runtimes of the host running rocmenv are not the tree's)";
        return vec![
            Finding::new(
                "runtime.hip",
                AREA,
                Status::Skip,
                format!("HIP runtime: {why}"),
            ),
            Finding::new(
                "runtime.cuda",
                AREA,
                Status::Skip,
                format!("CUDA runtime: {why}"),
            ),
        ];
    };
    vec![
        one(
            cx,
            "runtime.hip",
            &r.hip,
            cx.facts.amd_gpus().count(),
            "AMD",
        ),
        one(
            cx,
            "runtime.cuda",
            &r.cuda,
            cx.facts.nvidia_gpus().count(),
            "NVIDIA",
        ),
    ]
}

fn one(_cx: &Context, id: &'static str, p: &RuntimeProbe, sysfs: usize, vendor: &str) -> Finding {
    let lib = p.library.clone().unwrap_or_else(|| p.backend.clone());
    let versions = match (&p.runtime_version, &p.driver_version) {
        (Some(r), Some(d)) => format!(" (runtime {r}, driver {d})"),
        (Some(r), None) => format!(" (runtime {r})"),
        (None, Some(d)) => format!(" (driver {d})"),
        (None, None) => String::new(),
    };
    match p.status {
        ProbeStatus::LibraryMissing | ProbeStatus::Unsupported => {
            let note = p
                .note
                .clone()
                .unwrap_or_else(|| format!("no {} library", p.runtime));
            if sysfs > 0 {
                Finding::new(id, AREA, Status::Warn, format!("{sysfs} {vendor} GPU(s) in sysfs, but {note}"))
                    .detail("containers bring their own runtime, so only host-side work needs it")
                    .fix(if vendor == "AMD" { "for host work: install ROCm (amdgpu-install --usecase=rocm)" } else { "for host work: install the NVIDIA driver's user-space libraries (libcuda.so.1 ships with the driver)" })
            } else {
                Finding::new(id, AREA, Status::Skip, note)
            }
        }
        ProbeStatus::Ok => {
            let round_trips = p
                .devices
                .iter()
                .filter(|d| d.round_trip.as_ref().is_some_and(|c| c.ok()))
                .count();
            let failed: Vec<String> = p
                .devices
                .iter()
                .filter_map(|d| {
                    let bad = [&d.round_trip, &d.kernel]
                        .into_iter()
                        .flatten()
                        .find(|c| c.status() == crate::status::Status::Fail)?;
                    Some(format!("device {}: {}", d.index, bad.detail))
                })
                .collect();
            if !failed.is_empty() {
                return Finding::new(id, AREA, Status::Fail, format!("{} sees {} device(s) but a test failed: {}", p.runtime, p.devices.len(), failed.join("; ")))
                    .detail(format!("{lib}{versions}"))
                    .fix("check `sudo dmesg` for GPU resets or ECC errors; rerun `rocmenv probe` to see whether it repeats");
            }
            let mut f = Finding::new(
                id,
                AREA,
                Status::Pass,
                format!(
                    "{} sees {} device(s){versions}; {round_trips} memory round trip(s) passed",
                    p.runtime,
                    p.devices.len()
                ),
            )
            .detail(lib);
            if p.devices.len() < sysfs {
                f = Finding::new(id, AREA, Status::Warn, format!("{} sees {} of the {sysfs} {vendor} GPUs in sysfs{versions}", p.runtime, p.devices.len()))
                    .fix("a *_VISIBLE_DEVICES variable, a GPU bound to vfio-pci, or a GPU that failed to initialise hides the rest (see env.visible-devices, driver checks)");
            }
            f
        }
        ProbeStatus::NoDevice | ProbeStatus::Error => {
            let (name, fix) = p
                .error
                .as_ref()
                .map(|e| (e.name.clone(), e.fix.clone()))
                .unwrap_or_else(|| ("no device".into(), String::new()));
            let status = if sysfs == 0 && p.status == ProbeStatus::NoDevice {
                Status::Skip
            } else {
                Status::Fail
            };
            let summary = if sysfs > 0 {
                format!(
                    "the {vendor} driver shows {sysfs} GPU(s), but {} answers {name}",
                    p.runtime
                )
            } else {
                format!(
                    "{} loads ({lib}) and answers {name}: no {vendor} GPU here",
                    p.runtime
                )
            };
            let mut f = Finding::new(id, AREA, status, summary).detail(format!(
                "{lib}{versions}{}",
                p.note
                    .as_ref()
                    .map(|n| format!("; {n}"))
                    .unwrap_or_default()
            ));
            if status == Status::Fail && !fix.is_empty() {
                f = f.fix(fix);
            }
            f
        }
    }
}
