//! The HIP probe over a small backend trait, so dlopen and hip-sys share one code path.
//!
//! Only ABI-stable calls are used: `hipRuntimeGetVersion`, `hipDriverGetVersion`,
//! `hipGetDeviceCount`, `hipSetDevice`, `hipDeviceGetName`, `hipDeviceGetPCIBusId`,
//! `hipDeviceTotalMem`, `hipMemGetInfo`, `hipMalloc`, `hipMemcpy`, `hipFree`, `hipGetErrorName`,
//! `hipGetErrorString`, and `hipDeviceGetAttribute` for one attribute whose value is the same in
//! HIP 5.2 and ROCm 6/7. `hipGetDeviceProperties` is avoided: its struct changed in ROCm 6.

mod api;
#[cfg(not(feature = "hip"))]
mod dl;
#[cfg(feature = "hip")]
mod linked;

#[cfg(test)]
pub(crate) use api::HipResult;
pub(crate) use api::{backend_name, HipApi, HIP_ERROR_NO_DEVICE};
pub use api::{
    HIP_ATTR_MULTIPROCESSOR_COUNT, HIP_MEMCPY_DEVICE_TO_HOST, HIP_MEMCPY_HOST_TO_DEVICE,
};
#[cfg(all(test, not(feature = "hip")))]
pub(crate) use dl::candidates;

use super::hip_errors::hip_error;
use super::loaded::{catch, compare, mib, pattern};
use super::{Check, ProbeStatus, RuntimeDevice, RuntimeOptions, RuntimeProbe};
use crate::host::HostRoot;
use crate::parse::kfd::parse_kfd_properties;

/// Probes HIP through `libamdhip64` loaded at run time.
#[cfg(not(feature = "hip"))]
pub(crate) fn probe(opts: &RuntimeOptions) -> RuntimeProbe {
    match dl::HipDl::load(opts) {
        Ok(api) => probe_with(&api, opts),
        Err(stopped) => *stopped,
    }
}

/// Probes HIP through hip-sys, linked at build time.
#[cfg(feature = "hip")]
pub(crate) fn probe(opts: &RuntimeOptions) -> RuntimeProbe {
    probe_with(&linked::HipLinked, opts)
}

