//! The boot: `/proc/cmdline`, NUMA balancing, the amdgpu module's parameters, the kernel that boots next and the GPU
//! modules it has, the UEFI Secure Boot variable, and the firmware versions amdgpu loaded. One read per file; the
//! only directories listed are `/sys/module/amdgpu/parameters`, `/boot` (when GRUB names no kernel),
//! `/boot/loader/entries` (BLS hosts), `/var/lib/dkms/amdgpu` and, on hosts with an AMD GPU, the modprobe.d
//! directories (for an amdgpu blacklist).

use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::parse::grub;
use crate::vendor::Vendor;

/// The UEFI global variable `SecureBoot` as efivarfs shows it: 4 bytes of attributes, then the value (1 = on).
/// UEFI Specification 2.10, section 3.3 "Globally Defined Variables" (`SecureBoot`, EFI_GLOBAL_VARIABLE GUID
/// 8be4df61-93ca-11d2-aa0d-00e098032b8c), https://uefi.org/specs/UEFI/2.10/03_Boot_Manager.html#globally-defined-variables;
/// the 4-byte attribute prefix: the kernel's efivarfs documentation,
/// https://www.kernel.org/doc/html/v6.8/filesystems/efivarfs.html.
pub const SECURE_BOOT_VAR: &str =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// The amdgpu firmware components read per GPU, as `fw_version/<name>_fw_version` of its PCI device
/// (torvalds/linux `drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.c`, `FW_VERSION_ATTR`: `0x%08x`). `matrices/firmware.yaml`
/// may name only these.
pub const FIRMWARE_COMPONENTS: [&str; 6] = ["mes", "mes_kiq", "mec", "rlc", "sos", "smc"];

/// Where GRUB keeps its files: Debian and Ubuntu, then RHEL, Fedora and SUSE.
const GRUB_DIRS: [&str; 2] = ["/boot/grub", "/boot/grub2"];

/// The suffixes a kernel module file has: uncompressed, or compressed as the distributions do.
const KO: [&str; 4] = [".ko", ".ko.zst", ".ko.xz", ".ko.gz"];

/// Records why a file that exists could not be read; a missing file is not recorded (the check that needs it says
/// which file is missing), as for the drivers' optional files.
fn unreadable(f: &mut HostFacts, fact: &str, e: crate::host::root::ReadError) {
    if !e.is_missing() {
        f.unavailable(fact, e.to_string());
    }
}

pub(super) fn probe_boot(root: &HostRoot, f: &mut HostFacts) {
    match root.read_text("/proc/cmdline") {
        Ok(t) => f.boot.cmdline = Some(t.split_whitespace().map(str::to_string).collect()),
        Err(e) => unreadable(f, "cmdline", e),
    }
    match root.read_value("/proc/sys/kernel/numa_balancing") {
        Ok(v) => f.boot.numa_balancing = Some(v),
        Err(e) => unreadable(f, "numa_balancing", e),
    }
    if f.amdgpu_driver.as_ref().is_some_and(|d| d.loaded) {
        match root.list("/sys/module/amdgpu/parameters") {
            Ok(names) => f.boot.amdgpu_parameters = Some(names),
            Err(e) => unreadable(f, "amdgpu parameters", e),
        }
    }
    probe_secure_boot(root, f);
    match next_kernel(root) {
        Ok(k) => f.boot.next_kernel = k,
        Err(why) => f.unavailable("next kernel", why),
    }
    probe_modules(root, f);
    probe_firmware(root, f);
    probe_blacklist(root, f);
}

/// The directories modprobe reads, in modprobe.d(5)'s order.
pub const MODPROBE_DIRS: [&str; 4] = [
    "/etc/modprobe.d",
    "/run/modprobe.d",
    "/usr/lib/modprobe.d",
    "/lib/modprobe.d",
];

/// Where amdgpu is blacklisted, on a host with an AMD GPU: the modprobe.d lines and the kernel parameters.
fn probe_blacklist(root: &HostRoot, f: &mut HostFacts) {
    use crate::parse::modprobe::{blocks_amdgpu, cmdline_blocks};
    if f.amd_gpus().next().is_none() {
        return;
    }
    let mut found = Vec::new();
    for dir in MODPROBE_DIRS {
        let mut names = root.list(dir).unwrap_or_default();
        names.sort();
        for n in names.iter().filter(|n| n.ends_with(".conf")) {
            let path = format!("{dir}/{n}");
            let Ok(text) = root.read_text(&path) else {
                continue;
            };
            found.extend(
                text.lines()
                    .enumerate()
                    .filter(|(_, l)| blocks_amdgpu(l))
                    .map(|(i, l)| format!("{path}:{} `{}`", i + 1, l.trim())),
            );
        }
    }
    let cmdline = f.boot.cmdline.clone().unwrap_or_default();
    found.extend(
        cmdline_blocks(&cmdline)
            .into_iter()
            .map(|p| format!("the kernel command line: `{p}`")),
    );
    f.boot.amdgpu_blacklist = found;
}

