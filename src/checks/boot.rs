//! The boot: kernel parameters and tuning AMD's guides ask for, the kernel that boots next and its GPU module,
//! Secure Boot against out-of-tree modules, and loaded firmware against `matrices/firmware.yaml`.

use super::{gpu_label, Context, Finding, Status};
use crate::gfx::GfxTarget;
use crate::host::{HostFacts, KernelModules};

const AREA: &str = "boot";

/// AMD's MI300X system optimization guide: GRUB settings (`iommu=pt`, `pci=realloc=off`, `intel_iommu=on` on Intel
/// hosts) and `kernel.numa_balancing=0`. Rendered at
/// https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi300x.html.
pub const MI300X_GUIDE: &str =
    "ROCm/ROCm@d553860f0ae5feec361b3485a3d2e7d6ab5c8d00:docs/how-to/system-optimization/mi300x.rst";

/// The targets that guide is about: the MI300 series.
const MI300X_GUIDE_GFX: [&str; 1] = ["gfx942"];

/// ROCm/ROCm#5595: `amdgpu.gttsize` is deprecated, the GTT size now comes from `ttm.pages_limit`.
const GTTSIZE_ISSUE: &str = "https://github.com/ROCm/ROCm/issues/5595";

/// ROCm/ROCm#4328: amdgpu-dkms installed but not loading under Secure Boot.
const SECURE_BOOT_ISSUE: &str = "https://github.com/ROCm/ROCm/issues/4328";

/// The UEFI variable doctor reads for Secure Boot.
const SECURE_BOOT_FILE: &str = crate::host::SECURE_BOOT_VAR;

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let mut out = vec![
        check_iommu(cx),
        check_numa_balancing(cx),
        check_amdgpu_params(cx),
        check_next_kernel(cx),
        check_next_module(cx),
        check_secure_boot(cx),
    ];
    out.extend(check_firmware(cx));
    out
}

fn skip(id: &'static str, why: impl Into<String>) -> Finding {
    Finding::new(id, AREA, Status::Skip, why)
}

/// Why a fact is missing: what the probe recorded (a file that could not be read), else `missing` (the probe records
/// no missing file).
fn why(f: &HostFacts, fact: &str, missing: &str) -> String {
    f.why_unavailable(fact).unwrap_or(missing).to_string()
}

const NO_CMDLINE: &str = "/proc/cmdline does not exist";
const NO_NEXT: &str = "no /boot/grub/grub.cfg, /boot/grub2/grub.cfg or /boot/vmlinuz-* names it";

/// The host's GPUs AMD's MI300X guide is about, or why the guide does not apply.
pub fn mi300_gpus(f: &HostFacts) -> usize {
    f.amd_gpus()
        .filter(|g| {
            g.gfx
                .is_some_and(|t| MI300X_GUIDE_GFX.contains(&t.to_string().as_str()))
        })
        .count()
}

/// The values of a kernel parameter on the command line (`pci=realloc=off,nocrs` → `realloc=off,nocrs`).
fn param_values<'a>(cmdline: &'a [String], name: &str) -> Vec<&'a str> {
    cmdline
        .iter()
        .filter_map(|w| {
            w.split_once('=')
                .filter(|(k, _)| *k == name)
                .map(|(_, v)| v)
        })
        .collect()
}

/// The parameters AMD's MI300X guide asks for that `cmdline` lacks, and those on it that turn the IOMMU off; `fix`
/// plans from the same answer.
pub fn iommu_params<'c>(
    f: &HostFacts,
    cmdline: &'c [String],
) -> (Vec<&'static str>, Vec<&'c String>) {
    let intel = f
        .cpu
        .as_ref()
        .and_then(|c| c.model.as_deref())
        .is_some_and(|m| m.contains("Intel"));
    let mut wants: Vec<&'static str> = Vec::new();
    if !param_values(cmdline, "iommu").contains(&"pt") {
        wants.push("iommu=pt");
    }
    if intel && !param_values(cmdline, "intel_iommu").contains(&"on") {
        wants.push("intel_iommu=on");
    }
    if !param_values(cmdline, "pci")
        .iter()
        .any(|v| v.split(',').any(|o| o == "realloc=off"))
    {
        wants.push("pci=realloc=off");
    }
    let off: Vec<&String> = cmdline
        .iter()
        .filter(|w| *w == "iommu=off" || *w == "amd_iommu=off" || *w == "intel_iommu=off")
        .collect();
    (wants, off)
}

