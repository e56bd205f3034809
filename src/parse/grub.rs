//! GRUB's configuration, as far as it says which kernel boots next: `grubenv` (`saved_entry`, `next_entry`),
//! `/etc/default/grub` (`GRUB_DEFAULT`), the menu entries of `grub.cfg`, and Boot Loader Specification entries
//! (`/boot/loader/entries/*.conf`, RHEL and Fedora).
//!
//! Formats: GRUB manual, "Simple configuration" (`GRUB_DEFAULT`: a number, a title, an id, `saved`, or a
//! `>`-separated path into a submenu) and "Environment block" (`grubenv`: `name=value` lines, `#` padding), at
//! https://www.gnu.org/software/grub/manual/grub/grub.html; BLS entries: https://uapi-group.org/specifications/specs/boot_loader_specification/
//! (`linux` key).

/// One `menuentry` or `submenu` of grub.cfg.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuEntry {
    /// The quoted title.
    pub title: String,
    /// The `$menuentry_id_option` id, when given.
    pub id: Option<String>,
    /// The kernel release of its `linux` line (`6.8.0-49-generic` from `/boot/vmlinuz-6.8.0-49-generic`).
    pub kernel: Option<String>,
    /// The entries of a submenu (empty for a menuentry).
    pub children: Vec<MenuEntry>,
    /// True for a `submenu`.
    pub submenu: bool,
}

/// `name=value` lines of a grubenv block or a shell-style file (`/etc/default/grub`), quotes removed; comments and
/// `#` padding are skipped. The last assignment of a name wins, as the shell does.
pub fn assignments(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        out.retain(|(n, _)| n != k);
        out.push((k.to_string(), v.to_string()));
    }
    out
}

/// The value of `name` among [`assignments`].
pub fn value<'a>(a: &'a [(String, String)], name: &str) -> Option<&'a str> {
    a.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The kernel release a `linux` line or BLS `linux` key boots: the part after `vmlinuz-` of its first word.
pub fn kernel_of_linux_line(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let path = if first == "linux" || first == "linuxefi" || first == "linux16" {
        words.next()?
    } else {
        first
    };
    let name = path.rsplit('/').next()?;
    let release = name.strip_prefix("vmlinuz-")?;
    (!release.is_empty()).then(|| release.to_string())
}

/// The first quoted string of a line (`'…'` or `"…"`), and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let rest = &s[1..];
    let end = rest.find(q)?;
    Some((rest[..end].to_string(), &rest[end + 1..]))
}

/// The top-level entries of a grub.cfg, each submenu with its entries. Lines outside any entry are ignored; an entry
/// whose title is not quoted is skipped (grub-mkconfig always quotes).
pub fn menu_entries(text: &str) -> Vec<MenuEntry> {
    let mut stack: Vec<MenuEntry> = Vec::new();
    let mut top: Vec<MenuEntry> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let (submenu, rest) = if let Some(r) = l.strip_prefix("menuentry ") {
            (false, r)
        } else if let Some(r) = l.strip_prefix("submenu ") {
            (true, r)
        } else if l.starts_with('}') {
            if let Some(done) = stack.pop() {
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => top.push(done),
                }
            }
            continue;
        } else {
            if let (Some(e), Some(k)) = (stack.last_mut(), kernel_of_linux_line(l)) {
                if !e.submenu && e.kernel.is_none() {
                    e.kernel = Some(k);
                }
            }
            continue;
        };
        let Some((title, after)) = quoted(rest) else {
            continue;
        };
        let id = after
            .find("$menuentry_id_option")
            .and_then(|i| quoted(&after[i + "$menuentry_id_option".len()..]))
            .map(|(id, _)| id);
        if !l.ends_with('{') {
            continue;
        }
        stack.push(MenuEntry {
            title,
            id,
            kernel: None,
            children: Vec::new(),
            submenu,
        });
    }
    top
}

