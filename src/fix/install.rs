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
//!   the 6.x releases of the legacy stream.
//! - AMD's quick start for the 7.x releases of the legacy stream (7.0.0-7.2.x), where the installer registers
//!   both ROCm's and the separate AMD GPU Driver's repositories, and ROCm (with `python3-setuptools
//!   python3-wheel` and the render/video groups) and amdgpu-dkms (with the kernel's headers) are then installed
//!   apart: `ROCm/amd-rocm-programming-guide@da342f822145a771d6af17b89b90702a54e4e957:docs/install/quick-start.rst`
//!   (AMD's copy of the install-on-linux quick start, with its `docs/conf.py` for 7.1.1). Its `conf.py` names the
//!   installer `7.1.1.70101-1` in directory `7.1.1`; `ROCm/rocm-install-on-linux@0078423c905112fc8de1afe7b8439ff429194266:docs/conf.py`
//!   names 7.0.0's `7.0.70000-1` in directory `7.0`: for 7.x the package version is the directory, `.`,
//!   X·10000+Y·100+Z and `-1` (6.x's had no patch in front of the number: `6.2.60202-1` in `6.2.2`). The later
//!   7.2.x quick start (`ROCm/rocm-install-on-linux@009eca53b5f4392a4769ca0581e9735f69f7de48:docs/install/quick-start.rst`)
//!   has the same commands in three sections, plus two `sed` lines that rewrite the installed repository files
//!   from 30.30.2/7.2.2 to 30.30.1/7.2.1, a fix for one release that rocmenv does not print. For other releases
//!   (the Core SDK, 7.14 and 10.x) a note points to AMD's page for the release.
//! - Under WSL, AMD's ROCm-on-WSL steps instead (Ubuntu only; no amdgpu-dkms, no kernel headers: the Windows driver
//!   drives the GPU). The 6.x WSL packages: the release's installer, then `amdgpu-install -y --usecase=wsl,rocm
//!   --no-dkms`, as AMD quotes the commands of its WSL install page ("Install Radeon software for WSL with ROCm") in
//!   https://github.com/ROCm/legacy-rocm-build/issues/4866 (alexrosen45, 2025-06-04: 6.3.4's installer on Ubuntu
//!   24.04, then that line); the page itself, one per release (6.1.3's:
//!   https://rocm.docs.amd.com/projects/radeon/en/docs-6.1.3/docs/install/wsl/install-radeon.html), could not be
//!   read here. The installer's name follows the conf.py rule above. From ROCm 7.1 on,
//!   librocdxg's route: ROCm's user space from the 7.x quick start (its ROCm steps only), then librocdxg built and
//!   installed inside WSL and `HSA_ENABLE_DXG_DETECTION=1`:
//!   `ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md` (Quickstart, steps 1-4).
//! - NVIDIA's container toolkit install guide (apt, yum/dnf, zypper):
//!   `NVIDIA/cloud-native-docs@bd793f3cab0a7e8ff901118b4dc6dff6aeb3bbd9:container-toolkit/install-guide.md`.
//!
//! Every host value that reaches a command (the Ubuntu codename, the RHEL or SLES version) is checked to be a plain
//! word or number first; the ROCm version comes from the matrices as numbers.

use super::{Action, Change, Needs};
use crate::host::OsFacts;
use crate::matrix::{RocmStream, WslRelease};
use crate::version::Version;

/// AMD's quick start (command forms).
pub const AMD_INSTALL_SOURCE: &str =
    "ROCm/rocm-install-on-linux@f297bde3afa98d750d1aa460386491db9a721f30:docs/install/quick-start.rst (and docs/conf.py)";
