//! User space: the installed ROCm against the target; CUDA toolkits against the driver.

use super::{Context, Finding, Status};

const AREA: &str = "userspace";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    // No fix installs ROCm on a host whose GPUs are all another vendor's (gpu.vendor fails that target).
    let rocm = if cx.plan.mismatch.is_some()
        && cx.target.rocm.is_some()
        && cx.facts.rocm_installs.is_empty()
    {
        Finding::new(
            "rocm.installed",
            AREA,
            Status::Skip,
            "ROCm user space: not needed, no AMD GPU",
        )
    } else {
        rocm(cx)
    };
    vec![rocm, cuda(cx)]
}

fn rocm(cx: &Context) -> Finding {
    const ID: &str = "rocm.installed";
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "ROCm user space: not checked, no ROCm target",
        );
    };
    let r = t.release;
    let installs = &cx.facts.rocm_installs;
    let Some(primary) = &cx.facts.rocm else {
        if installs.is_empty() {
            return Finding::new(ID, AREA, Status::Warn, "no ROCm user space under /opt/rocm*")
                .detail("containers bring their own ROCm, so only host-side work (rocminfo, building HIP code) needs it")
                .fix(format!("for host work: install ROCm {} ({})", r.version, r.install_how()));
        }
        return Finding::new(ID, AREA, Status::Warn, format!("ROCm installs found ({}) but /opt/rocm points at none of them", installs.iter().map(|i| i.path.as_str()).collect::<Vec<_>>().join(", ")))
            .fix("point /opt/rocm at the install to use (update-alternatives --config rocm on newer releases)");
    };
    let all = installs
        .iter()
        .map(|i| format!("{} ({})", i.version, i.path))
        .collect::<Vec<_>>()
        .join(", ");
    // The stream says which layout and packages the install uses (`/opt/rocm/core-X.Y`, amdrocm-*).
    let stream = |s: &str| {
        if s == "core-sdk" {
            " (ROCm Core SDK)"
        } else {
            ""
        }
    };
    let Some(v) = primary.version.value().cloned() else {
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!(
                "ROCm at {} reports version `{}`",
                primary.path, primary.version
            ),
        );
    };
    // Under WSL, AMD's WSL release of the target's series is the install to have: the Linux one does not run there.
    let wsl_release = cx.facts.wsl && cx.matrices.rocm.wsl.iter().any(|w| w.release == v);
    if wsl_release && v.major() == r.version.major() && v.minor() == r.version.minor() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "ROCm {v}, AMD's ROCm-on-WSL release, is installed at {}; the Linux tables of its series are {}'s",
                primary.path, r.version
            ),
        );
    }
    if v == r.version {
        let mut f = Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "ROCm {v}{} is installed at {}",
                stream(primary.stream),
                primary.path
            ),
        );
        if installs.len() > 1 {
            f = f.detail(format!("side by side: {all}"));
        }
        return f;
    }
    let same_series = v.major() == r.version.major() && v.minor() == r.version.minor();
    // Advice names the installed release exactly (never its series, which would pick another release).
    let check_installed = check_installed(cx, &v);
    let target_stream = r.stream.as_str();
    let streams = if target_stream != primary.stream {
        format!(
            "; the install is of the {} stream, the target of the {target_stream} stream",
            primary.stream
        )
    } else {
        String::new()
    };
    Finding::new(ID, AREA, if same_series { Status::Pass } else { Status::Warn }, format!("ROCm {v}{} is installed at {}; the target is {}", stream(primary.stream), primary.path, r.version))
        .detail(format!("installs: {all}{streams}. Containers bring their own user space; host tools and HIP builds use this one"))
        .fix(format!("to match the target on the host: install ROCm {} ({}, into {}){check_installed}", r.version, r.install_how(), r.install_prefix()))
}

/// The end of `rocm.installed`'s advice: how to check against the installed release, named exactly.
fn check_installed(cx: &Context, v: &crate::version::Version) -> String {
    if cx.matrices.rocm.releases.iter().any(|x| x.version == *v) {
        format!(", or check against the installed one: --target rocm-{v}")
    } else {
        let series: Vec<String> = cx
            .matrices
            .rocm
            .releases
            .iter()
            .filter(|x| x.version.major() == v.major() && x.version.minor() == v.minor())
            .map(|x| x.version.to_string())
            .collect();
        let what = match cx.matrices.rocm.wsl.iter().any(|w| w.release == *v) {
        true => format!("is AMD's ROCm-on-WSL release (`rocmenv matrix rocm {v}`), not in the matrices' Linux tables"),
        false => "itself is not in the matrices".to_string(),
    };
        format!(
            "; the installed ROCm {v} {what} ({})",
            if series.is_empty() {
                format!("nor is any {} release", v.short())
            } else {
                format!("they list {} of its series", series.join(", "))
            }
        )
    }
}

fn cuda(cx: &Context) -> Finding {
    const ID: &str = "cuda.toolkit";
    let Some(c) = &cx.facts.cuda else {
        if cx.facts.nvidia_gpus().next().is_none() {
            return Finding::new(ID, AREA, Status::Skip, "no NVIDIA GPU and no CUDA toolkit");
        }
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "no CUDA toolkit under /usr/local/cuda* (containers bring their own)",
        );
    };
    let Some(driver) = cx.facts.nvidia_driver.as_ref().map(|d| d.version.clone()) else {
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!(
                "CUDA {} is installed at {} but no NVIDIA driver is loaded",
                c.version, c.path
            ),
        );
    };
    let short = c
        .version
        .as_str()
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".");
    let Some(rel) = cx
        .matrices
        .cuda_release(c.version.as_str())
        .or_else(|| cx.matrices.cuda_release(&short))
    else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("CUDA {} at {} is not in cuda.yaml", c.version, c.path),
        );
    };
    if driver >= rel.min_driver_linux {
        Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "CUDA {} at {} runs on driver {driver} (needs ≥ {})",
                c.version, c.path, rel.min_driver_linux
            ),
        )
    } else {
        Finding::new(ID, AREA, Status::Warn, format!("CUDA {} at {} needs driver ≥ {}; driver {driver} runs it only through minor-version compatibility", c.version, c.path, rel.min_driver_linux))
            .fix(format!("upgrade the driver to ≥ {}", rel.min_driver_linux))
    }
}
