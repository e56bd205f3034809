//! Native runtime probes: ask the CUDA driver and the HIP runtime themselves what they see.
//!
//! Both runtimes are loaded at run time (CUDA through cudarc's dynamic loading, HIP with `dlopen`
//! of `libamdhip64`), so the default binary builds and runs on hosts with neither installed. The
//! `hip` feature links HIP through `hip-sys` instead. A probe never panics: a missing library is a
//! status, and every call into a foreign library sits behind `catch_unwind` as a second defence.
//!
//! The probes need the dynamic loader: a fully static musl binary cannot `dlopen`, so there every
//! runtime reports `unsupported` (see the README's "Why not a static binary").

mod cuda;
mod cuda_errors;
mod errors;
mod hip;
mod hip_errors;
mod loaded;

pub use cuda_errors::{cuda_error, cuda_error_info};
pub use errors::ErrorInfo;
pub use hip::{
    HIP_ATTR_MULTIPROCESSOR_COUNT, HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE,
};
pub use hip_errors::{hip_error, hip_error_info};

use crate::host::HostRoot;
use crate::status::Status;
use serde::Serialize;
use std::path::PathBuf;

/// What one runtime reported: the library, versions, devices and the first error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeProbe {
    /// `"cuda"` or `"hip"`.
    pub runtime: &'static str,
    /// How the runtime was reached, e.g. `"cudarc (dynamic loading)"` or `"hip-sys (linked)"`.
    pub backend: String,
    /// The file that was loaded (a path when the loader tells us, else the soname); `None` when absent.
    pub library: Option<String>,
    /// The overall outcome.
    pub status: ProbeStatus,
    /// CUDA: the CUDA version the driver supports (`12.4`); HIP: `hipDriverGetVersion` (`5.2.21153`).
    pub driver_version: Option<String>,
    /// CUDA: the NVRTC version when NVRTC loads; HIP: `hipRuntimeGetVersion`.
    pub runtime_version: Option<String>,
    /// The devices the runtime sees.
    pub devices: Vec<RuntimeDevice>,
    /// The first error, mapped to its name and a fix.
    pub error: Option<RuntimeError>,
    /// Why the probe stopped or what it could not do, for people.
    pub note: Option<String>,
}

/// The outcome of probing one runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    /// The runtime's library could not be loaded.
    LibraryMissing,
    /// This build cannot load libraries at all (a fully static musl binary has no `dlopen`).
    Unsupported,
    /// The library loaded but sees no device (`hipErrorNoDevice`, `CUDA_ERROR_NO_DEVICE`, or 0 devices).
    NoDevice,
    /// The library loaded but a call or a device check failed.
    Error,
    /// At least one device, and every device check passed (or was skipped).
    Ok,
}

/// A runtime error code with its name, the runtime's message and a fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeError {
    /// The numeric code (`hipError_t` or `CUresult`).
    pub code: i64,
    /// Its name, e.g. `hipErrorNoDevice`; `unknown error N` when neither we nor the library know it.
    pub name: String,
    /// What the runtime says, or our description when the runtime only repeats the name.
    pub message: String,
    /// What a person can do about it.
    pub fix: String,
    /// The call that returned it, e.g. `hipGetDeviceCount`.
    pub call: String,
}

/// One device as the runtime sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RuntimeDevice {
    /// The runtime's device ordinal.
    pub index: u32,
    /// Marketing name from the runtime.
    pub name: Option<String>,
    /// PCI address as the runtime prints it (`0000:03:00.0`).
    pub pci_bus_id: Option<String>,
    /// AMD: gfx target from the KFD topology node at the same PCI address.
    pub gfx: Option<String>,
    /// NVIDIA: compute capability (`9.0`).
    pub compute_capability: Option<String>,
    /// Device memory in bytes.
    pub memory_total: Option<u64>,
    /// Free device memory in bytes when probed.
    pub memory_free: Option<u64>,
    /// Multiprocessors (NVIDIA SMs, AMD CUs or WGPs).
    pub multiprocessors: Option<u32>,
    /// Allocate, copy a pattern host→device→host, compare.
    pub round_trip: Option<Check>,
    /// CUDA: NVRTC-compiled vectorAdd launched and verified.
    pub kernel: Option<Check>,
    /// Values that could not be read, and why.
    pub notes: Vec<String>,
}

