//! The system around the GPUs: kernel, distribution, CPU and memory, and the container runtimes' configuration.

use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::parse;

pub(super) fn probe_kernel(root: &HostRoot, f: &mut HostFacts) {
    let release = match root.read_value("/proc/sys/kernel/osrelease") {
        Ok(r) => Ok(r),
        Err(e) => root
            .read_text("/proc/version")
            .ok()
            .and_then(|v| parse::kernel::kernel_release_from_proc_version(&v))
            .ok_or(e),
    };
    match release {
        Ok(r) => match parse::kernel::parse_kernel_release(&r) {
            Ok(k) => {
                f.kernel = Some(KernelFacts {
                    series: k.series(),
                    version: k.version.to_string(),
                    flavour: k.flavour.clone(),
                    release: k.release.clone(),
                })
            }
            Err(e) => f.unavailable("kernel", e.to_string()),
        },
        Err(e) => f.unavailable("kernel", e.to_string()),
    }
}

pub(super) fn probe_os(root: &HostRoot, f: &mut HostFacts) {
    // os-release(5): /etc/os-release first, /usr/lib/os-release when it does not exist. The reason given is the
    // one of the file that was there, so a FIFO or bad bytes in either is named.
    let text = match root.read_text("/etc/os-release") {
        Ok(t) => Ok((t, "/etc/os-release")),
        Err(e) if e.is_missing() => match root.read_text("/usr/lib/os-release") {
            Ok(t) => Ok((t, "/usr/lib/os-release")),
            Err(e2) if e2.is_missing() => Err(format!("{e} (nor /usr/lib/os-release)")),
            Err(e2) => Err(e2.to_string()),
        },
        Err(e) => Err(e.to_string()),
    };
    match text {
        Ok((t, path)) => {
            let os = parse::os_release::parse_os_release(&t);
            if os.id.is_none() {
                f.unavailable("os", format!("{path} has no ID"));
            } else {
                f.os = Some(OsFacts {
                    point_release: os.point_release(),
                    id: os.id.clone(),
                    id_like: os.id_like.clone(),
                    version_id: os.version_id.clone(),
                    pretty_name: os.pretty_name.clone(),
                    codename: os.version_codename.clone(),
                    ubuntu_codename: os.ubuntu_codename.clone(),
                });
            }
        }
        Err(why) => f.unavailable("os", why),
    }
}

/// `/proc/cpuinfo` is about 2.5 KiB a logical CPU on x86 (the flags line), so 16 MiB holds thousands of CPUs.
const CPUINFO_CAP: u64 = 16 << 20;

pub(super) fn probe_system(root: &HostRoot, f: &mut HostFacts) {
    if root.is_live() {
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
        f.memory_bytes = Some(sys.total_memory()).filter(|m| *m > 0);
        f.cpu = Some(CpuFacts {
            model: sys
                .cpus()
                .first()
                .map(|c| c.brand().trim().to_string())
                .filter(|s| !s.is_empty()),
            logical_cores: sys.cpus().len(),
        });
        return;
    }
    match root.read_text("/proc/meminfo") {
        Ok(t) => {
            f.memory_bytes = t.lines().find_map(|l| {
                let rest = l.strip_prefix("MemTotal:")?;
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                kb.checked_mul(1024)
            })
        }
        Err(e) => f.unavailable("memory", e.to_string()),
    }
    match root.read_head("/proc/cpuinfo", CPUINFO_CAP) {
        Ok(head) => {
            if head.truncated {
                f.unavailable(
                    "cpu cores",
                    "/proc/cpuinfo: is larger than 16 MiB: only the processors in its first 16 MiB are counted",
                );
            }
            let t = head.text;
            let cores = t.lines().filter(|l| l.starts_with("processor")).count();
            let model = t.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_string())
            });
            f.cpu = Some(CpuFacts {
                model,
                logical_cores: cores,
            });
        }
        Err(e) => f.unavailable("cpu", e.to_string()),
    }
}

pub(super) fn probe_container_config(root: &HostRoot, f: &mut HostFacts) {
    if let Ok(t) = root.read_text("/etc/docker/daemon.json") {
        match serde_json::from_str::<serde_json::Value>(&t) {
            Ok(v) => {
                if let Some(r) = v.get("runtimes").and_then(|r| r.as_object()) {
                    f.container.docker_runtimes = r.keys().cloned().collect();
                }
                f.container.docker_default_runtime = v
                    .get("default-runtime")
                    .and_then(|s| s.as_str())
                    .map(str::to_string);
            }
            Err(e) => f.unavailable(
                "docker daemon.json",
                format!("/etc/docker/daemon.json is not JSON: {e}"),
            ),
        }
    }
    for dir in ["/etc/cdi", "/var/run/cdi"] {
        let Ok(names) = root.list(dir) else { continue };
        for n in names
            .iter()
            .filter(|n| n.ends_with(".yaml") || n.ends_with(".json"))
        {
            let path = format!("{dir}/{n}");
            let kind = root.read_text(&path).ok().and_then(|t| cdi_kind(&t));
            f.container.cdi_specs.push(CdiSpec { path, kind });
        }
    }
}

/// The `kind` of a CDI spec, YAML or JSON (JSON is YAML).
pub(super) fn cdi_kind(text: &str) -> Option<String> {
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).ok()?;
    v.get("kind")?.as_str().map(str::to_string)
}
