//! Node health: memory errors the GPUs counted (amdgpu RAS, NVIDIA ECC and row remapping), retired VRAM pages and XGMI
//! link errors (PCIe AER, next to the link check, is `aer.rs`). Each reads a counter the kernel or the
//! driver keeps, so a node that went bad since it was last checked fails here before a job runs on it.

use super::{gpu_label, Context, Finding, Status};
use crate::host::{AmdRas, Gpu, HostFacts, NvidiaMemory, NVIDIA_SMI_XML};
use crate::vendor::Vendor;

const AREA: &str = "health";

/// amdgpu's formula for the bad-page threshold: "typical ECC bad page rate is 1 bad page per 100MB VRAM"
/// (`RAS_BAD_PAGE_COVER`, `amdgpu_ras_validate_threshold`,
/// `torvalds/linux@d5e8ff5f7b2a41d503914d4896ed3c6b3befe933:drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c`).
const RAS_BAD_PAGE_COVER: u64 = 100 * 1024 * 1024;

/// Correctable memory errors per hour, averaged since boot, above which a GPU warns. rocmenv's choice: amdgpu logs
/// correctable errors as needing "no user action" and neither AMD nor NVIDIA publishes a rate (DCGM's own
/// `DCGM_LIMIT_MAX_SBE_RATE` is 10, marked a placeholder).
pub(super) const CE_PER_HOUR: f64 = 10.0;

/// NVIDIA's retired-page limits: DCGM fails a GPU at 63 retired pages and warns above 15
/// (`DCGM_LIMIT_MAX_RETIRED_PAGES`, `_SOFT_LIMIT`, same file).
const NV_RETIRED_FAIL: u64 = 63;
const NV_RETIRED_WARN: u64 = 15;

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let f = cx.facts;
    let mut out = Vec::new();
    out.extend(per_gpu(
        f,
        "health.amd-ecc",
        Vendor::Amd,
        ("RAS error counts", "no AMD GPU exposes amdgpu's ras/ error counters (RAS is on Instinct GPUs with ECC; consumer GPUs have none)"),
        |g| {
            let r = g.health.ras.as_ref()?;
            let dir = r.dir.as_deref()?;
            Some(amd_ecc(f, g, r, dir))
        },
    ));
    out.extend(per_gpu(
        f,
        "health.amd-bad-pages",
        Vendor::Amd,
        ("retired VRAM pages to count", "no AMD GPU exposes ras/gpu_vram_bad_pages (bad-page retirement is on Instinct GPUs with ECC)"),
        amd_bad_pages,
    ));
    out.extend(per_gpu(
        f,
        "health.amd-xgmi",
        Vendor::Amd,
        (
            "XGMI link counts",
            "no AMD GPU exposes XGMI error counters (ras/xgmi_wafl_err_count or xgmi_error)",
        ),
        |g| amd_xgmi(f, g),
    ));
    let why_none = if !cx.deep {
        format!("ECC, retired pages and row remapping of the NVIDIA GPUs need --deep (they come from `{NVIDIA_SMI_XML}`)")
    } else {
        f.why_unavailable(NVIDIA_SMI_XML)
            .map(str::to_string)
            .unwrap_or_else(|| format!("`{NVIDIA_SMI_XML}` listed none of the GPUs sysfs shows"))
    };
    let listed_any = f.nvidia_gpus().any(|g| g.health.nvidia.is_some());
    out.extend(per_gpu(
        f,
        "health.nvidia-memory",
        Vendor::Nvidia,
        ("ECC or row-remapping counts", &why_none),
        |g| match &g.health.nvidia {
            Some(m) => Some(nvidia_memory(g, m)),
            // The XML listed other GPUs but not this one: said, not left out.
            None if listed_any => Some(
                Finding::new(
                    "health.nvidia-memory",
                    AREA,
                    Status::Skip,
                    format!("{}: `{NVIDIA_SMI_XML}` does not list it", gpu_label(g)),
                )
                .subject(g.pci_address.clone()),
            ),
            None => None,
        },
    ));
    out
}

