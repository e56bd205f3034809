//! `pcie.aer`, next to `pcie.link` in the topology area: the PCIe AER counters of each GPU and of the bridges above
//! it. The kernel counts an error at whichever end of the link saw it, so a GPU's own counters alone miss some.

use super::health::{count, rate, with_unreadable};
use super::{gpu_label, Finding, Status};
use crate::host::{AerDevice, AerFile, Gpu, HostFacts};

/// PCIe correctable errors per minute, averaged since boot, above which a link warns: NVIDIA's "8 replays per minute
/// is the maximum recommended" (`DCGM_LIMIT_MAX_PCIREPLAY_RATE`,
/// `NVIDIA/DCGM@28bfbd4c97413d4aec249cdd9543a67d24f95b78:common/DcgmGPUHardwareLimits.h`), applied to every
/// correctable AER error since replays are one of them.
const AER_COR_PER_MINUTE: f64 = 8.0;

/// One finding per GPU with AER counters; one skip when none has any.
pub(super) fn check(f: &HostFacts) -> Vec<Finding> {
    per_gpu_any(
        f,
        "no GPU, nor a bridge above one, shows AER counters (aer_dev_*: AER off or unsupported, a kernel before 4.19, or a tree without them)",
        |g| (!g.health.aer.is_empty()).then(|| aer_gpu(f, g)),
    )
}

fn per_gpu_any(
    f: &HostFacts,
    why_none: &str,
    judge: impl Fn(&Gpu) -> Option<Finding>,
) -> Vec<Finding> {
    let got: Vec<Finding> = f.gpus.iter().filter_map(judge).collect();
    if got.is_empty() {
        let why = if f.gpus.is_empty() {
            "no GPU, so no PCIe AER counters to read"
        } else {
            why_none
        };
        return vec![Finding::new("pcie.aer", "topology", Status::Skip, why)];
    }
    got
}

/// How a device in the chain is named: the GPU, or the bridge by its address.
fn who(d: &AerDevice) -> String {
    if d.is_gpu {
        "the GPU".into()
    } else {
        format!("upstream bridge {}", d.pci_address)
    }
}

fn kinds(file: &AerFile) -> String {
    if file.kinds.is_empty() {
        return file.path.clone();
    }
    let k = file
        .kinds
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{k}; {}", file.path)
}

fn aer_gpu(f: &HostFacts, g: &Gpu) -> Finding {
    const ID: &str = "pcie.aer";
    const AREA: &str = "topology";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let chain = &g.health.aer;
    let unreadable: Vec<String> = chain.iter().flat_map(|d| d.unreadable.clone()).collect();
    let hits = |pick: fn(&AerDevice) -> Option<&AerFile>| -> Vec<String> {
        chain
            .iter()
            .filter_map(|d| {
                pick(d)
                    .filter(|a| a.total > 0)
                    .map(|a| format!("{}: {} ({})", who(d), a.total, kinds(a)))
            })
            .collect()
    };
    let fatal = hits(|d| d.fatal.as_ref());
    let nonfatal = hits(|d| d.nonfatal.as_ref());
    let fix = format!("reseat the GPU and its riser or cable, check `sudo dmesg | grep -i aer` and `sudo lspci -vvv -s {}`; errors that return point at the slot, riser or GPU", g.pci_address);
    if !fatal.is_empty() {
        let f = Finding::new(ID, AREA, Status::Fail, format!("{label}: fatal PCIe AER errors since boot: {}", fatal.join("; ")))
            .subject(sub)
            .detail("a fatal AER error resets the link; the GPU may have dropped off the bus or lost in-flight work")
            .fix(fix);
        return with_unreadable(f, &unreadable);
    }
    if !nonfatal.is_empty() {
        let f = Finding::new(ID, AREA, Status::Warn, format!("{label}: non-fatal PCIe AER errors since boot: {}", nonfatal.join("; ")))
            .subject(sub)
            .detail("a non-fatal uncorrectable error lost a transaction on the link (the device and driver recovered it)")
            .fix(fix);
        return with_unreadable(f, &unreadable);
    }
    let cor: u64 = chain
        .iter()
        .filter_map(|d| d.correctable.as_ref())
        .map(|a| a.total)
        .sum();
    let per_min = rate(cor, f.uptime_seconds, 60.0);
    if per_min.is_some_and(|r| r > AER_COR_PER_MINUTE) {
        let f = Finding::new(ID, AREA, Status::Warn, format!("{label}: {} since boot, {:.1} a minute (above {AER_COR_PER_MINUTE}): {}", count(cor, "correctable PCIe AER error"), per_min.unwrap_or(0.0), hits(|d| d.correctable.as_ref()).join("; ")))
            .subject(sub)
            .detail("correctable errors are replayed by the link, costing bandwidth; NVIDIA's DCGM recommends at most 8 replays a minute")
            .fix(fix);
        return with_unreadable(f, &unreadable);
    }
    let where_ = match chain.iter().filter(|d| !d.is_gpu).count() {
        0 => "the GPU".to_string(),
        1 => "the GPU and the bridge above it".to_string(),
        n => format!("the GPU and the {n} bridges above it"),
    };
    let cor_note = match (cor, per_min) {
        (0, _) => String::new(),
        (_, Some(m)) => format!(
            ", {} ({m:.2} a minute since boot)",
            count(cor, "correctable error")
        ),
        (_, None) => format!(
            ", {} (no uptime to make a rate of)",
            count(cor, "correctable error")
        ),
    };
    let f = Finding::new(
        ID,
        AREA,
        Status::Pass,
        format!("{label}: no fatal or non-fatal PCIe AER errors on {where_}{cor_note}"),
    )
    .subject(sub);
    with_unreadable(f, &unreadable)
}