/// AMD's quick start for 7.x (command forms) and the installer names of 7.1.1 and 7.0.0.
pub const AMD_INSTALL_SOURCE_7: &str = "ROCm/amd-rocm-programming-guide@da342f822145a771d6af17b89b90702a54e4e957:docs/install/quick-start.rst (and docs/conf.py); ROCm/rocm-install-on-linux@0078423c905112fc8de1afe7b8439ff429194266:docs/conf.py";
/// AMD's ROCm-on-WSL steps for the 6.x WSL packages (the `wsl` use case), and the installer names.
pub const AMD_WSL_SOURCE: &str = "AMD's WSL install commands as AMD quotes them in https://github.com/ROCm/legacy-rocm-build/issues/4866 (2025-06-04; the page: https://rocm.docs.amd.com/projects/radeon/en/docs-6.1.3/docs/install/wsl/install-radeon.html for 6.1.3); installer names: ROCm/rocm-install-on-linux@f297bde3afa98d750d1aa460386491db9a721f30:docs/conf.py";
/// AMD's librocdxg route (ROCm 7.1 on): the 7.x quick start's ROCm steps, then librocdxg.
pub const AMD_WSL_SOURCE_7: &str = "ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md (Quickstart); ROCm/amd-rocm-programming-guide@da342f822145a771d6af17b89b90702a54e4e957:docs/install/quick-start.rst (the ROCm steps)";
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

/// `amdgpu_version` and `amdgpu_install_version` of a 7.x release: `7.0` and `7.0.70000-1`, `7.1.1` and
/// `7.1.1.70101-1` (the directory, then X·10000+Y·100+Z).
pub fn amdgpu_install_names_7(v: &Version) -> (String, String) {
    let (dir, _) = amdgpu_install_names(v);
    let n = v.major() * 10000 + v.minor() * 100 + v.patch();
    let pkg = format!("{dir}.{n}-1");
    (dir, pkg)
}

/// AMD's 7.x commands to install `packages` (`amdgpu-dkms`, `rocm`) of release `v` on `d`: the installer (it
/// registers ROCm's and the AMD GPU Driver's repositories), then ROCm, then amdgpu-dkms, each as AMD's quick start
/// has it.
pub fn amd_commands_7(d: &Distro, v: &Version, packages: &[&str]) -> Vec<String> {
    let (dir, pkg) = amdgpu_install_names_7(v);
    let (dkms, rocm) = (
        packages.contains(&"amdgpu-dkms"),
        packages.contains(&"rocm"),
    );
    let groups = "sudo usermod -a -G render,video $LOGNAME";
    let mut c: Vec<String> = Vec::new();
    let mut push = |on: bool, xs: &[&str]| {
        if on {
            c.extend(xs.iter().map(|x| x.to_string()));
        }
    };
    match d {
        Distro::Ubuntu(code) => {
            let deb = format!("amdgpu-install_{pkg}_all.deb");
            let get =
                format!("wget https://repo.radeon.com/amdgpu-install/{dir}/ubuntu/{code}/{deb}");
            let add = format!("sudo apt install ./{deb}");
            push(true, &[&get, &add, "sudo apt update"]);
            push(
                rocm,
                &[
                    "sudo apt install python3-setuptools python3-wheel",
                    groups,
                    "sudo apt install rocm",
                ],
            );
            push(dkms, &["sudo apt install \"linux-headers-$(uname -r)\" \"linux-modules-extra-$(uname -r)\"", "sudo apt install amdgpu-dkms"]);
        }
        Distro::Rhel(ver, major) => {
            let path = if major == "9" { ver } else { major };
            let rpm = format!("sudo dnf install https://repo.radeon.com/amdgpu-install/{dir}/rhel/{path}/amdgpu-install-{pkg}.el{major}.noarch.rpm");
            push(true, &[&rpm, "sudo dnf clean all"]);
            let epel = format!("epel-release-latest-{major}.noarch.rpm");
            let get = format!("wget https://dl.fedoraproject.org/pub/epel/{epel}");
            let add = format!("sudo rpm -ivh {epel}");
            let crb = format!(
                "sudo dnf config-manager --enable codeready-builder-for-rhel-{major}-x86_64-rpms"
            );
            push(
                rocm,
                &[
                    &get,
                    &add,
                    &crb,
                    "sudo dnf install python3-setuptools python3-wheel",
                    groups,
                    "sudo dnf install rocm",
                ],
            );
            let headers = if major == "8" {
                "sudo dnf install \"kernel-headers-$(uname -r)\" \"kernel-devel-$(uname -r)\""
            } else {
                "sudo dnf install \"kernel-headers-$(uname -r)\" \"kernel-devel-$(uname -r)\" \"kernel-devel-matched-$(uname -r)\""
            };
            push(dkms, &[headers, "sudo dnf install amdgpu-dkms"]);
        }
        Distro::Sles(ver) => {
            let connect = |m: &str| format!("sudo SUSEConnect -p {m}/{ver}/x86_64");
            let rpm = format!("sudo zypper --no-gpg-checks install https://repo.radeon.com/amdgpu-install/{dir}/sle/{ver}/amdgpu-install-{pkg}.noarch.rpm");
            let (a, b, h) = (
                connect("sle-module-desktop-applications"),
                connect("sle-module-development-tools"),
                connect("PackageHub"),
            );
            push(
                true,
                &[
                    &a,
                    &b,
                    &h,
                    "sudo zypper install zypper",
                    &rpm,
                    "sudo zypper --gpg-auto-import-keys refresh",
                ],
            );
            push(rocm, &["sudo zypper addrepo https://download.opensuse.org/repositories/science/SLE_15_SP5/science.repo", "sudo zypper install python3-setuptools python3-wheel", groups, "sudo zypper install rocm"]);
            push(
                dkms,
                &[
                    "sudo zypper install kernel-default-devel",
                    "sudo zypper install amdgpu-dkms",
                ],
            );
        }
    }
    c
}