/// Decodes `HIP_VERSION` (`major * 10^7 + minor * 10^5 + patch`): 50221153 is 5.2.21153.
pub(crate) fn hip_version(v: i32) -> String {
    if v <= 0 {
        return v.to_string();
    }
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// The probe proper, over any backend.
pub(crate) fn probe_with(api: &dyn HipApi, opts: &RuntimeOptions) -> RuntimeProbe {
    let mut p = RuntimeProbe::stopped("hip", api.backend(), ProbeStatus::Error);
    p.library = api.library();
    let err = |(code, call): (i32, &str)| {
        hip_error(
            code.into(),
            call,
            api.error_name(code),
            api.error_string(code),
        )
    };
    let mut notes: Vec<String> = api.load_note().into_iter().collect();
    match api.runtime_version() {
        Ok(v) => p.runtime_version = Some(hip_version(v)),
        Err(e) => notes.push(format!("runtime version: {}", err(e).name)),
    }
    match api.driver_version() {
        Ok(v) => p.driver_version = Some(hip_version(v)),
        Err(e) => notes.push(format!("driver version: {}", err(e).name)),
    }
    let count = match api.device_count() {
        Ok(n) => n,
        Err(e) => {
            p.status = if e.0 == HIP_ERROR_NO_DEVICE {
                ProbeStatus::NoDevice
            } else {
                ProbeStatus::Error
            };
            p.error = Some(err(e));
            p.note = (!notes.is_empty()).then(|| notes.join("; "));
            return p;
        }
    };
    if count <= 0 {
        notes.push(format!("hipGetDeviceCount returned {count} devices"));
    }
    let gfx = kfd_gfx_targets(&opts.root);
    for dev in 0..count.max(0) {
        let d = catch(|| probe_device(api, dev, opts, &gfx, &err)).unwrap_or_else(|panic| {
            RuntimeDevice {
                index: dev as u32,
                notes: vec![format!("the device probe panicked: {panic}")],
                round_trip: Some(Check::fail("the device probe panicked", None)),
                ..Default::default()
            }
        });
        p.devices.push(d);
    }
    p.note = (!notes.is_empty()).then(|| notes.join("; "));
    p.settle();
    p
}

fn probe_device(
    api: &dyn HipApi,
    dev: i32,
    opts: &RuntimeOptions,
    gfx: &[(PciAddress, Result<String, String>)],
    err: &dyn Fn((i32, &'static str)) -> super::RuntimeError,
) -> RuntimeDevice {
    let mut d = RuntimeDevice {
        index: dev as u32,
        ..Default::default()
    };
    let mut note = |what: &str, e| d.notes.push(format!("{what}: {}", err(e).name));
    let set = api.set_device(dev);
    match api.device_name(dev) {
        Ok(n) => d.name = Some(n),
        Err(e) => note("name", e),
    }
    match api.pci_bus_id(dev) {
        Ok(id) => d.pci_bus_id = Some(id),
        Err(e) => note("PCI bus id", e),
    }
    match api.total_mem(dev) {
        Ok(b) => d.memory_total = Some(b),
        Err(e) => note("total memory", e),
    }
    match api.multiprocessor_count(dev) {
        Ok(n) => d.multiprocessors = u32::try_from(n).ok(),
        Err(e) => note("multiprocessors", e),
    }
    if set.is_ok() {
        match api.mem_info() {
            Ok((free, _)) => d.memory_free = Some(free),
            Err(e) => note("free memory", e),
        }
    }
    let addr = d.pci_bus_id.as_deref().and_then(PciAddress::parse);
    match addr.and_then(|a| gfx.iter().find(|(g, _)| *g == a)) {
        Some((_, Ok(name))) => d.gfx = Some(name.clone()),
        Some((_, Err(why))) => d.notes.push(format!("gfx target: {why}")),
        None => d.notes.push(
            "gfx target: no KFD topology node at this PCI address (/sys/class/kfd/kfd/topology)"
                .to_string(),
        ),
    }
    if !opts.round_trip {
        return d;
    }
    d.round_trip = Some(match set {
        Err(e) => Check::fail("hipSetDevice failed", Some(err(e))),
        Ok(()) => {
            let sent = pattern(opts.round_trip_bytes);
            let mut back = vec![0u8; sent.len()];
            match api.round_trip(&sent, &mut back) {
                Err(e) => Check::fail(format!("{} failed", e.1), Some(err(e))),
                Ok(()) => match compare(&sent, &back) {
                    Ok(()) => Check::pass(format!(
                        "{} copied host→device→host and matched",
                        mib(sent.len())
                    )),
                    Err(why) => Check::fail(format!("data came back changed: {why}"), None),
                },
            }
        }
    });
    d
}

/// A PCI address compared by value, so `0000:0c:00.0` matches `0000:0C:00.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PciAddress {
    domain: u32,
    bus: u8,
    device: u8,
    function: u8,
}

impl PciAddress {
    /// Parses `DDDD:BB:DD.F` (any domain width, any hex case).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let (rest, function) = s.trim().rsplit_once('.')?;
        let mut parts = rest.rsplitn(3, ':');
        let device = u8::from_str_radix(parts.next()?, 16).ok()?;
        let bus = u8::from_str_radix(parts.next()?, 16).ok()?;
        let domain = parts
            .next()
            .map_or(Some(0), |d| u32::from_str_radix(d, 16).ok())?;
        Some(PciAddress {
            domain,
            bus,
            device,
            function: u8::from_str_radix(function, 16).ok()?,
        })
    }
}

/// Every GPU node of the KFD topology: its PCI address and gfx target (or why there is none).
pub(crate) fn kfd_gfx_targets(root: &HostRoot) -> Vec<(PciAddress, Result<String, String>)> {
    const NODES: &str = "/sys/class/kfd/kfd/topology/nodes";
    let Ok(nodes) = root.list(NODES) else {
        return Vec::new();
    };
    nodes
        .iter()
        .filter_map(|n| {
            let text = root.read_text(&format!("{NODES}/{n}/properties")).ok()?;
            let node = parse_kfd_properties(&text);
            let addr = PciAddress::parse(&node.bdf()?)?;
            let gfx = match node.gfx() {
                Ok(Some(g)) => Ok(g.to_string()),
                Ok(None) => return None,
                Err(e) => Err(e.to_string()),
            };
            Some((addr, gfx))
        })
        .collect()
}