fn probe_secure_boot(root: &HostRoot, f: &mut HostFacts) {
    match root.read_binary(SECURE_BOOT_VAR, 64) {
        Ok(b) if b.len() == 5 => f.boot.secure_boot = Some(b[4] == 1),
        Ok(b) => f.unavailable(
            "secure boot",
            format!(
                "{SECURE_BOOT_VAR}: is {} bytes, not the 5 of an EFI variable of one byte (4 bytes of attributes, then the value)",
                b.len()
            ),
        ),
        Err(e) => unreadable(f, "secure boot", e),
    }
}

/// Releases in version order: numbers compare as numbers (`6.8.0-49` after `6.8.0-9`).
fn release_key(r: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut num = String::new();
    let mut text = String::new();
    for c in r.chars() {
        if c.is_ascii_digit() {
            if !text.is_empty() {
                out.push((u64::MAX, std::mem::take(&mut text)));
            }
            num.push(c);
        } else {
            if !num.is_empty() {
                out.push((num.parse().unwrap_or(u64::MAX), String::new()));
                num.clear();
            }
            text.push(c);
        }
    }
    if !num.is_empty() {
        out.push((num.parse().unwrap_or(u64::MAX), String::new()));
    }
    if !text.is_empty() {
        out.push((u64::MAX, text));
    }
    out
}

fn newest(releases: impl Iterator<Item = String>) -> Option<String> {
    releases.max_by_key(|r| release_key(r))
}

/// GRUB's selection: `next_entry` (a one-time `grub-reboot`), else `saved_entry` when `GRUB_DEFAULT=saved` (or
/// `/etc/default/grub` is absent), else `GRUB_DEFAULT`, else entry 0. Returns the selection and where it came from.
fn grub_selection(root: &HostRoot, dir: &str) -> (String, String) {
    let env_path = format!("{dir}/grubenv");
    let env = root
        .read_text(&env_path)
        .map(|t| grub::assignments(&t))
        .unwrap_or_default();
    if let Some(n) = grub::value(&env, "next_entry") {
        return (n.to_string(), format!("next_entry of {env_path}"));
    }
    let default = root
        .read_text("/etc/default/grub")
        .ok()
        .map(|t| grub::assignments(&t));
    let chosen = default
        .as_ref()
        .and_then(|d| grub::value(d, "GRUB_DEFAULT"))
        .map(str::to_string);
    match chosen.as_deref() {
        Some("saved") | None => match grub::value(&env, "saved_entry") {
            Some(s) => (s.to_string(), format!("saved_entry of {env_path}")),
            None => ("0".into(), "GRUB's first entry".into()),
        },
        Some(d) => (d.to_string(), "GRUB_DEFAULT of /etc/default/grub".into()),
    }
}

/// The kernel that boots next; `Ok(None)` when no GRUB configuration and no `/boot/vmlinuz-*` exist, an error when
/// one exists and does not say.
fn next_kernel(root: &HostRoot) -> Result<Option<NextKernel>, String> {
    for dir in GRUB_DIRS {
        let cfg = format!("{dir}/grub.cfg");
        let text = match root.read_text(&cfg) {
            Ok(t) => t,
            Err(e) if e.is_missing() => continue,
            Err(e) => return Err(e.to_string()),
        };
        let (sel, from) = grub_selection(root, dir);
        let entries = grub::menu_entries(&text);
        // grub.cfg of a BLS host (RHEL 8+, Fedora) has no menuentry: `blscfg` reads /boot/loader/entries.
        if entries.is_empty() && text.contains("blscfg") {
            return bls_kernel(root, &sel, &from).map(Some);
        }
        if entries.is_empty() {
            return Err(format!(
                "{cfg}: has no menu entry GRUB could boot (no quoted `menuentry` with a body)"
            ));
        }
        return grub::select(&entries, &sel)
            .map(|release| {
                Some(NextKernel {
                    release,
                    how: format!("{from}, in {cfg}"),
                })
            })
            .map_err(|why| format!("{cfg}: {why}"));
    }
    newest_vmlinuz(root)
}

/// A BLS host: the entry GRUB saved (its file name without `.conf`), else the newest entry.
fn bls_kernel(root: &HostRoot, sel: &str, from: &str) -> Result<NextKernel, String> {
    const DIR: &str = "/boot/loader/entries";
    let names = root.list(DIR).map_err(|e| e.to_string())?;
    let ids: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".conf"))
        .collect();
    let (id, how) = match ids.iter().find(|i| **i == sel) {
        Some(i) => (i.to_string(), format!("{from}, in {DIR}")),
        None => (
            newest(ids.iter().map(|s| s.to_string()))
                .ok_or(format!("{DIR}: has no .conf entry"))?,
            format!("the newest entry of {DIR}"),
        ),
    };
    let path = format!("{DIR}/{id}.conf");
    let text = root.read_text(&path).map_err(|e| e.to_string())?;
    let release = text
        .lines()
        .find(|l| l.trim_start().starts_with("linux"))
        .and_then(grub::kernel_of_linux_line)
        .ok_or(format!(
            "{path}: has no `linux /vmlinuz-…` line naming a kernel"
        ))?;
    Ok(NextKernel { release, how })
}

