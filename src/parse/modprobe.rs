//! modprobe.d lines and kernel parameters that keep the amdgpu module from loading. The format is modprobe.d(5)'s
//! (kmod, https://man7.org/linux/man-pages/man5/modprobe.d.5.html): `blacklist modulename` stops loading by alias,
//! `install modulename command...` runs the command instead of loading; the kernel's `modprobe.blacklist=` and
//! `module_blacklist=` take comma-separated names. A module name's `-` and `_` are the same.

fn is_amdgpu(name: &str) -> bool {
    name.replace('-', "_") == "amdgpu"
}

/// Whether a modprobe.d line keeps amdgpu from loading: `blacklist amdgpu`, or `install amdgpu` with a command that
/// does nothing (`/bin/false`, `/bin/true`). A comment (`#` onwards) is not part of the line.
pub fn blocks_amdgpu(line: &str) -> bool {
    let body = line.split('#').next().unwrap_or_default();
    let w: Vec<&str> = body.split_whitespace().collect();
    match w.as_slice() {
        ["blacklist", m] => is_amdgpu(m),
        ["install", m, cmd, ..] => {
            let noop = ["false", "true"]
                .iter()
                .any(|n| *cmd == *n || cmd.ends_with(&format!("/{n}")));
            is_amdgpu(m) && noop
        }
        _ => false,
    }
}

/// The kernel command-line parameters that keep amdgpu from loading.
pub fn cmdline_blocks(cmdline: &[String]) -> Vec<String> {
    cmdline
        .iter()
        .filter(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                (k == "modprobe.blacklist" || k == "module_blacklist")
                    && v.split(',').any(is_amdgpu)
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_blocks_amdgpu_and_what_does_not() {
        assert!(blocks_amdgpu("blacklist amdgpu"));
        assert!(blocks_amdgpu("  blacklist   amdgpu  # no\n"));
        assert!(blocks_amdgpu("install amdgpu /bin/false"));
        assert!(!blocks_amdgpu("# blacklist amdgpu"));
        assert!(!blocks_amdgpu("blacklist amdgpu_extra"));
        assert!(!blocks_amdgpu("options amdgpu ppfeaturemask=0xffffffff"));
        assert!(!blocks_amdgpu(
            "install amdgpu /sbin/modprobe --ignore-install amdgpu"
        ));
        let cmd: Vec<String> = [
            "ro",
            "quiet",
            "modprobe.blacklist=nouveau,amdgpu",
            "module_blacklist=radeon",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(cmdline_blocks(&cmd), ["modprobe.blacklist=nouveau,amdgpu"]);
    }
}