fn check_iommu(cx: &Context) -> Finding {
    const ID: &str = "boot.iommu";
    let f = cx.facts;
    let n = mi300_gpus(f);
    if n < 2 {
        return skip(ID, "IOMMU boot parameters: not checked, AMD's MI300X guide asks for them on multi-GPU MI300-series hosts and this host has none");
    }
    let Some(cmdline) = &f.boot.cmdline else {
        return skip(
            ID,
            format!(
                "IOMMU boot parameters: the kernel command line is unknown: {}",
                why(f, "cmdline", NO_CMDLINE)
            ),
        );
    };
    let (wants, off) = iommu_params(f, cmdline);
    if wants.is_empty() && off.is_empty() {
        return Finding::new(ID, AREA, Status::Pass, format!("/proc/cmdline has the IOMMU and PCI parameters AMD's MI300X guide asks for on {n} MI300-series GPUs"))
            .detail(format!("guide: {MI300X_GUIDE}"));
    }
    let mut summary = format!(
        "/proc/cmdline lacks {} that AMD's MI300X guide asks for on a host with {n} MI300-series GPUs",
        wants.join(" ")
    );
    if !off.is_empty() {
        let off: Vec<&str> = off.iter().map(|s| s.as_str()).collect();
        summary = format!("/proc/cmdline has {}, which turns the IOMMU off where AMD's MI300X guide asks for pass-through (iommu=pt){}", off.join(" "),
            if wants.is_empty() { String::new() } else { format!("; it also lacks {}", wants.join(" ")) });
    }
    Finding::new(ID, AREA, Status::Warn, summary)
        .detail(format!("wants: {}{}; guide: {MI300X_GUIDE} (GRUB settings: iommu=pt for DMA without translation, pci=realloc=off so every GPU is found)",
            wants.join(" "),
            if off.is_empty() { String::new() } else { format!("; remove: {}", off.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")) }))
        .fix(format!("add `{}` to GRUB_CMDLINE_LINUX in /etc/default/grub, then sudo update-grub (RHEL: sudo grub2-mkconfig -o /boot/grub2/grub.cfg) and reboot", wants.join(" ")))
}

fn check_numa_balancing(cx: &Context) -> Finding {
    const ID: &str = "boot.numa-balancing";
    let f = cx.facts;
    if mi300_gpus(f) == 0 {
        return skip(ID, "NUMA balancing: not checked, AMD asks for it off on MI300-series hosts and this host has none");
    }
    let Some(v) = &f.boot.numa_balancing else {
        return skip(
            ID,
            format!("NUMA balancing: unknown: {}", why(f, "numa_balancing", "/proc/sys/kernel/numa_balancing does not exist (a kernel without NUMA balancing)")),
        );
    };
    match v.as_str() {
        "0" => Finding::new(ID, AREA, Status::Pass, "NUMA balancing is off (/proc/sys/kernel/numa_balancing is 0), as AMD's MI300X guide asks")
            .detail(format!("guide: {MI300X_GUIDE}")),
        _ => Finding::new(ID, AREA, Status::Warn, format!("NUMA balancing is on (/proc/sys/kernel/numa_balancing is {v}); AMD's MI300X guide asks for 0"))
            .detail(format!("wants: kernel.numa_balancing=0; the kernel migrating pages behind the GPUs costs throughput (guide: {MI300X_GUIDE}, \"Disable NUMA auto-balancing\"; compare a run with each value)"))
            .fix("sudo sysctl -w kernel.numa_balancing=0, and to keep it: echo kernel.numa_balancing=0 | sudo tee /etc/sysctl.d/90-numa-balancing.conf"),
    }
}

fn check_amdgpu_params(cx: &Context) -> Finding {
    const ID: &str = "boot.amdgpu-params";
    let f = cx.facts;
    let Some(cmdline) = &f.boot.cmdline else {
        return skip(
            ID,
            format!(
                "amdgpu parameters: the kernel command line is unknown: {}",
                why(f, "cmdline", NO_CMDLINE)
            ),
        );
    };
    let given: Vec<(&str, &str)> = cmdline
        .iter()
        .filter_map(|w| w.strip_prefix("amdgpu."))
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    if given.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            "/proc/cmdline sets no amdgpu parameter",
        );
    }
    let Some(has) = &f.boot.amdgpu_parameters else {
        let reason = match f.amdgpu_driver.as_ref().is_some_and(|d| d.loaded) {
            true => why(
                f,
                "amdgpu parameters",
                "/sys/module/amdgpu/parameters does not exist",
            ),
            false => "amdgpu is not loaded".into(),
        };
        return skip(
            ID,
            format!("amdgpu parameters on /proc/cmdline: not checked against the module: {reason}"),
        );
    };
    // The kernel takes `-` and `_` alike in parameter names.
    let norm = |s: &str| s.replace('-', "_");
    let unknown: Vec<String> = given
        .iter()
        .filter(|(k, _)| !has.iter().any(|h| norm(h) == norm(k)))
        .map(|(k, v)| format!("amdgpu.{k}={v}"))
        .collect();
    let deprecated: Vec<String> = given
        .iter()
        .filter(|(k, _)| norm(k) == "gttsize")
        .map(|(k, v)| format!("amdgpu.{k}={v}"))
        .collect();
    if unknown.is_empty() && deprecated.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "the loaded amdgpu has every amdgpu parameter /proc/cmdline sets ({})",
                given.len()
            ),
        );
    }
    let mut said = Vec::new();
    if !unknown.is_empty() {
        said.push(format!("{} (the loaded amdgpu has no such parameter, /sys/module/amdgpu/parameters/, so the kernel ignores it)", unknown.join(" ")));
    }
    if !deprecated.is_empty() {
        said.push(format!(
            "{} (deprecated: the GTT size comes from ttm.pages_limit, {GTTSIZE_ISSUE})",
            deprecated.join(" ")
        ));
    }
    let remove: Vec<String> = unknown.iter().chain(&deprecated).cloned().collect();
    Finding::new(ID, AREA, Status::Warn, format!("/proc/cmdline sets amdgpu parameters that do nothing: {}", said.join("; ")))
        .detail(format!("remove: {}", remove.join(" ")))
        .fix(format!("remove `{}` from GRUB_CMDLINE_LINUX in /etc/default/grub (set the GTT size with ttm.pages_limit), then sudo update-grub and reboot", remove.join(" ")))
}

