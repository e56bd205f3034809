//! Installing what the host lacks: ROCm's user space and amdgpu-dkms for the target release, and NVIDIA's container
//! toolkit. These are the distribution's exact commands, printed for the user to run: `rocmenv fix --apply` never
//! runs them (an install reaches outside the files fix journals, and its undo is the package manager's).
//!
//! The command forms are the vendors':
//! - AMD's quick start, per distribution (Ubuntu `apt`, RHEL `dnf`, SLES `zypper`):
//!   `ROCm/rocm-install-on-linux@f297bde3afa98d750d1aa460386491db9a721f30:docs/install/quick-start.rst`; the
//!   installer package's directory and version are `docs/conf.py`'s `amdgpu_version` (`6.2`, `6.2.2`: the release,
//!   without a `.0` patch) and `amdgpu_install_version` (`6.2.60202-1`: X.Y.(X·10000+Y·100+Z)-1), as that file
//!   wrote them for 6.0.2, 6.1, 6.1.1, 6.1.2, 6.2, 6.2.1 and 6.2.2 (its history at that commit). The form is taken for
//!   the 6.x releases of the legacy stream; for others a note points to AMD's page for the release.
//! - NVIDIA's container toolkit install guide (apt, yum/dnf, zypper):
//!   `NVIDIA/cloud-native-docs@bd793f3cab0a7e8ff901118b4dc6dff6aeb3bbd9:container-toolkit/install-guide.md`.
//!
//! Every host value that reaches a command (the Ubuntu codename, the RHEL or SLES version) is checked to be a plain
//! word or number first; the ROCm version comes from the matrices as numbers.

use super::{Action, Change, Needs};
use crate::host::OsFacts;
use crate::version::Version;

/// AMD's quick start (command forms).
pub const AMD_INSTALL_SOURCE: &str =
    "ROCm/rocm-install-on-linux@f297bde3afa98d750d1aa460386491db9a721f30:docs/install/quick-start.rst (and docs/conf.py)";
/// NVIDIA's container toolkit install guide.
pub const TOOLKIT_SOURCE: &str =
    "NVIDIA/cloud-native-docs@bd793f3cab0a7e8ff901118b4dc6dff6aeb3bbd9:container-toolkit/install-guide.md";

/// The package manager family of a host, with the values AMD's repository paths need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distro {
    /// Ubuntu or a derivative: its Ubuntu codename (`jammy`).
    Ubuntu(String),
    /// Red Hat Enterprise Linux: `VERSION_ID` (`9.4`) and its major (`9`).
    Rhel(String, String),
    /// SUSE Linux Enterprise Server: `VERSION_ID` (`15.5`).
    Sles(String),
}

/// A codename as the Ubuntu archive spells it: 2-20 lower-case letters.
fn plain_codename(s: &str) -> bool {
    (2..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_lowercase())
}