/// A device check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Pass, fail, or skip (with the reason in `detail`); private so that only the constructors below, which never
    /// warn, make one.
    status: Status,
    /// What was done or why it failed or was skipped.
    pub detail: String,
    /// The runtime error behind a failure.
    pub error: Option<RuntimeError>,
}

impl Check {
    /// Pass, fail, or skip (with the reason in `detail`); never warn.
    pub fn status(&self) -> Status {
        self.status
    }

    /// A passed check.
    pub fn pass(detail: impl Into<String>) -> Self {
        Check {
            status: Status::Pass,
            detail: detail.into(),
            error: None,
        }
    }

    /// A failed check, with the runtime error when there is one.
    pub fn fail(detail: impl Into<String>, error: Option<RuntimeError>) -> Self {
        Check {
            status: Status::Fail,
            detail: detail.into(),
            error,
        }
    }

    /// A check that could not run.
    pub fn skip(detail: impl Into<String>) -> Self {
        Check {
            status: Status::Skip,
            detail: detail.into(),
            error: None,
        }
    }

    /// True unless it failed.
    pub fn ok(&self) -> bool {
        self.status != Status::Fail
    }
}

/// Both runtimes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeReport {
    /// NVIDIA CUDA driver API.
    pub cuda: RuntimeProbe,
    /// AMD HIP runtime.
    pub hip: RuntimeProbe,
}

/// What to probe and where to look.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Where the KFD topology is read to name gfx targets (live `/`).
    pub root: HostRoot,
    /// `$ROCM_PATH`: its `lib/` is tried first for `libamdhip64`.
    pub rocm_path: Option<PathBuf>,
    /// A `libamdhip64` to load before any other candidate.
    pub hip_library: Option<PathBuf>,
    /// Run the memory round trip on every device.
    pub round_trip: bool,
    /// Compile and launch the CUDA vectorAdd kernel.
    pub kernel: bool,
    /// Bytes copied in the round trip.
    pub round_trip_bytes: usize,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            root: HostRoot::live(),
            rocm_path: None,
            hip_library: None,
            round_trip: true,
            kernel: true,
            round_trip_bytes: 1 << 20,
        }
    }
}

impl RuntimeOptions {
    /// The defaults plus `$ROCM_PATH` from the environment.
    pub fn from_env() -> Self {
        RuntimeOptions {
            rocm_path: std::env::var_os("ROCM_PATH")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            ..Default::default()
        }
    }
}

/// Probes CUDA, then HIP. Never panics: a panic inside a probe becomes an `Error` status.
pub fn probe_all(opts: &RuntimeOptions) -> RuntimeReport {
    if cfg!(target_env = "musl") {
        let unsupported = |runtime, backend| {
            let mut p = RuntimeProbe::stopped(runtime, backend, ProbeStatus::Unsupported);
            p.note = Some(STATIC_NOTE.to_string());
            p
        };
        return RuntimeReport {
            cuda: unsupported("cuda", cuda::backend_name()),
            hip: unsupported("hip", hip::backend_name()),
        };
    }
    let cuda = loaded::guard("cuda", cuda::backend_name(), || cuda::probe(opts));
    let hip = loaded::guard("hip", hip::backend_name(), || hip::probe(opts));
    RuntimeReport { cuda, hip }
}