fn check_next_kernel(cx: &Context) -> Finding {
    const ID: &str = "boot.next-kernel";
    let f = cx.facts;
    let Some(next) = &f.boot.next_kernel else {
        return skip(
            ID,
            format!(
                "the kernel that boots next is unknown: {}",
                why(f, "next kernel", NO_NEXT)
            ),
        );
    };
    let k = match crate::parse::kernel::parse_kernel_release(&next.release) {
        Ok(k) => crate::host::KernelFacts {
            series: k.series(),
            version: k.version.to_string(),
            flavour: k.flavour.clone(),
            release: k.release.clone(),
        },
        Err(e) => {
            return skip(
                ID,
                format!(
                    "the next-boot kernel `{}` ({}): {e}",
                    next.release, next.how
                ),
            )
        }
    };
    let mut out = super::system::judge_kernel(cx, ID, AREA, &k, "next-boot kernel");
    let from = format!("the next boot, from {}", next.how);
    out.detail = Some(match out.detail.take() {
        Some(d) => format!("{from}; {d}"),
        None => from,
    });
    out
}

/// The running kernel's out-of-tree modules and the next kernel's.
fn running_and_next(f: &HostFacts) -> (Option<&KernelModules>, Option<&KernelModules>) {
    let of = |r: Option<&str>| r.and_then(|r| f.boot.modules.iter().find(|m| m.release == r));
    (
        of(f.kernel.as_ref().map(|k| k.release.as_str())),
        of(f.boot.next_kernel.as_ref().map(|k| k.release.as_str())),
    )
}

