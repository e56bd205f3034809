//! The boot settings AMD's MI300X guide asks for on multi-GPU MI300-series hosts, from the same judgement as doctor's
//! `boot.iommu` and `boot.numa-balancing`: the kernel parameters as a GRUB drop-in (Debian and Ubuntu source
//! `/etc/default/grub.d/*.cfg`) or through `grubby` (the RHEL family), and `kernel.numa_balancing=0` in
//! `/etc/sysctl.d` (and at once with `sysctl -w` on a live host).

use super::{Action, Change, Needs};
use crate::checks::{iommu_params, mi300_gpus, MI300X_GUIDE};
use crate::host::HostFacts;

/// The GRUB drop-in fix writes.
pub const GRUB_DROPIN: &str = "/etc/default/grub.d/90-rocmenv.cfg";
/// The sysctl file fix writes.
pub const SYSCTL_CONF: &str = "/etc/sysctl.d/90-rocmenv.conf";

fn rhel_family(f: &HostFacts) -> bool {
    f.os.as_ref().is_some_and(|o| {
        let fam = ["rhel", "fedora", "centos", "rocky", "almalinux", "ol"];
        o.id.as_deref().is_some_and(|i| fam.contains(&i))
            || o.id_like.iter().any(|l| fam.contains(&l.as_str()))
    })
}

/// The kernel parameters the host lacks, as a drop-in (`existing`: its text now) or a grubby command; a note when
/// they cannot be planned (a tree of the RHEL family, parameters that turn the IOMMU off).
pub fn plan_kernel_params(
    f: &HostFacts,
    existing: Option<&str>,
    live: bool,
) -> (Option<Action>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(cmdline) = f.boot.cmdline.as_ref().filter(|_| mi300_gpus(f) >= 2) else {
        return (None, notes);
    };
    let (wants, off) = iommu_params(f, cmdline);
    if !off.is_empty() {
        let off: Vec<&str> = off.iter().map(|s| s.as_str()).collect();
        notes.push(format!("kernel parameters: {} on the command line turns the IOMMU off; remove it where it is set (/etc/default/grub or the boot loader's entries) by hand", off.join(" ")));
    }
    if wants.is_empty() {
        return (None, notes);
    }
    let args = wants.join(" ");
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: true,
    };
    let summary = |how: &str| {
        format!("add `{args}` to the kernel command line, as AMD's MI300X guide asks for {} MI300-series GPUs ({how}); takes effect at the next boot", mi300_gpus(f))
    };
    if rhel_family(f) {
        if !live {
            notes.push(format!("kernel parameters: on the RHEL family fix runs `grubby --update-kernel=ALL --args=\"{args}\"` on the live host, not in a tree"));
            return (None, notes);
        }
        let action = Action {
            id: "fix.kernel-params",
            fixes: vec!["boot.iommu".into()],
            summary: summary("grubby, for every installed kernel"),
            change: Change::Command {
                argv: vec![
                    "grubby".into(),
                    "--update-kernel=ALL".into(),
                    format!("--args={args}"),
                ],
                undo: vec![vec![
                    "grubby".into(),
                    "--update-kernel=ALL".into(),
                    format!("--remove-args={args}"),
                ]],
            },
            needs,
            source: MI300X_GUIDE,
        };
        return (Some(action), notes);
    }
    let after = format!(
        "# Written by `rocmenv fix`: the kernel parameters AMD's MI300X guide asks for ({MI300X_GUIDE}).\n\
         # update-grub reads /etc/default/grub.d/*.cfg after /etc/default/grub.\n\
         GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {args}\"\n"
    );
    if existing == Some(after.as_str()) {
        // Written already; the parameters arrive with update-grub and the next boot.
        notes.push(format!("kernel parameters: {GRUB_DROPIN} already adds `{args}`; run `sudo update-grub` and reboot"));
        return (None, notes);
    }
    let action = Action {
        id: "fix.kernel-params",
        fixes: vec!["boot.iommu".into()],
        summary: summary(&format!("{GRUB_DROPIN}; then sudo update-grub and reboot")),
        change: Change::Edit {
            path: GRUB_DROPIN.into(),
            before: existing.map(str::to_string),
            after,
        },
        needs,
        source: MI300X_GUIDE,
    };
    (Some(action), notes)
}

/// `kernel.numa_balancing=0` kept in [`SYSCTL_CONF`] (`existing`: its text now), and set at once on a live host.
pub fn plan_numa_balancing(f: &HostFacts, existing: Option<&str>, live: bool) -> Vec<Action> {
    let on = f.boot.numa_balancing.as_deref().is_some_and(|v| v != "0");
    if mi300_gpus(f) == 0 || !on {
        return Vec::new();
    }
    let now = f.boot.numa_balancing.clone().unwrap_or_default();
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: false,
    };
    let mut out = Vec::new();
    let after = format!("# Written by `rocmenv fix`: AMD's MI300X guide asks for NUMA auto-balancing off ({MI300X_GUIDE}).\nkernel.numa_balancing = 0\n");
    if existing != Some(after.as_str()) {
        out.push(Action {
            id: "fix.sysctl",
            fixes: vec!["boot.numa-balancing".into()],
            summary: format!("{SYSCTL_CONF}: kernel.numa_balancing = 0 at every boot"),
            change: Change::Edit {
                path: SYSCTL_CONF.into(),
                before: existing.map(str::to_string),
                after,
            },
            needs,
            source: MI300X_GUIDE,
        });
    }
    if live {
        out.push(Action {
            id: "fix.sysctl",
            fixes: vec!["boot.numa-balancing".into()],
            summary: format!("kernel.numa_balancing = 0 now (it is {now})"),
            change: Change::Command {
                argv: vec![
                    "sysctl".into(),
                    "-w".into(),
                    "kernel.numa_balancing=0".into(),
                ],
                undo: vec![vec![
                    "sysctl".into(),
                    "-w".into(),
                    format!("kernel.numa_balancing={now}"),
                ]],
            },
            needs,
            source: MI300X_GUIDE,
        });
    }
    out
}