/// The HIP runtime's device list for the host probe (`host::HipLister`): names and PCI ids only, no round trip.
/// Under WSL this is what names an AMD GPU when rocminfo does not. `Err` when the runtime could not be asked.
pub fn hip_seen() -> Result<crate::host::HipSeen, String> {
    if cfg!(target_env = "musl") {
        return Err(STATIC_NOTE.to_string());
    }
    let opts = RuntimeOptions {
        round_trip: false,
        kernel: false,
        ..RuntimeOptions::from_env()
    };
    let p = loaded::guard("hip", hip::backend_name(), || hip::probe(&opts));
    hip_seen_of(&p)
}

/// The device list a HIP probe gave, in the host probe's terms.
fn hip_seen_of(p: &RuntimeProbe) -> Result<crate::host::HipSeen, String> {
    if matches!(
        p.status,
        ProbeStatus::LibraryMissing | ProbeStatus::Unsupported
    ) {
        return Err(p
            .note
            .clone()
            .unwrap_or_else(|| "no HIP runtime library".into()));
    }
    Ok(crate::host::HipSeen {
        runtime_version: p.runtime_version.clone(),
        devices: p
            .devices
            .iter()
            .map(|d| crate::host::HipSeenDevice {
                name: d.name.clone(),
                pci_bus_id: d.pci_bus_id.clone(),
                memory_total: d.memory_total,
            })
            .collect(),
        error: p
            .error
            .as_ref()
            .map(|e| format!("{}: {}", e.name, e.message)),
    })
}

/// Why a musl build does not probe: the libraries it would load are glibc's.
const STATIC_NOTE: &str = "this rocmenv is a musl build, which cannot load the glibc-built libcuda or libamdhip64: use a glibc build for runtime probes (the portable one from scripts/build-portable runs on glibc ≥ 2.17)";

/// The process exit code for `rocmenv probe`, per DESIGN.md.
///
/// `0`: at least one runtime works (`Ok`) and no present runtime failed (`Error`); a runtime that
/// loads but sees no device beside a working one is not a failure (a stray `libamdhip64` on a CUDA
/// host). `1`: a runtime failed, or runtimes loaded but none sees a device. `3`: no runtime library
/// could be loaded at all (or this static build cannot load any), so nothing could be checked.
pub fn exit_code(report: &RuntimeReport) -> i32 {
    exit_code_of(&[report.cuda.status, report.hip.status])
}

/// The rule of [`exit_code`] on the statuses alone (also for a report read back from `rocmenv probe --json`).
pub fn exit_code_of(statuses: &[ProbeStatus]) -> i32 {
    let has = |s: ProbeStatus| statuses.contains(&s);
    if has(ProbeStatus::Error) {
        1
    } else if has(ProbeStatus::Ok) {
        0
    } else if has(ProbeStatus::NoDevice) {
        1
    } else {
        3
    }
}

impl RuntimeProbe {
    /// A probe that stopped before any device: library missing, no device, or an early error.
    pub(crate) fn stopped(runtime: &'static str, backend: String, status: ProbeStatus) -> Self {
        RuntimeProbe {
            runtime,
            backend,
            library: None,
            status,
            driver_version: None,
            runtime_version: None,
            devices: Vec::new(),
            error: None,
            note: None,
        }
    }

    /// Sets `Ok`, or `Error` with the first failed device check, from the devices' checks.
    pub(crate) fn settle(&mut self) {
        if self.devices.is_empty() {
            self.status = ProbeStatus::NoDevice;
            return;
        }
        let failed = self.devices.iter().find_map(|d| {
            [&d.round_trip, &d.kernel]
                .into_iter()
                .flatten()
                .find(|c| !c.ok())
                .map(|c| (d.index, c))
        });
        match failed {
            None => self.status = ProbeStatus::Ok,
            Some((index, check)) => {
                self.status = ProbeStatus::Error;
                self.error = self.error.take().or_else(|| check.error.clone());
                self.note = Some(format!("device {index}: {}", check.detail));
            }
        }
    }
}

#[cfg(test)]
mod tests;
