//! Kernel and distribution against the target ROCm release.

use super::{Context, Finding, Status};
use crate::host::OsFacts;
use crate::matrix::{DistroSupport, HostGpu, KernelKind, Matrices, RocmRelease};

const AREA: &str = "system";

/// How a host's distro matched a release's list.
pub(crate) enum DistroMatch<'m> {
    /// Listed as is (or by major version, as Rocky `9.6` against `9`); the host's GPUs the row leaves out
    /// (AMD lists some OS versions for some GPU models or targets only).
    Listed(&'m DistroSupport, Vec<HostGpu<'m>>),
    /// A derivative (Linux Mint, Pop!_OS) of a listed distro.
    Derived(&'m DistroSupport, String),
    /// The distro is listed, but not this version.
    OtherVersions(Vec<&'m DistroSupport>),
    /// Not listed at all.
    NotListed,
}

/// Ubuntu codenames → versions, for derivatives that say which Ubuntu they are built on.
fn ubuntu_for_codename(c: &str) -> Option<&'static str> {
    Some(match c {
        "focal" => "20.04",
        "jammy" => "22.04",
        "noble" => "24.04",
        _ => return None,
    })
}

pub(crate) fn match_distro<'m>(
    r: &'m RocmRelease,
    os: &OsFacts,
    ubuntu_codename: Option<&str>,
    gpus: &[HostGpu<'m>],
) -> DistroMatch<'m> {
    let id = os.id.as_deref().unwrap_or("");
    let vid = os.version_id.as_deref().unwrap_or("");
    // One rule for versions (SLES `15-SP5` is os-release `15.5`, `rocky 9` covers `9.6`): RocmRelease::distro_for,
    // which also picks the row of the host's GPU class where the release splits support by GPU.
    if let Some((d, left_out)) = r.distro_for(id, vid, gpus) {
        return DistroMatch::Listed(d, left_out);
    }
    let same_id: Vec<&DistroSupport> = r.distros.iter().filter(|d| d.id == id).collect();
    if !same_id.is_empty() {
        return DistroMatch::OtherVersions(same_id);
    }
    if os.id_like.iter().any(|l| l == "ubuntu") {
        if let Some(v) = ubuntu_codename.and_then(ubuntu_for_codename) {
            if let Some((d, _)) = r.distro_for("ubuntu", v, gpus) {
                return DistroMatch::Derived(
                    d,
                    format!("built on Ubuntu {v} ({})", ubuntu_codename.unwrap_or("")),
                );
            }
        }
    }
    // Rebuilds (AlmaLinux, CentOS Stream, …) share VERSION_ID numbering with the distro they follow.
    for like in &os.id_like {
        if let Some((d, _)) = r.distro_for(like, vid, gpus) {
            return DistroMatch::Derived(d, format!("a rebuild of {like} {}", d.version));
        }
    }
    DistroMatch::NotListed
}

fn os_name(os: &OsFacts) -> String {
    os.pretty_name.clone().unwrap_or_else(|| {
        format!(
            "{} {}",
            os.id.as_deref().unwrap_or("?"),
            os.version_id.as_deref().unwrap_or("")
        )
    })
}