/// One finding per GPU of `vendor` that `judge` has data for; one skip saying `why_none` when it has none, or that
/// there is no GPU of the vendor, so no `what`.
fn per_gpu(
    f: &HostFacts,
    id: &'static str,
    vendor: Vendor,
    (what, why_none): (&str, &str),
    judge: impl Fn(&Gpu) -> Option<Finding>,
) -> Vec<Finding> {
    let got: Vec<Finding> = f
        .gpus
        .iter()
        .filter(|g| g.vendor == vendor)
        .filter_map(&judge)
        .collect();
    if got.is_empty() {
        let why = if f.gpus.iter().any(|g| g.vendor == vendor) {
            why_none.to_string()
        } else {
            format!("no {} GPU, so no {what}", vendor.label())
        };
        return vec![Finding::new(id, AREA, Status::Skip, why)];
    }
    got
}

/// `N unit` with the plural the count needs.
pub(super) fn count(n: u64, unit: &str) -> String {
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// Correctable errors since boot as a rate per `per` seconds, when the uptime is known.
pub(super) fn rate(n: u64, uptime: Option<f64>, per: f64) -> Option<f64> {
    uptime.map(|s| n as f64 / (s / per).max(1.0))
}

/// What could not be read, as one skip, or appended to a verdict's detail.
pub(super) fn with_unreadable(mut finding: Finding, unreadable: &[String]) -> Finding {
    if !unreadable.is_empty() {
        let note = format!("cannot read: {}", unreadable.join("; "));
        finding.detail = Some(match finding.detail.take() {
            Some(d) => format!("{d}; {note}"),
            None => note,
        });
    }
    finding
}

fn amd_ecc(f: &HostFacts, g: &Gpu, r: &AmdRas, dir: &str) -> Finding {
    const ID: &str = "health.amd-ecc";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    // XGMI link counts are health.amd-xgmi's.
    let blocks: Vec<_> = r.blocks.iter().filter(|b| b.block != "xgmi_wafl").collect();
    if blocks.is_empty() {
        let why = if r.unreadable.is_empty() {
            format!("{dir} has no *_err_count file besides XGMI's")
        } else {
            format!("cannot read: {}", r.unreadable.join("; "))
        };
        return Finding::new(ID, AREA, Status::Skip, format!("{label}: {why}")).subject(sub);
    }
    let bad: Vec<_> = blocks.iter().filter(|b| b.ue > 0).collect();
    if !bad.is_empty() {
        let ue: u64 = bad.iter().map(|b| b.ue).sum();
        let which = bad
            .iter()
            .map(|b| format!("{} {} in {}", b.block, b.ue, b.path))
            .collect::<Vec<_>>()
            .join(", ");
        let f = Finding::new(ID, AREA, Status::Fail, format!("{label}: {} ({which})", count(ue, "uncorrectable ECC error")))
            .subject(sub)
            .detail("an uncorrectable error corrupted data on this GPU since the driver loaded; work on it may have computed wrong results or crashed")
            .fix(format!("drain the node; read `sudo dmesg | grep -i -e amdgpu -e ras` and `amd-smi metric --ecc -g {}`, then reset or replace the GPU with your vendor", g.index));
        return with_unreadable(f, &r.unreadable);
    }
    let ce: u64 = blocks.iter().map(|b| b.ce).sum();
    let files = blocks
        .iter()
        .map(|b| b.path.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let per_hour = rate(ce, f.uptime_seconds, 3600.0);
    if per_hour.is_some_and(|r| r > CE_PER_HOUR) {
        let f = Finding::new(ID, AREA, Status::Warn, format!("{label}: {} since boot, {:.1} an hour (above {CE_PER_HOUR} an hour)", count(ce, "correctable ECC error"), per_hour.unwrap_or(0.0)))
            .subject(sub)
            .detail(format!("read from {files}; correctable errors are fixed by ECC, but a high rate often precedes uncorrectable ones and retired pages. The limit is rocmenv's choice: AMD publishes no rate"))
            .fix("watch the count (`amd-smi metric --ecc`); if it keeps climbing, plan to have the GPU checked");
        return with_unreadable(f, &r.unreadable);
    }
    let ce_note = match (ce, per_hour) {
        (0, _) => String::new(),
        (_, Some(h)) => format!(
            ", {} ({h:.1} an hour since boot)",
            count(ce, "correctable error")
        ),
        (_, None) => format!(
            ", {} (no uptime to make a rate of)",
            count(ce, "correctable error")
        ),
    };
    let f = Finding::new(
        ID,
        AREA,
        Status::Pass,
        format!(
            "{label}: no uncorrectable ECC errors in {} RAS blocks{ce_note}",
            blocks.len()
        ),
    )
    .subject(sub);
    with_unreadable(f, &r.unreadable)
}

/// The bad-page threshold the driver applies, and how it was found; `None` when retirement is off.
fn bad_page_threshold(param: Option<i64>, vram: Option<u64>) -> Option<(u64, String)> {
    let formula = |when: &str| {
        vram.map(|v| {
            (
                v / RAS_BAD_PAGE_COVER,
                format!(
                    "VRAM / 100 MiB, amdgpu's formula {when} (RAS_BAD_PAGE_COVER in amdgpu_ras.c)"
                ),
            )
        })
    };
    match param {
        Some(0) => None,
        Some(n) if n > 0 => Some((
            n as u64,
            format!("the module parameter bad_page_threshold={n}"),
        )),
        Some(n) => formula(&format!("for bad_page_threshold={n}")),
        None => formula("for the default bad_page_threshold (the parameter was not readable)"),
    }
}

fn amd_bad_pages(g: &Gpu) -> Option<Finding> {
    const ID: &str = "health.amd-bad-pages";
    let r = g.health.ras.as_ref()?;
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let Some(p) = &r.bad_pages else {
        let unread: Vec<&String> = r
            .unreadable
            .iter()
            .filter(|u| u.contains("gpu_vram_bad_pages"))
            .collect();
        let first = unread.first()?;
        return Some(
            Finding::new(
                ID,
                AREA,
                Status::Skip,
                format!("{label}: cannot read: {first}"),
            )
            .subject(sub),
        );
    };
    let n = p.total();
    let at_least = if p.truncated { "at least " } else { "" };
    let pages = format!(
        "{at_least}{} ({} reserved, {} pending, {} not reservable) in {}",
        count(n, "retired VRAM page"),
        p.reserved,
        p.pending,
        p.failed,
        p.path
    );
    let threshold = bad_page_threshold(r.bad_page_threshold_param, g.vram_bytes);
    if n == 0 {
        return Some(
            Finding::new(
                ID,
                AREA,
                Status::Pass,
                format!("{label}: no retired VRAM pages"),
            )
            .subject(sub),
        );
    }
    let rma_fix = format!(
        "drain the node and open an RMA with your vendor, quoting `amd-smi bad-pages -g {}`",
        g.index
    );
    Some(match threshold {
        Some((t, how)) if n >= t => Finding::new(ID, AREA, Status::Fail, format!("{label}: {pages}, at or past the driver's threshold of {t}"))
            .subject(sub)
            .detail(format!("threshold: {how}; at the threshold amdgpu marks the GPU bad and may refuse to initialise it after a reboot"))
            .fix(rma_fix),
        Some((t, how)) => Finding::new(ID, AREA, Status::Warn, format!("{label}: {pages}; the driver's threshold is {t}"))
            .subject(sub)
            .detail(format!("threshold: {how}; retired pages are memory the GPU no longer uses, and more follow as HBM wears"))
            .fix(format!("watch the count (`amd-smi bad-pages -g {}`); at {t} the GPU needs an RMA", g.index)),
        None => Finding::new(ID, AREA, Status::Warn, format!("{label}: {pages}"))
            .subject(sub)
            .detail("bad_page_threshold=0 (retirement off) or the VRAM size is unknown, so the driver's threshold cannot be computed")
            .fix(rma_fix),
    })
}

fn amd_xgmi(f: &HostFacts, g: &Gpu) -> Option<Finding> {
    const ID: &str = "health.amd-xgmi";
    let r = g.health.ras.as_ref()?;
    let wafl = r.blocks.iter().find(|b| b.block == "xgmi_wafl");
    if wafl.is_none() && r.xgmi_error.is_none() {
        return None;
    }
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let xgmi_file = format!("/sys/bus/pci/devices/{}/xgmi_error", g.pci_address);
    if let Some(w) = wafl.filter(|w| w.ue > 0) {
        return Some(Finding::new(ID, AREA, Status::Fail, format!("{label}: {} on its XGMI links ({})", count(w.ue, "uncorrectable error"), w.path))
            .subject(sub)
            .detail("an XGMI link between GPUs lost data; collectives across this hive are not reliable")
            .fix("drain the node; read `sudo dmesg | grep -i xgmi` and have the hive's GPUs and baseboard checked"));
    }
    if let Some(n) = r.xgmi_error.filter(|n| *n > 0) {
        return Some(Finding::new(ID, AREA, Status::Warn, format!("{label}: {} in {xgmi_file}", count(n, "XGMI link error")))
            .subject(sub)
            .detail("the driver counts link errors since the file was last read, and reading it clears the count")
            .fix("run `rocm-smi --showxgmierr` (or doctor) again after a job; errors that come back point at a link or baseboard"));
    }
    let ce = wafl.map_or(0, |w| w.ce);
    if let Some(h) = rate(ce, f.uptime_seconds, 3600.0).filter(|h| *h > CE_PER_HOUR) {
        return Some(Finding::new(ID, AREA, Status::Warn, format!("{label}: {} on its XGMI links, {h:.1} an hour since boot (above {CE_PER_HOUR})", count(ce, "correctable error")))
            .subject(sub)
            .detail("the limit is rocmenv's choice: AMD publishes no rate for XGMI correctable errors"));
    }
    let read: Vec<&str> = wafl
        .map(|w| w.path.as_str())
        .into_iter()
        .chain(r.xgmi_error.map(|_| xgmi_file.as_str()))
        .collect();
    Some(
        Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!("{label}: no uncorrectable XGMI errors"),
        )
        .subject(sub)
        .detail(format!("read {}", read.join(", "))),
    )
}

fn nvidia_memory(g: &Gpu, m: &NvidiaMemory) -> Finding {
    const ID: &str = "health.nvidia-memory";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let mut fail = Vec::new();
    let mut warn = Vec::new();
    if let Some(n) = m.volatile_uncorrectable.filter(|n| *n > 0) {
        fail.push(format!(
            "{} since the driver loaded",
            count(n, "uncorrectable ECC error")
        ));
    } else if let Some(n) = m.aggregate_uncorrectable.filter(|n| *n > 0) {
        warn.push(format!(
            "{} over the GPU's life (none since the driver loaded)",
            count(n, "uncorrectable ECC error")
        ));
    }
    if m.remap_failure == Some(true) {
        fail.push("a row remapping failed".to_string());
    }
    if m.remap_pending == Some(true) {
        warn.push("a row remapping is pending until the GPU is reset".to_string());
    }
    if m.retirement_pending == Some(true) {
        warn.push("a page retirement is pending until the GPU is reset".to_string());
    }
    match m.retired_pages {
        Some(n) if n >= NV_RETIRED_FAIL => fail.push(format!(
            "{} (DCGM's limit is {NV_RETIRED_FAIL})",
            count(n, "retired page")
        )),
        Some(n) if n > NV_RETIRED_WARN => warn.push(format!(
            "{} (DCGM warns above {NV_RETIRED_WARN})",
            count(n, "retired page")
        )),
        _ => {}
    }
    let detail = format!("from `{}`", m.source);
    if !fail.is_empty() {
        fail.extend(warn);
        return Finding::new(ID, AREA, Status::Fail, format!("{label}: {}", fail.join("; ")))
            .subject(sub)
            .detail(detail)
            .fix(format!("drain the node; `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER -i {}` shows the counts; a failed remap or uncorrectable errors after a reset mean an RMA", g.index));
    }
    if !warn.is_empty() {
        return Finding::new(ID, AREA, Status::Warn, format!("{label}: {}", warn.join("; ")))
            .subject(sub)
            .detail(detail)
            .fix(format!("drain the GPU and reset it (`sudo nvidia-smi -r -i {}`, or reboot) so the pending repair takes effect", g.index));
    }
    Finding::new(
        ID,
        AREA,
        Status::Pass,
        format!("{label}: no uncorrectable ECC errors, no pending or failed memory repairs"),
    )
    .subject(sub)
    .detail(detail)
}