/// AMD's steps to install ROCm-on-WSL release `w` on Ubuntu `code`: no amdgpu-dkms and no kernel headers (WSL's kernel
/// is Microsoft's and the Windows driver drives the GPU). 6.x: the installer, then the `wsl` use case. With librocdxg
/// (7.1 on): the 7.x quick start's ROCm steps, then librocdxg built against the Windows SDK (installed on Windows
/// first) and loaded with `HSA_ENABLE_DXG_DETECTION=1`, as librocdxg's README has them.
pub fn wsl_commands(code: &str, w: &WslRelease) -> Vec<String> {
    if w.rocdxg.is_some() {
        let mut c = amd_commands_7(&Distro::Ubuntu(code.to_string()), &w.release, &["rocm"]);
        c.extend(
            [
                "git clone https://github.com/ROCm/librocdxg.git",
                "cd librocdxg",
                "export win_sdk='/mnt/c/Program Files (x86)/Windows Kits/10/Include/10.0.26100.0/'",
                "mkdir -p build",
                "cd build",
                "cmake .. -DWIN_SDK=\"${win_sdk}/shared\"",
                "make",
                "sudo make install",
                "export HSA_ENABLE_DXG_DETECTION=1",
            ]
            .map(String::from),
        );
        return c;
    }
    let (dir, pkg) = amdgpu_install_names(&w.release);
    vec![
        "sudo apt update".into(),
        format!("wget https://repo.radeon.com/amdgpu-install/{dir}/ubuntu/{code}/amdgpu-install_{pkg}_all.deb"),
        format!("sudo apt install ./amdgpu-install_{pkg}_all.deb"),
        "amdgpu-install -y --usecase=wsl,rocm --no-dkms".into(),
    ]
}