/// The distribution's commands to install a kernel's headers and build its dkms modules.
fn dkms_fix(f: &HostFacts, k: &str) -> String {
    let os = f.os.as_ref();
    let like = |id: &str| {
        os.is_some_and(|o| o.id.as_deref() == Some(id) || o.id_like.iter().any(|l| l == id))
    };
    let headers = if like("debian") || like("ubuntu") {
        format!("sudo apt install linux-headers-{k}")
    } else if like("rhel") || like("fedora") {
        format!("sudo dnf install kernel-devel-{k}")
    } else if like("suse") || like("sles") {
        "sudo zypper install kernel-default-devel".to_string()
    } else {
        format!("install the headers of {k}")
    };
    format!("{headers} && sudo dkms autoinstall -k {k}")
}

fn check_next_module(cx: &Context) -> Finding {
    const ID: &str = "boot.next-kernel-module";
    let f = cx.facts;
    let (running, next) = running_and_next(f);
    let dkms_amdgpu = f
        .amdgpu_driver
        .as_ref()
        .is_some_and(|d| d.loaded && d.kind.as_deref() == Some("dkms"))
        || running.is_some_and(|m| m.amdgpu.is_some());
    let dkms_nvidia = f.nvidia_driver.is_some() && running.is_some_and(|m| m.nvidia.is_some());
    if !dkms_amdgpu && !dkms_nvidia {
        return skip(ID, "the next kernel's GPU module: not checked, the running kernel uses no out-of-tree (dkms) GPU module");
    }
    let (Some(nk), Some(next)) = (&f.boot.next_kernel, next) else {
        return skip(
            ID,
            format!(
                "the next kernel's GPU module: the kernel that boots next is unknown: {}",
                why(f, "next kernel", NO_NEXT)
            ),
        );
    };
    let k = &nk.release;
    let mut missing = Vec::new();
    if dkms_amdgpu && next.amdgpu.is_none() {
        missing.push(format!("amdgpu (no /lib/modules/{k}/updates/dkms/amdgpu.ko*, /lib/modules/{k}/extra/amdgpu.ko* or /var/lib/dkms/amdgpu/<version>/{k})"));
    }
    if dkms_nvidia && next.nvidia.is_none() {
        missing.push(format!("nvidia (no /lib/modules/{k}/updates/dkms/nvidia.ko* or /lib/modules/{k}/extra/nvidia.ko*)"));
    }
    let headers = next.headers.is_some();
    if missing.is_empty() {
        let found: Vec<&str> = [next.amdgpu.as_deref(), next.nvidia.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "the next-boot kernel {k} has its out-of-tree GPU module ({})",
                found.join(", ")
            ),
        )
        .detail(format!("next boot from {}", nk.how));
    }
    let names: Vec<&str> = missing.iter().filter_map(|m| m.split(' ').next()).collect();
    let mut detail = format!("next boot from {}; missing: {}", nk.how, missing.join("; "));
    if !headers {
        detail.push_str(&format!("; its headers are not installed either (no /lib/modules/{k}/build, /usr/src/linux-headers-{k} or /usr/src/kernels/{k}), so dkms cannot build it"));
    }
    Finding::new(ID, AREA, Status::Warn, format!("after a reboot, {} will not load: the next-boot kernel {k} has no build of the out-of-tree module", names.join(" and ")))
        .detail(detail)
        .fix(dkms_fix(f, k))
}

