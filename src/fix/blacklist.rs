//! An `amdgpu` blacklist: a `blacklist amdgpu` line (or `install amdgpu /bin/false`, which stops even an explicit
//! `modprobe`) in `/etc/modprobe.d/*.conf`, the format modprobe.d(5) gives, is removed from its file, every other line
//! kept; then `modprobe amdgpu` on a live host. The initramfs keeps a copy of modprobe.d, so the distribution's
//! initramfs command is named (`update-initramfs -u` on Debian and Ubuntu, `dracut -f` on the RHEL family, as
//! NVIDIA's CUDA installation guide regenerates it after a modprobe.d blacklist). A blacklist on the kernel command
//! line (`modprobe.blacklist=`, `module_blacklist=`) or in a package's `/usr/lib/modprobe.d` is named for removal by
//! hand: fix never edits `/etc/default/grub` or a package's files.

use super::{Action, Change, Needs};
use crate::parse::modprobe::{blocks_amdgpu, cmdline_blocks};

/// modprobe.d(5) for the lines (`blacklist modulename`, `install modulename command...`); NVIDIA's CUDA installation
/// guide ("Disabling Nouveau": Ubuntu `sudo update-initramfs -u`, RHEL `sudo dracut --force`) for regenerating the
/// initramfs after a modprobe.d blacklist changes.
pub const BLACKLIST_SOURCE: &str = "modprobe.d(5) (kmod), https://man7.org/linux/man-pages/man5/modprobe.d.5.html; the initramfs step: https://docs.nvidia.com/cuda/archive/12.4.0/cuda-installation-guide-linux/index.html (Disabling Nouveau)";

/// A modprobe.d file and its text.
#[derive(Debug, Clone)]
pub struct ModprobeFile {
    /// Host path (`/etc/modprobe.d/blacklist-amdgpu.conf`).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// The initramfs command of the host's family, if known.
pub fn initramfs_command(debian: bool, rhel: bool) -> Option<&'static str> {
    if debian {
        Some("sudo update-initramfs -u")
    } else if rhel {
        Some("sudo dracut -f")
    } else {
        None
    }
}

/// One edit per `/etc/modprobe.d` file that blocks amdgpu (`etc`), notes for the package files (`packaged`) and the
/// command line; then `modprobe amdgpu` on a live host. `initramfs`: the family's command.
pub fn plan_blacklist(
    etc: &[ModprobeFile],
    packaged: &[ModprobeFile],
    cmdline: &[String],
    initramfs: Option<&str>,
    live: bool,
) -> (Vec<Action>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: false,
    };
    let then = match initramfs {
        Some(c) => format!("then `{c}`, as the initramfs keeps a copy of modprobe.d"),
        None => "then rebuild the initramfs with the distribution's tool, as it keeps a copy of modprobe.d".into(),
    };
    for f in etc {
        let mut removed = Vec::new();
        let mut kept = String::with_capacity(f.text.len());
        for (i, line) in f.text.split_inclusive('\n').enumerate() {
            if blocks_amdgpu(line) {
                removed.push(format!("line {}: `{}`", i + 1, line.trim()));
            } else {
                kept.push_str(line);
            }
        }
        if removed.is_empty() {
            continue;
        }
        out.push(Action {
            id: "fix.blacklist",
            fixes: vec!["driver.amdgpu-loaded".into()],
            summary: format!(
                "{}: remove {} so amdgpu can load; {then}{}",
                f.path,
                removed.join(", "),
                if live {
                    ""
                } else {
                    "; on the host `sudo modprobe amdgpu` loads it now"
                }
            ),
            change: Change::Edit {
                path: f.path.clone(),
                before: Some(f.text.clone()),
                after: kept,
            },
            needs,
            source: BLACKLIST_SOURCE,
        });
    }
    for f in packaged {
        let lines: Vec<String> = f
            .text
            .lines()
            .enumerate()
            .filter(|(_, l)| blocks_amdgpu(l))
            .map(|(i, l)| format!("{}:{} `{}`", f.path, i + 1, l.trim()))
            .collect();
        if !lines.is_empty() {
            notes.push(format!("amdgpu blacklist: {} belongs to a package; fix does not edit it: find the package (dpkg -S or rpm -qf) or override it with an /etc/modprobe.d file of the same name", lines.join(", ")));
        }
    }
    let params = cmdline_blocks(cmdline);
    if !params.is_empty() {
        notes.push(format!("amdgpu blacklist: `{}` on the kernel command line keeps amdgpu from loading; remove it where it is set (GRUB_CMDLINE_LINUX in /etc/default/grub, then sudo update-grub; or sudo grubby --update-kernel=ALL --remove-args=\"{}\") and reboot", params.join(" "), params.join(" ")));
    }
    if live && !out.is_empty() && params.is_empty() {
        out.push(Action {
            id: "fix.blacklist",
            fixes: vec!["driver.amdgpu-loaded".into()],
            summary: "load amdgpu now (the undo leaves it loaded: unloading the GPU driver can stop the display)"
                .into(),
            change: Change::Command {
                argv: vec!["modprobe".into(), "amdgpu".into()],
                undo: Vec::new(),
            },
            needs,
            source: BLACKLIST_SOURCE,
        });
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_blacklist_line_is_removed() {
        let f = ModprobeFile {
            path: "/etc/modprobe.d/gpu.conf".into(),
            text: "# keep the old card quiet\nblacklist radeon\nblacklist amdgpu\noptions snd_hda_intel power_save=1\n".into(),
        };
        let (a, notes) = plan_blacklist(&[f], &[], &[], Some("sudo update-initramfs -u"), false);
        assert!(notes.is_empty());
        assert_eq!(a.len(), 1);
        let Change::Edit { after, .. } = &a[0].change else {
            panic!()
        };
        assert_eq!(
            after,
            "# keep the old card quiet\nblacklist radeon\noptions snd_hda_intel power_save=1\n"
        );
        assert!(a[0].summary.contains("line 3: `blacklist amdgpu`"));
        assert!(a[0].summary.contains("sudo update-initramfs -u"));
        assert!(a[0].summary.contains("sudo modprobe amdgpu"));
    }

    #[test]
    fn a_command_line_blacklist_is_named_not_edited() {
        let cmd: Vec<String> = ["ro", "quiet", "modprobe.blacklist=nouveau,amdgpu"]
            .map(String::from)
            .to_vec();
        let (a, notes) = plan_blacklist(&[], &[], &cmd, None, true);
        assert!(a.is_empty());
        assert!(notes[0].contains("remove it where it is set"), "{notes:?}");
    }

    #[test]
    fn a_live_host_loads_the_module_after_the_edit() {
        let f = ModprobeFile {
            path: "/etc/modprobe.d/blacklist-amdgpu.conf".into(),
            text: "blacklist amdgpu\n".into(),
        };
        let (a, _) = plan_blacklist(&[f], &[], &[], Some("sudo dracut -f"), true);
        assert_eq!(a.len(), 2);
        let Change::Command { argv, undo } = &a[1].change else {
            panic!()
        };
        assert_eq!(argv, &["modprobe", "amdgpu"]);
        assert!(undo.is_empty());
    }
}