/// Under WSL, the action that installs ROCm-on-WSL release `w` (or why there is none for this host).
fn plan_wsl(os: Option<&OsFacts>, w: &WslRelease, why: &str) -> Result<Action, String> {
    let code = match distro_of(os)? {
        Distro::Ubuntu(code) => code,
        _ => return Err("AMD's ROCm-on-WSL steps are for Ubuntu only".into()),
    };
    let listed = os.is_some_and(|o| {
        w.distros.iter().any(|d| {
            o.id.as_deref() == Some(d.id.as_str())
                && o.version_id.as_deref() == Some(d.version.as_str())
        })
    });
    if !listed {
        let d: Vec<String> = w
            .distros
            .iter()
            .map(|d| format!("{} {}", d.id, d.version))
            .collect();
        return Err(format!(
            "AMD lists ROCm {} on WSL for {} only",
            w.release,
            d.join(", ")
        ));
    }
    let route = match &w.rocdxg {
        Some(r) => format!(" with librocdxg {r} (install the Windows SDK on Windows first)"),
        None => String::new(),
    };
    Ok(Action {
        id: "fix.install",
        fixes: vec!["rocm.installed".into(), "wsl.rocm-support".into()],
        summary: format!(
            "install AMD's ROCm {} on WSL{route} ({why}); on Windows, {} drives the GPU: no amdgpu-dkms here. rocmenv prints these, never runs them",
            w.release,
            w.driver_text()
        ),
        change: Change::Manual {
            commands: wsl_commands(&code, w),
        },
        needs: Needs {
            root: true,
            // The 7.x quick start's ROCm steps add the user to the render and video groups.
            relogin: w.rocdxg.is_some(),
            reboot: false,
        },
        source: if w.rocdxg.is_some() {
            AMD_WSL_SOURCE_7
        } else {
            AMD_WSL_SOURCE
        },
    })
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
    /// The target release's stream (7.x commands are the legacy stream's; the Core SDK's 7.14 has none here).
    pub stream: Option<RocmStream>,
    /// nvidia-container-toolkit, for Docker and NVIDIA GPUs.
    pub toolkit: bool,
    /// Under WSL: AMD's ROCm-on-WSL release to install instead of the Linux steps, and why.
    pub wsl: Option<(&'a WslRelease, String)>,
}

/// The install actions (printed, never run), and notes for what has no command here.
pub fn plan_install(os: Option<&OsFacts>, m: &Missing) -> (Vec<Action>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if m.rocm.is_none() && m.dkms.is_none() && !m.toolkit && m.wsl.is_none() {
        return (out, notes);
    }
    if let Some((w, why)) = &m.wsl {
        match plan_wsl(os, w, why) {
            Ok(a) => out.push(a),
            Err(e) => notes.push(format!(
                "install: ROCm {} on WSL ({why}): {e}; follow https://rocm.docs.amd.com/projects/radeon/en/docs-6.1.3/docs/install/wsl/install-radeon.html for 6.x or ROCm/librocdxg's README for 7.2.x",
                w.release
            )),
        }
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
        let legacy = m.stream == Some(RocmStream::Legacy);
        // 7.x's ROCm steps add the user to the render and video groups: a new login takes them.
        let form = |d: &Distro| match v.major() {
            6 => Some((amd_commands(d, v, &packages), AMD_INSTALL_SOURCE, false)),
            7 if legacy => Some((
                amd_commands_7(d, v, &packages),
                AMD_INSTALL_SOURCE_7,
                m.rocm.is_some(),
            )),
            _ => None,
        };
        match distro.as_ref().map(form) {
            Ok(Some((commands, source, relogin))) => out.push(Action {
                id: "fix.install",
                fixes,
                summary: format!(
                    "install ROCm {v}'s {} ({}) from AMD's package repository; rocmenv prints these, never runs them{}",
                    packages.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" and "),
                    why.join("; "),
                    if m.dkms.is_some() { "; reboot after amdgpu-dkms" } else { "" }
                ),
                change: Change::Manual { commands },
                needs: Needs { relogin, ..needs },
                source,
            }),
            Ok(None) => notes.push(format!("install: ROCm {v} ({}): rocmenv has AMD's command forms for the 6.x and 7.0-7.2 releases only; follow {page}", packages.join(" and "))),
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
    fn the_7x_installer_names_follow_amds_conf_py() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        // rocm-install-on-linux@0078423c's conf.py (7.0.0) and amd-rocm-programming-guide@da342f82's (7.1.1).
        assert_eq!(
            amdgpu_install_names_7(&v("7.0.0")),
            ("7.0".into(), "7.0.70000-1".into())
        );
        assert_eq!(
            amdgpu_install_names_7(&v("7.1.1")),
            ("7.1.1".into(), "7.1.1.70101-1".into())
        );
        assert_eq!(
            amdgpu_install_names_7(&v("7.2.4")),
            ("7.2.4".into(), "7.2.4.70204-1".into())
        );
    }

    #[test]
    fn the_7x_commands_per_distribution() {
        let v: Version = "7.2.4".parse().unwrap();
        let d = distro_of(Some(&os("ubuntu", "24.04", Some("noble")))).unwrap();
        let c = amd_commands_7(&d, &v, &["amdgpu-dkms", "rocm"]);
        assert_eq!(c[0], "wget https://repo.radeon.com/amdgpu-install/7.2.4/ubuntu/noble/amdgpu-install_7.2.4.70204-1_all.deb");
        assert_eq!(
            c[1],
            "sudo apt install ./amdgpu-install_7.2.4.70204-1_all.deb"
        );
        assert!(c.contains(&"sudo apt install rocm".to_string()), "{c:?}");
        assert_eq!(c.last().unwrap(), "sudo apt install amdgpu-dkms");
        // Only what is missing: no driver steps for rocm alone, no ROCm steps for amdgpu-dkms alone.
        let c = amd_commands_7(&d, &v, &["rocm"]);
        assert!(
            !c.iter()
                .any(|x| x.contains("dkms") || x.contains("linux-headers")),
            "{c:?}"
        );
        let c = amd_commands_7(&d, &v, &["amdgpu-dkms"]);
        assert!(
            !c.iter()
                .any(|x| x.contains("rocm") || x.contains("usermod")),
            "{c:?}"
        );
        // RHEL 9 names the minor release in the path, RHEL 8 the major; 9 adds kernel-devel-matched.
        let d = distro_of(Some(&os("rhel", "9.4", None))).unwrap();
        let c = amd_commands_7(&d, &v, &["amdgpu-dkms", "rocm"]);
        assert_eq!(c[0], "sudo dnf install https://repo.radeon.com/amdgpu-install/7.2.4/rhel/9.4/amdgpu-install-7.2.4.70204-1.el9.noarch.rpm");
        assert!(c.contains(&"sudo dnf install \"kernel-headers-$(uname -r)\" \"kernel-devel-$(uname -r)\" \"kernel-devel-matched-$(uname -r)\"".to_string()), "{c:?}");
        let d = distro_of(Some(&os("rhel", "8.10", None))).unwrap();
        let c = amd_commands_7(&d, &"7.0.0".parse().unwrap(), &["rocm"]);
        assert_eq!(c[0], "sudo dnf install https://repo.radeon.com/amdgpu-install/7.0/rhel/8/amdgpu-install-7.0.70000-1.el8.noarch.rpm");
        assert!(
            c.contains(
                &"sudo dnf config-manager --enable codeready-builder-for-rhel-8-x86_64-rpms"
                    .to_string()
            ),
            "{c:?}"
        );
        let d = distro_of(Some(&os("sles", "15.7", None))).unwrap();
        let c = amd_commands_7(&d, &"7.1.1".parse().unwrap(), &["rocm"]);
        assert!(c.contains(&"sudo zypper --no-gpg-checks install https://repo.radeon.com/amdgpu-install/7.1.1/sle/15.7/amdgpu-install-7.1.1.70101-1.noarch.rpm".to_string()), "{c:?}");
        assert_eq!(c.last().unwrap(), "sudo zypper install rocm");
    }

    #[test]
    fn a_7x_target_prints_the_legacy_streams_commands_and_a_note_for_the_core_sdk() {
        let ubuntu = os("ubuntu", "24.04", Some("noble"));
        let v: Version = "7.1.1".parse().unwrap();
        let m = |stream| Missing {
            rocm: Some((&v, "none installed".into())),
            stream,
            ..Missing::default()
        };
        let (a, notes) = plan_install(Some(&ubuntu), &m(Some(RocmStream::Legacy)));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(a[0].source, AMD_INSTALL_SOURCE_7);
        assert!(a[0].needs.relogin, "usermod's groups take a new login");
        // The same number from another stream (or none known) gets no commands.
        for stream in [Some(RocmStream::CoreSdk), None] {
            let (a, notes) = plan_install(Some(&ubuntu), &m(stream));
            assert!(
                a.is_empty() && notes[0].contains("follow https://rocm.docs.amd.com/"),
                "{notes:?}"
            );
        }
        // A host value with shell characters is refused for 7.x as for 6.x.
        let (a, notes) = plan_install(
            Some(&os("ubuntu", "24.04", Some("noble$(id)"))),
            &m(Some(RocmStream::Legacy)),
        );
        assert!(
            a.is_empty() && notes[0].contains("not put into a command"),
            "{notes:?}"
        );
        let (a, notes) = plan_install(
            Some(&os("rhel", "9.4;reboot", None)),
            &m(Some(RocmStream::Legacy)),
        );
        assert!(
            a.is_empty() && notes[0].contains("not put into a command"),
            "{notes:?}"
        );
    }

    /// Issue 34: under WSL the steps are AMD's WSL ones, per route, and never a kernel-header or amdgpu-dkms step.
    #[test]
    fn wsl_steps_follow_the_release_route_and_never_install_a_driver() {
        let m = crate::matrix::Matrices::embedded().unwrap();
        let w = |v: &str| {
            m.rocm
                .wsl
                .iter()
                .find(|w| w.release.to_string() == v)
                .unwrap()
        };
        let no_driver = |c: &[String]| {
            !c.iter().any(|x| {
                x.contains("dkms") && !x.contains("--no-dkms") || x.contains("linux-headers")
            })
        };
        // 6.1.3: the WSL packages (AMD's `wsl` use case) with 6.1.3's installer, as conf.py names it.
        let c = wsl_commands("jammy", w("6.1.3"));
        assert_eq!(c[1], "wget https://repo.radeon.com/amdgpu-install/6.1.3/ubuntu/jammy/amdgpu-install_6.1.60103-1_all.deb");
        assert_eq!(
            c.last().unwrap(),
            "amdgpu-install -y --usecase=wsl,rocm --no-dkms"
        );
        assert!(no_driver(&c), "{c:?}");
        // Every 7.2.x release: the 7.x ROCm steps, then librocdxg and the variable that loads it.
        for v in ["7.2.0", "7.2.1", "7.2.2", "7.2.3", "7.2.4"] {
            let c = wsl_commands("noble", w(v));
            let (dir, pkg) = amdgpu_install_names_7(&w(v).release);
            assert_eq!(c[0], format!("wget https://repo.radeon.com/amdgpu-install/{dir}/ubuntu/noble/amdgpu-install_{pkg}_all.deb"));
            assert!(c.contains(&"sudo apt install rocm".to_string()), "{c:?}");
            assert!(c.contains(&"git clone https://github.com/ROCm/librocdxg.git".to_string()));
            assert_eq!(c.last().unwrap(), "export HSA_ENABLE_DXG_DETECTION=1");
            assert!(no_driver(&c), "{c:?}");
        }
        // plan_install: one action, fixing rocm.installed and wsl.rocm-support, with no reboot.
        let ubuntu = |v: &str, code: &str| os("ubuntu", v, Some(code));
        let missing = |r: &str| Missing {
            wsl: Some((w(r), "no ROCm user space under /opt/rocm*".into())),
            ..Missing::default()
        };
        let (a, notes) = plan_install(Some(&ubuntu("22.04", "jammy")), &missing("6.1.3"));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(a[0].source, AMD_WSL_SOURCE);
        assert_eq!(a[0].fixes, ["rocm.installed", "wsl.rocm-support"]);
        assert!(!a[0].needs.reboot);
        let (a, _) = plan_install(Some(&ubuntu("24.04", "noble")), &missing("7.2.4"));
        assert_eq!(a[0].source, AMD_WSL_SOURCE_7);
        assert!(a[0].summary.contains("librocdxg 1.1.0"), "{}", a[0].summary);
        // A distribution AMD does not list for the release, or not Ubuntu: a note, no commands.
        let (a, notes) = plan_install(Some(&ubuntu("24.04", "noble")), &missing("6.1.3"));
        assert!(
            a.is_empty() && notes[0].contains("ubuntu 22.04 only"),
            "{notes:?}"
        );
        let (a, notes) = plan_install(Some(&os("rhel", "9.4", None)), &missing("7.2.4"));
        assert!(
            a.is_empty() && notes[0].contains("Ubuntu only"),
            "{notes:?}"
        );
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