fn distro_list(r: &RocmRelease) -> String {
    r.distros
        .iter()
        .map(|d| format!("{} {}", d.id, d.version))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kernel_list(d: &DistroSupport) -> String {
    d.kernels
        .iter()
        .map(|k| {
            let kind = match k.kind {
                KernelKind::Ga => "GA",
                KernelKind::Hwe => "HWE",
                KernelKind::Uek => "UEK",
                KernelKind::Oem => "OEM",
            };
            format!("{} {kind}", k.series)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compresses release versions into a readable list.
pub(crate) fn versions_text(vs: &[String]) -> String {
    match vs.len() {
        0 => "none".into(),
        1..=4 => vs.join(", "),
        n => format!("{}, {} … {} ({n} releases)", vs[0], vs[1], vs[n - 1]),
    }
}

/// Production releases that list this distro (for the host's GPUs) and kernel series.
fn releases_supporting(
    m: &Matrices,
    os: &OsFacts,
    codename: Option<&str>,
    series: Option<&str>,
    gpus: &[HostGpu],
) -> Vec<String> {
    m.production()
        .filter(|r| match match_distro(r, os, codename, gpus) {
            DistroMatch::Listed(d, left_out) if left_out.is_empty() => {
                series.is_none_or(|s| d.kernels.iter().any(|k| k.major_minor() == s))
            }
            DistroMatch::Derived(d, _) => {
                series.is_none_or(|s| d.kernels.iter().any(|k| k.major_minor() == s))
            }
            _ => false,
        })
        .map(|r| r.version.to_string())
        .collect()
}

/// The host's AMD GPUs with a known target, each model (or, model unknown, each target) once: the OS and kernel
/// rows judge each by its model, then its target.
fn host_gpus<'m>(cx: &Context<'m>) -> Vec<HostGpu<'m>> {
    let mut out: Vec<HostGpu<'m>> = Vec::new();
    for g in cx.facts.amd_gpus() {
        let Some(t) = g.gfx else { continue };
        let h = cx.matrices.host_gpu(&g.device_id, t);
        if !out.iter().any(|x| x.same(&h)) {
            out.push(h);
        }
    }
    out
}

fn join_gpus(t: &[HostGpu]) -> String {
    t.iter().map(|g| g.label()).collect::<Vec<_>>().join(", ")
}

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    vec![check_os(cx), check_kernel(cx)]
}

fn codename(cx: &Context) -> Option<String> {
    cx.facts
        .os
        .as_ref()
        .and_then(|o| o.ubuntu_codename.clone().or(o.codename.clone()))
}

fn check_os(cx: &Context) -> Finding {
    const ID: &str = "os.rocm-supported";
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "distribution against ROCm: not checked, the target is CUDA",
        );
    };
    let r = t.release;
    let Some(os) = &cx.facts.os else {
        let why = cx.facts.why_unavailable("os").unwrap_or("unknown");
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("the distribution is unknown: {why}"),
        );
    };
    let name = os_name(os);
    let code = codename(cx);
    let gpus = host_gpus(cx);
    match match_distro(r, os, code.as_deref(), &gpus) {
        DistroMatch::Listed(d, left_out) if !left_out.is_empty() => {
            // Supported for other GPUs only: the host passes only for the GPUs it has.
            let for_these: Vec<String> = r
                .distros
                .iter()
                .filter(|x| left_out.iter().all(|g| x.covers(g)))
                .map(|x| format!("{} {}", x.id, x.version))
                .fold(Vec::new(), |mut v, x| {
                    if !v.contains(&x) {
                        v.push(x);
                    }
                    v
                });
            let others = releases_supporting(cx.matrices, os, code.as_deref(), None, &gpus);
            Finding::new(ID, AREA, Status::Fail, format!("{name} is supported by ROCm {} for other GPUs only, not for this host's {}", r.version, join_gpus(&left_out)))
                .detail(format!("ROCm {} lists {} {} for {}{}", r.version, d.id, d.version, d.gpus_text(), d.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default()))
                .fix(match (for_these.is_empty(), others.last()) {
                    (false, _) => format!("use an OS that ROCm {} lists for {}: {}", r.version, join_gpus(&left_out), for_these.join(", ")),
                    (true, Some(v)) => format!("check against a release that lists {name} for these GPUs: --target rocm-{v}"),
                    (true, None) => "run on a distribution AMD lists for these GPUs".into(),
                })
        }
        DistroMatch::Listed(d, _) => {
            if let (Some(p), false) = (&os.point_release, d.point_releases.is_empty()) {
                if !d.point_releases.contains(p) {
                    let listed = d.point_releases.join(", ");
                    // Numeric order (22.04.10 after 22.04.9): a newer point release only adds fixes.
                    let key = |v: &str| v.split('.').map(|x| x.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
                    if d.point_releases.iter().any(|l| key(p) > key(l)) {
                        return Finding::new(ID, AREA, Status::Pass, format!("{name} is supported by ROCm {} (point release {p} is newer than the listed {listed})", r.version))
                            .detail("ROCm is tested on the listed point releases; a newer one carries their fixes and is expected to work");
                    }
                    return Finding::new(ID, AREA, Status::Warn, format!("{name}: point release {p} is older than those listed for ROCm {} ({listed})", r.version))
                        .detail("ROCm is tested on the listed point releases; older ones may lack kernel and firmware fixes")
                        .fix("update the system to the newest point release (sudo apt update && sudo apt full-upgrade)");
                }
            }
            let mut f = Finding::new(ID, AREA, Status::Pass, format!("{name} is supported by ROCm {}", r.version));
            if let Some(n) = &d.note {
                f = f.detail(n.clone());
            }
            if d.limits_gpus() {
                // The pass holds for these GPUs only: say so in text output too.
                f = f
                    .detail(format!("for {}{}", d.gpus_text(), d.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default()))
                    .conditional();
            }
            f
        }
        DistroMatch::Derived(d, how) => Finding::new(ID, AREA, Status::Warn, format!("{name} is not listed for ROCm {}; it is {how}, which ROCm {} lists", r.version, r.version))
            .detail(format!("supported kernels there: {}; AMD does not test derivatives", kernel_list(d)))
            .fix(format!("expect to install ROCm with the {} {} packages; report issues against that base", d.id, d.version)),
        DistroMatch::OtherVersions(ds) => {
            let vs: Vec<String> = ds.iter().map(|d| d.version.clone()).collect();
            let others = releases_supporting(cx.matrices, os, code.as_deref(), None, &gpus);
            Finding::new(ID, AREA, Status::Fail, format!("{name} is not supported by ROCm {} (supported versions: {})", r.version, vs.join(", ")))
                .detail(format!("ROCm releases that list this version: {}", versions_text(&others)))
                .fix(if others.is_empty() {
                    format!("move to a supported version ({}), or run in a container on a supported host", vs.join(", "))
                } else {
                    format!("upgrade the OS to {} {}, or check against a release that lists it: --target rocm-{}", ds[0].id, vs.join(" or "), others.last().map(String::as_str).unwrap_or(""))
                })
        }
        DistroMatch::NotListed => Finding::new(ID, AREA, Status::Fail, format!("{name} is not a supported distribution for ROCm {}", r.version))
            .detail(format!("supported: {}", distro_list(r)))
            .fix("use a listed distribution on the host; containers can carry any userspace, but the kernel and amdgpu driver come from the host"),
    }
}