/// The kernel a selection (`GRUB_DEFAULT` or `saved_entry`: a number, title or id, or a `>` path) boots, or why
/// none: the selection names no entry, or the entry boots no Linux kernel.
pub fn select(entries: &[MenuEntry], selection: &str) -> Result<String, String> {
    let mut level = entries;
    let parts: Vec<&str> = selection.split('>').map(str::trim).collect();
    for (i, part) in parts.iter().enumerate() {
        let found = match part.parse::<usize>() {
            Ok(n) => level.get(n),
            Err(_) => level
                .iter()
                .find(|e| e.title == *part || e.id.as_deref() == Some(part)),
        };
        let Some(e) = found else {
            return Err(format!("no menu entry `{part}` (of `{selection}`)"));
        };
        if i + 1 == parts.len() {
            // A submenu chosen as a whole boots its first entry.
            let e = if e.submenu {
                e.children
                    .first()
                    .ok_or(format!("submenu `{}` is empty", e.title))?
            } else {
                e
            };
            return e
                .kernel
                .clone()
                .ok_or(format!("menu entry `{}` boots no Linux kernel", e.title));
        }
        level = &e.children;
    }
    Err(format!("empty selection `{selection}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shape of an Ubuntu 22.04 grub.cfg as `grub-mkconfig` (10_linux) writes it.
    const UBUNTU: &str = "\
### BEGIN /etc/grub.d/10_linux ###
menuentry 'Ubuntu' --class ubuntu --class gnu-linux --class gnu --class os $menuentry_id_option 'gnulinux-simple-1234' {
\trecordfail
\tlinux\t/boot/vmlinuz-6.8.0-49-generic root=UUID=1234 ro  quiet splash $vt_handoff
\tinitrd\t/boot/initrd.img-6.8.0-49-generic
}
submenu 'Advanced options for Ubuntu' $menuentry_id_option 'gnulinux-advanced-1234' {
\tmenuentry 'Ubuntu, with Linux 6.8.0-49-generic' --class ubuntu $menuentry_id_option 'gnulinux-6.8.0-49-generic-advanced-1234' {
\t\tlinux\t/boot/vmlinuz-6.8.0-49-generic root=UUID=1234 ro  quiet splash $vt_handoff
\t}
\tmenuentry 'Ubuntu, with Linux 5.15.0-127-generic' --class ubuntu $menuentry_id_option 'gnulinux-5.15.0-127-generic-advanced-1234' {
\t\tlinux\t/boot/vmlinuz-5.15.0-127-generic root=UUID=1234 ro  quiet splash $vt_handoff
\t}
}
menuentry 'UEFI Firmware Settings' $menuentry_id_option 'uefi-firmware' {
\tfwsetup
}
";

    #[test]
    fn selections_by_number_title_id_and_path() {
        let e = menu_entries(UBUNTU);
        assert_eq!(e.len(), 3);
        assert_eq!(select(&e, "0").unwrap(), "6.8.0-49-generic");
        assert_eq!(select(&e, "1>1").unwrap(), "5.15.0-127-generic");
        assert_eq!(
            select(
                &e,
                "gnulinux-advanced-1234>gnulinux-5.15.0-127-generic-advanced-1234"
            )
            .unwrap(),
            "5.15.0-127-generic"
        );
        assert_eq!(
            select(
                &e,
                "Advanced options for Ubuntu>Ubuntu, with Linux 5.15.0-127-generic"
            )
            .unwrap(),
            "5.15.0-127-generic"
        );
        assert_eq!(select(&e, "1").unwrap(), "6.8.0-49-generic");
        assert!(select(&e, "2")
            .unwrap_err()
            .contains("boots no Linux kernel"));
        assert!(select(&e, "7").unwrap_err().contains("no menu entry `7`"));
        assert!(select(&e, "1>9").is_err());
    }

    #[test]
    fn odd_grub_cfg_gives_no_entries_and_no_panic() {
        for odd in [
            "",
            "menuentry",
            "menuentry Ubuntu {",
            "}}}}",
            "menuentry 'a {\n linux /vmlinuz-1\n",
            "submenu 'x' {\nsubmenu 'y' {\n",
            "\u{0}\u{fffd}menuentry '",
        ] {
            let e = menu_entries(odd);
            let _ = select(&e, "0");
            let _ = select(&e, ">>");
        }
        assert!(menu_entries("menuentry 'a' {\n linux /vmlinuz-1\n").is_empty());
    }

    #[test]
    fn assignments_unquote_and_the_last_wins() {
        let a = assignments(
            "# GRUB Environment Block\nsaved_entry=gnulinux-x>gnulinux-y\nnext_entry=\n######\n",
        );
        assert_eq!(value(&a, "saved_entry"), Some("gnulinux-x>gnulinux-y"));
        assert_eq!(value(&a, "next_entry"), None);
        let d = assignments("GRUB_DEFAULT=0\nGRUB_DEFAULT=\"saved\"\nGRUB_CMDLINE_LINUX='quiet'\n");
        assert_eq!(value(&d, "GRUB_DEFAULT"), Some("saved"));
        assert_eq!(value(&d, "GRUB_CMDLINE_LINUX"), Some("quiet"));
    }

    #[test]
    fn linux_lines_name_the_release() {
        assert_eq!(
            kernel_of_linux_line("linux /vmlinuz-5.14.0-427.22.1.el9_4.x86_64").as_deref(),
            Some("5.14.0-427.22.1.el9_4.x86_64")
        );
        assert_eq!(
            kernel_of_linux_line("linuxefi\t/boot/vmlinuz-6.1.0-34-amd64 root=x").as_deref(),
            Some("6.1.0-34-amd64")
        );
        assert_eq!(kernel_of_linux_line("linux /boot/bzImage"), None);
        assert_eq!(kernel_of_linux_line("linux"), None);
    }
}