fn newest_vmlinuz(root: &HostRoot) -> Result<Option<NextKernel>, String> {
    let names = match root.list("/boot") {
        Ok(n) => n,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    Ok(newest(
        names
            .iter()
            .filter_map(|n| n.strip_prefix("vmlinuz-"))
            .filter(|r| !r.is_empty() && !r.ends_with(".old"))
            .map(str::to_string),
    )
    .map(|release| NextKernel {
        release,
        how: "the newest /boot/vmlinuz-* (no GRUB configuration found)".into(),
    }))
}

/// The first of `paths` that exists.
fn first_existing(root: &HostRoot, paths: impl IntoIterator<Item = String>) -> Option<String> {
    paths.into_iter().find(|p| root.exists(p))
}

fn module_paths(k: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    // dkms installs to updates/dkms on Debian and Ubuntu, to extra on RHEL and SUSE.
    for dir in ["updates/dkms", "extra"] {
        for ko in KO {
            out.push(format!("/lib/modules/{k}/{dir}/{name}{ko}"));
        }
    }
    out
}

/// The out-of-tree modules of kernel `k`, looked for only for the vendors whose GPUs the host has (each path is a
/// stat, and doctor has a time budget).
fn modules_of(
    root: &HostRoot,
    k: &str,
    dkms_versions: &[String],
    amd: bool,
    nv: bool,
) -> KernelModules {
    let amdgpu = amd
        .then(|| {
            first_existing(root, module_paths(k, "amdgpu")).or_else(|| {
                first_existing(
                    root,
                    dkms_versions
                        .iter()
                        .map(|v| format!("/var/lib/dkms/amdgpu/{v}/{k}")),
                )
            })
        })
        .flatten();
    KernelModules {
        release: k.to_string(),
        amdgpu,
        nvidia: nv
            .then(|| first_existing(root, module_paths(k, "nvidia")))
            .flatten(),
        headers: first_existing(
            root,
            [
                format!("/lib/modules/{k}/build"),
                format!("/usr/src/linux-headers-{k}"),
                format!("/usr/src/kernels/{k}"),
            ],
        ),
    }
}

fn probe_modules(root: &HostRoot, f: &mut HostFacts) {
    let running = f.kernel.as_ref().map(|k| k.release.clone());
    let next = f.boot.next_kernel.as_ref().map(|k| k.release.clone());
    let (amd, nv) = (
        f.amd_gpus().next().is_some(),
        f.nvidia_gpus().next().is_some(),
    );
    if (running.is_none() && next.is_none()) || (!amd && !nv) {
        return;
    }
    let dkms: Vec<String> = match amd {
        true => root.list("/var/lib/dkms/amdgpu").unwrap_or_default(),
        false => Vec::new(),
    };
    let mut seen = Vec::new();
    for k in [running, next].into_iter().flatten() {
        if !seen.contains(&k) {
            f.boot.modules.push(modules_of(root, &k, &dkms, amd, nv));
            seen.push(k);
        }
    }
}

fn probe_firmware(root: &HostRoot, f: &mut HostFacts) {
    let gpus: Vec<String> = f
        .gpus
        .iter()
        .filter(|g| g.vendor == Vendor::Amd && g.driver.as_deref() == Some("amdgpu"))
        .map(|g| g.pci_address.clone())
        .collect();
    for bdf in gpus {
        let mut fw = GpuFirmware {
            pci_address: bdf.clone(),
            versions: Default::default(),
        };
        for c in FIRMWARE_COMPONENTS {
            let path = format!("/sys/bus/pci/devices/{bdf}/fw_version/{c}_fw_version");
            match root.read_value(&path) {
                Ok(text) => match parse_hex(&text) {
                    Some(value) => {
                        fw.versions
                            .insert(c.to_string(), FirmwareVersion { path, text, value });
                    }
                    None => f.unavailable(
                        format!("firmware {bdf} {c}"),
                        format!("{path}: `{text}` is not a hex version like 0x00000083"),
                    ),
                },
                Err(e) if e.is_missing() => {}
                Err(e) => f.unavailable(format!("firmware {bdf} {c}"), e.to_string()),
            }
        }
        f.boot.firmware.push(fw);
    }
}

/// `0x00000083` → 0x83; anything else is `None`.
pub(crate) fn parse_hex(s: &str) -> Option<u32> {
    let h = s.trim().strip_prefix("0x")?;
    if h.is_empty() || h.len() > 8 {
        return None;
    }
    u32::from_str_radix(h, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_sort_as_versions() {
        let n = newest(
            ["5.15.0-127-generic", "6.8.0-9-generic", "6.8.0-49-generic"]
                .into_iter()
                .map(String::from),
        );
        assert_eq!(n.as_deref(), Some("6.8.0-49-generic"));
    }

    #[test]
    fn firmware_versions_are_hex() {
        assert_eq!(parse_hex("0x00000083"), Some(0x83));
        assert_eq!(parse_hex("0x0"), Some(0));
        for bad in ["83", "0x", "0xZZ", "0x123456789", "", "zz"] {
            assert_eq!(parse_hex(bad), None, "{bad}");
        }
    }
}