fn check_kernel(cx: &Context) -> Finding {
    const ID: &str = "kernel.rocm-supported";
    let Some(k) = &cx.facts.kernel else {
        if cx.target.rocm.is_none() {
            return Finding::new(
                ID,
                AREA,
                Status::Skip,
                "kernel against ROCm: not checked, the target is CUDA",
            );
        }
        let why = cx.facts.why_unavailable("kernel").unwrap_or("unknown");
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("the kernel release is unknown: {why}"),
        );
    };
    judge_kernel(cx, ID, AREA, k, "kernel")
}

/// A kernel (the running one, or the one that boots next) against the target's ROCm release: one rule for both.
/// `what` starts each summary (`kernel`, `next-boot kernel`).
pub(super) fn judge_kernel(
    cx: &Context,
    id: &'static str,
    area: &'static str,
    k: &crate::host::KernelFacts,
    what: &str,
) -> Finding {
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            id,
            area,
            Status::Skip,
            format!("{what} against ROCm: not checked, the target is CUDA"),
        );
    };
    let r = t.release;
    if cx.facts.wsl {
        return Finding::new(id, area, Status::Skip, format!("{what} {} is WSL2's: ROCm on WSL uses the Windows driver, so the Linux kernel matrix does not apply", k.release))
            .fix("check the Windows AMD Software (Adrenalin) driver against AMD's ROCm-on-WSL compatibility table");
    }
    let Some(os) = &cx.facts.os else {
        return Finding::new(
            id,
            area,
            Status::Skip,
            format!(
                "{what} {}: the distribution is unknown, and kernels are listed per distribution",
                k.release
            ),
        );
    };
    let code = codename(cx);
    let gpus = host_gpus(cx);
    let d = match match_distro(r, os, code.as_deref(), &gpus) {
        DistroMatch::Listed(d, _) | DistroMatch::Derived(d, _) => d,
        _ => return Finding::new(id, area, Status::Skip, format!("{what} {}: {} is not listed for ROCm {}, so no kernel list applies (see os.rocm-supported)", k.release, os_name(os), r.version)),
    };
    if let Some(ks) = d.kernels.iter().find(|ks| ks.major_minor() == k.series) {
        let kind = kernel_list(&DistroSupport {
            kernels: vec![ks.clone()],
            ..d.clone()
        });
        return Finding::new(
            id,
            area,
            Status::Pass,
            format!(
                "{what} {} ({kind}) is supported on {} {} by ROCm {}",
                k.release, d.id, d.version, r.version
            ),
        );
    }
    let others = releases_supporting(cx.matrices, os, code.as_deref(), Some(&k.series), &gpus);
    let mut f = Finding::new(id, area, Status::Fail, format!("{what} {} ({} series) is not supported on {} {} by ROCm {} (supported: {})", k.release, k.series, d.id, d.version, r.version, kernel_list(d)))
        .detail(format!("amdgpu-dkms may fail to build against an unlisted kernel. ROCm releases that list {} {} with kernel {}: {}", d.id, d.version, k.series, versions_text(&others)));
    let boot = match d.id.as_str() {
        "ubuntu" => {
            let hwe = d.kernels.iter().find(|k| k.kind == KernelKind::Hwe);
            match hwe {
                Some(h) => format!("install and boot a listed kernel: sudo apt install linux-generic (GA) or linux-generic-hwe-{} ({} HWE)", d.version, h.series),
                None => "install and boot the GA kernel: sudo apt install linux-generic".into(),
            }
        }
        _ => format!("boot a listed kernel ({})", kernel_list(d)),
    };
    f = f.fix(match others.last() {
        Some(v) => format!("{boot}, or target a release that lists it: --target rocm-{v}"),
        None => boot,
    });
    f
}