/// A distribution version: digits, or digits `.` digits.
fn plain_version(s: &str) -> bool {
    let mut parts = s.split('.');
    let ok = |p: Option<&str>| {
        p.is_some_and(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let first = parts.next();
    let rest: Vec<&str> = parts.collect();
    ok(first) && rest.len() <= 1 && rest.iter().all(|p| ok(Some(p)))
}

/// The host's family from os-release, or why its values cannot go into a command.
pub fn distro_of(os: Option<&OsFacts>) -> Result<Distro, String> {
    let Some(os) = os else {
        return Err("the distribution is unknown (no os-release)".into());
    };
    let id = os.id.clone().unwrap_or_default();
    let like = |x: &str| id == x || os.id_like.iter().any(|l| l == x);
    let version = os.version_id.clone().unwrap_or_default();
    if id == "ubuntu" || os.ubuntu_codename.is_some() {
        let code = os
            .ubuntu_codename
            .clone()
            .or_else(|| os.codename.clone())
            .unwrap_or_default();
        if !plain_codename(&code) {
            return Err(format!("os-release's Ubuntu codename `{}` is not a plain codename, so it is not put into a command", crate::text::one_line(&code)));
        }
        return Ok(Distro::Ubuntu(code));
    }
    if id == "rhel" || id == "sles" {
        if !plain_version(&version) {
            return Err(format!("os-release's VERSION_ID `{}` is not a plain version, so it is not put into a command", crate::text::one_line(&version)));
        }
        if id == "sles" {
            return Ok(Distro::Sles(version));
        }
        let major = version.split('.').next().unwrap_or_default().to_string();
        return Ok(Distro::Rhel(version, major));
    }
    let family = if like("debian") {
        "Debian family"
    } else if like("rhel") || like("fedora") {
        "RHEL family"
    } else {
        "distribution"
    };
    Err(format!(
        "AMD's repository has no path for this {family} (`{}`); AMD publishes Ubuntu, RHEL and SLES paths",
        crate::text::one_line(&id)
    ))
}

/// `amdgpu_version` (the repository directory) and `amdgpu_install_version` of a release.
pub fn amdgpu_install_names(v: &Version) -> (String, String) {
    let (x, y, z) = (v.major(), v.minor(), v.patch());
    let dir = if z == 0 {
        format!("{x}.{y}")
    } else {
        format!("{x}.{y}.{z}")
    };
    (dir, format!("{x}.{y}.{}-1", x * 10000 + y * 100 + z))
}

/// AMD's commands to install `packages` (`amdgpu-dkms`, `rocm`) of release `v` on `d`.
pub fn amd_commands(d: &Distro, v: &Version, packages: &[&str]) -> Vec<String> {
    let (dir, pkg) = amdgpu_install_names(v);
    let dkms = packages.contains(&"amdgpu-dkms");
    let list = packages.join(" ");
    let mut c: Vec<String> = Vec::new();
    match d {
        Distro::Ubuntu(code) => {
            c.push("sudo apt update".into());
            if dkms {
                c.push("sudo apt install \"linux-headers-$(uname -r)\" \"linux-modules-extra-$(uname -r)\"".into());
            }
            c.push(format!("wget https://repo.radeon.com/amdgpu-install/{dir}/ubuntu/{code}/amdgpu-install_{pkg}_all.deb"));
            c.push(format!("sudo apt install ./amdgpu-install_{pkg}_all.deb"));
            c.push("sudo apt update".into());
            c.push(format!("sudo apt install {list}"));
        }
        Distro::Rhel(ver, major) => {
            c.push(format!(
                "wget https://dl.fedoraproject.org/pub/epel/epel-release-latest-{major}.noarch.rpm"
            ));
            c.push(format!(
                "sudo rpm -ivh epel-release-latest-{major}.noarch.rpm"
            ));
            c.push("sudo dnf install dnf-plugin-config-manager".into());
            c.push("sudo crb enable".into());
            if dkms {
                c.push(
                    "sudo dnf install \"kernel-headers-$(uname -r)\" \"kernel-devel-$(uname -r)\""
                        .into(),
                );
            }
            c.push(format!("sudo dnf install https://repo.radeon.com/amdgpu-install/{dir}/rhel/{ver}/amdgpu-install-{pkg}.el{major}.noarch.rpm"));
            c.push("sudo dnf clean all".into());
            c.push(format!("sudo dnf install {list}"));
        }
        Distro::Sles(ver) => {
            if dkms {
                c.push("sudo zypper install kernel-default-devel".into());
            }
            c.push(format!("sudo zypper --no-gpg-checks install https://repo.radeon.com/amdgpu-install/{dir}/sle/{ver}/amdgpu-install-{pkg}.noarch.rpm"));
            c.push("sudo zypper refresh".into());
            c.push(format!("sudo zypper install {list}"));
        }
    }
    c
}

/// A package manager NVIDIA's guide has steps for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageManager {
    /// Debian, Ubuntu and their derivatives.
    Apt,
    /// The RHEL and Fedora family.
    Yum,
    /// SUSE.
    Zypper,
}

/// The host's package manager by os-release `ID` and `ID_LIKE`.
pub fn package_manager(os: Option<&OsFacts>) -> Option<PackageManager> {
    let os = os?;
    let ids: Vec<&str> = os
        .id
        .iter()
        .chain(os.id_like.iter())
        .map(String::as_str)
        .collect();
    let any = |xs: &[&str]| ids.iter().any(|i| xs.contains(i));
    if any(&["debian", "ubuntu"]) {
        Some(PackageManager::Apt)
    } else if any(&[
        "rhel",
        "fedora",
        "centos",
        "rocky",
        "almalinux",
        "ol",
        "amzn",
    ]) {
        Some(PackageManager::Yum)
    } else if any(&["sles", "suse", "opensuse", "opensuse-leap"]) {
        Some(PackageManager::Zypper)
    } else {
        None
    }
}

/// NVIDIA's commands to install the container toolkit with `pm`.
pub fn toolkit_commands(pm: PackageManager) -> Vec<String> {
    match pm {
        PackageManager::Apt => vec![
            "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg && curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list".into(),
            "sudo apt-get update".into(),
            "sudo apt-get install -y nvidia-container-toolkit".into(),
        ],
        PackageManager::Yum => vec![
            "curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo | sudo tee /etc/yum.repos.d/nvidia-container-toolkit.repo".into(),
            "sudo yum install -y nvidia-container-toolkit".into(),
        ],
        PackageManager::Zypper => vec![
            "sudo zypper ar https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo".into(),
            "sudo zypper --gpg-auto-import-keys install -y nvidia-container-toolkit".into(),
        ],
    }
}

/// What the host lacks, as judged by the caller from doctor's findings.
#[derive(Debug, Clone, Default)]
pub struct Missing<'a> {
    /// ROCm's user space of this release (none installed, or an older one), with the finding.
    pub rocm: Option<(&'a Version, String)>,
    /// amdgpu-dkms, with the finding it fixes and why.
    pub dkms: Option<(&'static str, String)>,
    /// The release whose amdgpu-dkms to install (the target's).
    pub dkms_release: Option<&'a Version>,
    /// nvidia-container-toolkit, for Docker and NVIDIA GPUs.
    pub toolkit: bool,
}

/// The install actions (printed, never run), and notes for what has no command here.
pub fn plan_install(os: Option<&OsFacts>, m: &Missing) -> (Vec<Action>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if m.rocm.is_none() && m.dkms.is_none() && !m.toolkit {
        return (out, notes);
    }
    let distro = distro_of(os);
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: m.dkms.is_some(),
    };
    let release = m.rocm.as_ref().map(|(v, _)| *v).or(m.dkms_release);
    if let Some(v) = release.filter(|_| m.rocm.is_some() || m.dkms.is_some()) {
        let mut packages = Vec::new();
        let mut fixes = Vec::new();
        let mut why = Vec::new();
        if let Some((id, w)) = &m.dkms {
            packages.push("amdgpu-dkms");
            fixes.push(id.to_string());
            why.push(w.clone());
        }
        if let Some((_, w)) = &m.rocm {
            packages.push("rocm");
            fixes.push("rocm.installed".to_string());
            why.push(w.clone());
        }
        let page = format!("https://rocm.docs.amd.com/projects/install-on-linux/en/docs-{v}/install/quick-start.html");
        match &distro {
            Ok(d) if v.major() == 6 => out.push(Action {
                id: "fix.install",
                fixes,
                summary: format!(
                    "install ROCm {v}'s {} ({}) from AMD's package repository; rocmenv prints these, never runs them{}",
                    packages.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" and "),
                    why.join("; "),
                    if m.dkms.is_some() { "; reboot after amdgpu-dkms" } else { "" }
                ),
                change: Change::Manual {
                    commands: amd_commands(d, v, &packages),
                },
                needs,
                source: AMD_INSTALL_SOURCE,
            }),
            Ok(_) => notes.push(format!("install: ROCm {v} ({}): rocmenv has AMD's command forms for the 6.x releases only; follow {page}", packages.join(" and "))),
            Err(e) => notes.push(format!("install: ROCm {v} ({}): {e}; follow {page}", packages.join(" and "))),
        }
    }
    if m.toolkit {
        match package_manager(os) {
            Some(pm) => out.push(Action {
                id: "fix.install",
                fixes: vec!["docker.gpu-runtime".into()],
                summary: "install nvidia-container-toolkit from NVIDIA's repository, then run `rocmenv fix --apply` again for Docker's runtime; rocmenv prints these, never runs them".into(),
                change: Change::Manual {
                    commands: toolkit_commands(pm),
                },
                needs: Needs {
                    reboot: false,
                    ..needs
                },
                source: TOOLKIT_SOURCE,
            }),
            None => notes.push(format!("install: nvidia-container-toolkit: NVIDIA's guide has steps for apt, yum/dnf and zypper, and this distribution uses none of them that rocmenv knows; follow it ({TOOLKIT_SOURCE})")),
        }
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(id: &str, version: &str, codename: Option<&str>) -> OsFacts {
        OsFacts {
            id: Some(id.into()),
            id_like: Vec::new(),
            version_id: Some(version.into()),
            point_release: None,
            pretty_name: None,
            codename: codename.map(String::from),
            ubuntu_codename: codename.map(String::from),
        }
    }

    #[test]
    fn the_installer_names_follow_amds_conf_py() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(
            amdgpu_install_names(&v("6.2.2")),
            ("6.2.2".into(), "6.2.60202-1".into())
        );
        assert_eq!(
            amdgpu_install_names(&v("6.2.0")),
            ("6.2".into(), "6.2.60200-1".into())
        );
        assert_eq!(
            amdgpu_install_names(&v("6.0.2")),
            ("6.0.2".into(), "6.0.60002-1".into())
        );
    }

    #[test]
    fn ubuntu_and_rhel_commands() {
        let v: Version = "6.2.4".parse().unwrap();
        let d = distro_of(Some(&os("ubuntu", "22.04", Some("jammy")))).unwrap();
        let c = amd_commands(&d, &v, &["rocm"]);
        assert!(c.contains(&"wget https://repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb".to_string()), "{c:?}");
        assert_eq!(c.last().unwrap(), "sudo apt install rocm");
        let d = distro_of(Some(&os("rhel", "9.4", None))).unwrap();
        let c = amd_commands(&d, &v, &["amdgpu-dkms", "rocm"]);
        assert!(c.contains(&"sudo dnf install https://repo.radeon.com/amdgpu-install/6.2.4/rhel/9.4/amdgpu-install-6.2.60204-1.el9.noarch.rpm".to_string()), "{c:?}");
        assert_eq!(c.last().unwrap(), "sudo dnf install amdgpu-dkms rocm");
    }

    #[test]
    fn host_values_with_shell_characters_are_refused() {
        for (id, ver, code) in [
            ("ubuntu", "22.04", Some("jammy;reboot")),
            ("ubuntu", "22.04", Some("$(id)")),
            ("rhel", "9.4 && reboot", None),
            ("rhel", "9.4.1.2", None),
        ] {
            let e = distro_of(Some(&os(id, ver, code))).unwrap_err();
            assert!(e.contains("not put into a command"), "{e}");
        }
        let v: Version = "6.2.4".parse().unwrap();
        let missing = Missing {
            rocm: Some((&v, "none installed".into())),
            ..Missing::default()
        };
        let (a, notes) = plan_install(Some(&os("ubuntu", "22.04", Some("x`id`"))), &missing);
        assert!(
            a.is_empty() && notes[0].contains("not put into a command"),
            "{notes:?}"
        );
        // The toolkit's commands hold no host value: a Debian host gets apt's.
        let missing = Missing {
            toolkit: true,
            ..Missing::default()
        };
        let (a, _) = plan_install(Some(&os("debian", "12", None)), &missing);
        let Change::Manual { commands } = &a[0].change else {
            panic!()
        };
        assert_eq!(
            commands.last().unwrap(),
            "sudo apt-get install -y nvidia-container-toolkit"
        );
    }
}