fn check_secure_boot(cx: &Context) -> Finding {
    const ID: &str = "boot.secure-boot";
    let f = cx.facts;
    let Some(on) = f.boot.secure_boot else {
        return skip(
            ID,
            format!(
                "Secure Boot: unknown: {}",
                why(f, "secure boot", &format!("{SECURE_BOOT_FILE} does not exist (not booted through UEFI, or efivarfs is not mounted)"))
            ),
        );
    };
    if !on {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!("Secure Boot is off ({SECURE_BOOT_FILE}): the kernel loads unsigned modules"),
        );
    }
    let (running, _) = running_and_next(f);
    let amd_blocked = f.amd_gpus().next().is_some()
        && !f.amdgpu_driver.as_ref().is_some_and(|d| d.loaded)
        && running.and_then(|m| m.amdgpu.as_deref()).is_some();
    let nv_blocked = f.nvidia_gpus().next().is_some()
        && f.nvidia_driver.is_none()
        && running.and_then(|m| m.nvidia.as_deref()).is_some();
    let blocked: Vec<String> = [
        amd_blocked.then(|| {
            format!(
                "amdgpu ({})",
                running.and_then(|m| m.amdgpu.as_deref()).unwrap_or("")
            )
        }),
        nv_blocked.then(|| {
            format!(
                "nvidia ({})",
                running.and_then(|m| m.nvidia.as_deref()).unwrap_or("")
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if blocked.is_empty() {
        return Finding::new(ID, AREA, Status::Pass, format!("Secure Boot is on ({SECURE_BOOT_FILE}), and no installed out-of-tree GPU module is left unloaded"));
    }
    Finding::new(ID, AREA, Status::Fail, format!("Secure Boot is on and the out-of-tree module {} is installed but not loaded: the kernel refuses a module that is unsigned or signed by a key not enrolled (MOK)", blocked.join(" and ")))
        .detail(format!("read {SECURE_BOOT_FILE} (value 1 = on); the user report: {SECURE_BOOT_ISSUE}; `dmesg | grep -i 'key\\|sign'` shows the refusal"))
        .fix("enroll the key dkms signs with: sudo mokutil --import /var/lib/shim-signed/mok/MOK.der (Ubuntu; dkms 3 elsewhere: /var/lib/dkms/mok.pub), choose a one-time password, reboot, pick \"Enroll MOK\" in the blue MOK manager and enter it; or turn Secure Boot off in the firmware setup")
}

fn check_firmware(cx: &Context) -> Vec<Finding> {
    const ID: &str = "firmware.known-bad";
    let f = cx.facts;
    let bad = &cx.matrices.firmware.known_bad;
    f.boot
        .firmware
        .iter()
        .filter_map(|fw| {
            let g = f.gpus.iter().find(|g| g.pci_address == fw.pci_address)?;
            let label = gpu_label(g);
            let subject = g.pci_address.clone();
            Some(firmware_finding(ID, f, g.gfx, &label, fw, bad).subject(subject))
        })
        .collect()
}

fn firmware_finding(
    id: &'static str,
    f: &HostFacts,
    gfx: Option<GfxTarget>,
    label: &str,
    fw: &crate::host::GpuFirmware,
    bad: &[crate::matrix::KnownBadFirmware],
) -> Finding {
    let applies: Vec<&crate::matrix::KnownBadFirmware> =
        bad.iter().filter(|e| e.applies_to(gfx)).collect();
    for e in &applies {
        let Some(v) = fw.versions.get(&e.component) else {
            continue;
        };
        if e.values().contains(&v.value) {
            return Finding::new(
                id,
                AREA,
                Status::Fail,
                format!(
                    "{label}: {} firmware {} is known bad: {}",
                    e.component, v.text, e.problem
                ),
            )
            .detail(format!(
                "read {}; source: {}",
                v.path,
                e.source.as_deref().unwrap_or("firmware.yaml")
            ))
            .fix(e.fix.clone());
        }
    }
    let base = format!("/sys/bus/pci/devices/{}/fw_version", fw.pci_address);
    let unread: Vec<String> = crate::host::FIRMWARE_COMPONENTS
        .iter()
        .filter_map(|c| f.why_unavailable(&format!("firmware {} {c}", fw.pci_address)))
        .map(str::to_string)
        .collect();
    if !unread.is_empty() {
        return Finding::new(
            id,
            AREA,
            Status::Skip,
            format!("{label}: firmware not checked: {}", unread.join("; ")),
        );
    }
    if fw.versions.is_empty() {
        return Finding::new(
            id,
            AREA,
            Status::Skip,
            format!(
                "{label}: firmware not checked: amdgpu shows no *_fw_version file under {base}"
            ),
        );
    }
    let shown: Vec<String> = fw
        .versions
        .iter()
        .map(|(c, v)| format!("{c} {}", v.text))
        .collect();
    Finding::new(
        id,
        AREA,
        Status::Pass,
        format!(
            "{label}: no loaded firmware is on the known-bad list ({})",
            shown.join(", ")
        ),
    )
    .detail(format!(
        "read {base}/*_fw_version; {} known-bad entries apply to this GPU",
        applies.len()
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_matrix_names_the_components_the_probe_reads() {
        assert_eq!(
            crate::matrix::FIRMWARE_COMPONENTS,
            crate::host::FIRMWARE_COMPONENTS
        );
    }
}
