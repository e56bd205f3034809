//! Kernel release strings as `uname -r` prints them (`5.15.0-91-generic`, `5.14.0-427.22.1.el9_4.x86_64`).

use crate::version::{parse_with_parts, Version};
use serde::Serialize;

/// The longest release string accepted; real ones are well under 100 characters.
const MAX_LEN: usize = 256;

/// A kernel release split into the parts distributions encode in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelRelease {
    /// The release exactly as given (trimmed).
    pub release: String,
    /// Upstream version, e.g. 5.15.0 (a 4th numeric part, as WSL2 writes, goes to `abi`).
    pub version: Version,
    /// The distribution's build/ABI number: `91`, `427.22.1`, `150500.55.49`.
    pub abi: Option<String>,
    /// Kernel flavour: `generic`, `aws`, `default`, `cloud-amd64`, `pve`, `microsoft-standard-WSL2`, …
    pub flavour: Option<String>,
    /// Which distribution's naming scheme the release follows, when recognisable.
    pub distro: Option<KernelDistro>,
    /// CPU architecture when the release spells it (RHEL/Fedora style `.x86_64`).
    pub arch: Option<String>,
    /// Page size suffix (`+64k` on RHEL aarch64 kernels).
    pub page_size: Option<String>,
}

/// Distribution families recognisable from a kernel release alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum KernelDistro {
    /// Ubuntu: `X.Y.Z-ABI-flavour` with a numeric ABI.
    Ubuntu,
    /// RHEL and rebuilds: `.elN` or `.elN_M` dist tag.
    Rhel {
        /// Major RHEL release from the dist tag (`el9_4` → 9).
        major: Option<u32>,
        /// The dist tag when it names a minor release, e.g. `el9_4`, `el8_10`.
        minor: Option<String>,
    },
    /// SUSE (SLES, openSUSE, HPE Cray OS): flavour `default` or `cray_*`.
    Suse,
    /// Arch Linux: `-archN-M`.
    Arch,
    /// Fedora: `.fcNN` dist tag.
    Fedora {
        /// The Fedora release number, e.g. "41".
        fc: String,
    },
    /// Debian: flavour names a Debian architecture (`amd64`, `cloud-amd64`, `arm64`, …).
    Debian,
    /// Proxmox VE: `-pve`.
    Proxmox,
    /// Windows Subsystem for Linux 2: `-microsoft-standard[-WSL2]`.
    Wsl2,
}

/// Why a kernel release string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a kernel release: {why}")]
pub struct KernelError {
    /// The offered text (cut to 80 characters so errors stay readable).
    pub input: String,
    /// What was wrong with it.
    pub why: &'static str,
}

/// Architectures as `uname -m` writes them, which RHEL-style releases append.
const ARCHES: &[&str] = &[
    "x86_64", "aarch64", "ppc64le", "ppc64", "s390x", "i686", "i386", "armv7hl", "riscv64",
];

/// Ubuntu kernel flavours (the part after the numeric ABI).
const UBUNTU_FLAVOURS: &[&str] = &[
    "generic",
    "lowlatency",
    "oem",
    "aws",
    "azure",
    "oracle",
    "gcp",
    "gke",
    "kvm",
    "nvidia",
    "raspi",
    "ibm",
    "realtime",
    "lowlatency-hwe",
    "generic-64k",
    "nvidia-64k",
    "generic-lpae",
    "intel-iotg",
    "fips",
];

/// Debian kernel flavours end with a Debian architecture name.
const DEBIAN_ARCH_SUFFIXES: &[&str] = &[
    "amd64",
    "arm64",
    "armmp",
    "armmp-lpae",
    "686",
    "686-pae",
    "ppc64el",
    "s390x",
    "marvell",
    "rpi",
    "riscv64",
    "loong64",
];

impl KernelRelease {
    /// `major.minor`, the series kernels are tracked by (`5.15`).
    pub fn series(&self) -> String {
        self.version.short()
    }

    /// True for a WSL kernel (WSL2's `microsoft-standard`, or WSL1's `-Microsoft`).
    pub fn is_wsl(&self) -> bool {
        self.distro == Some(KernelDistro::Wsl2)
            || self.release.to_ascii_lowercase().contains("microsoft")
    }
}

/// Parses a `uname -r` string; surrounding whitespace (a trailing newline) is ignored.
pub fn parse_kernel_release(s: &str) -> Result<KernelRelease, KernelError> {
    let err = |why| KernelError {
        input: s.chars().take(80).collect(),
        why,
    };
    let text = s.trim();
    refuse_malformed(text).map_err(err)?;
    let (body, page_size) = split_page_size(text);

    let (head, rest) = match body.split_once('-') {
        Some((h, r)) => (h, Some(r)),
        None => (body, None),
    };
    // The leading run of numeric dot-separated parts is the upstream version.
    let comps: Vec<&str> = head.split('.').collect();
    let numeric = comps
        .iter()
        .take_while(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
        .count();
    if numeric < 2 {
        return Err(err("it has no major.minor version"));
    }
    let vparts = numeric.min(3);
    let (version, _) = parse_with_parts(&comps[..vparts].join("."))
        .map_err(|_| err("its version numbers are too large"))?;
    // WSL2 writes a fourth numeric part (5.15.153.1): its own revision, kept as the ABI.
    let extra_num = (numeric > 3).then(|| comps[3..numeric].join("."));
    let head_tail = (numeric < comps.len()).then(|| comps[numeric..].join("."));

    let mut out = KernelRelease {
        release: text.to_string(),
        version,
        abi: None,
        flavour: None,
        distro: None,
        arch: None,
        page_size,
    };

    if rest.is_some_and(|r| split_dotted_tail(r, &mut out)) {
        return Ok(out);
    }
    match rest.filter(|r| !r.is_empty()) {
        None => out.abi = extra_num,
        Some(r) => split_dash_tail(r, extra_num, &mut out),
    }
    if head_tail.is_some() && out.flavour.is_none() {
        // Something like `6.6.0rc1`: keep the unparsed tail visible rather than dropping it.
        out.flavour = head_tail;
    }
    Ok(out)
}

/// Why `text` (already trimmed) cannot be a release at all, before any part of it is read.
fn refuse_malformed(text: &str) -> Result<(), &'static str> {
    if text.is_empty() {
        return Err("it is empty");
    }
    if text.len() > MAX_LEN {
        return Err("it is longer than 256 bytes");
    }
    if text.contains('\0') {
        return Err("it contains a NUL byte");
    }
    if text.chars().any(char::is_whitespace) {
        return Err("it contains whitespace");
    }
    if !text.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("it does not start with a number");
    }
    if !text.is_ascii() {
        return Err("it contains non-ASCII characters");
    }
    Ok(())
}

/// Splits a page-size suffix such as `+64k` off the release, returning the rest and the page size.
fn split_page_size(text: &str) -> (&str, Option<String>) {
    // `+64k` on RHEL aarch64; other `+` suffixes (Raspberry Pi `-v8+`) stay in the flavour.
    match text.rsplit_once('+') {
        Some((b, p))
            if p.len() >= 2
                && p.ends_with('k')
                && p[..p.len() - 1].bytes().all(|c| c.is_ascii_digit()) =>
        {
            (b, Some(p.to_string()))
        }
        _ => (text, None),
    }
}

/// Reads a RHEL/Fedora style tail (`ABI.elN_M.arch`, `ABI.fcNN.arch`) into `out`; false when `rest` is not one.
fn split_dotted_tail(rest: &str, out: &mut KernelRelease) -> bool {
    let parts: Vec<&str> = rest.split('.').collect();
    if parts.len() <= 1 {
        return false;
    }
    let tag_at = parts.iter().position(|p| is_el_tag(p) || is_fc_tag(p));
    let arch_last = parts.last().filter(|a| ARCHES.contains(a)).copied();
    if tag_at.is_none() && (arch_last.is_none() || parts[0].contains('-')) {
        return false;
    }
    out.arch = arch_last.map(str::to_string);
    let end = tag_at.unwrap_or(parts.len() - 1);
    if end > 0 {
        out.abi = Some(parts[..end].join("."));
    }
    if let Some(i) = tag_at {
        let tag = parts[i];
        out.distro = Some(if let Some(fc) = tag.strip_prefix("fc") {
            KernelDistro::Fedora { fc: fc.to_string() }
        } else {
            el_distro(tag)
        });
    }
    true
}

/// Reads a dash-style tail (`91-generic`, `150500.55.49-default`, `microsoft-standard-WSL2`) into `out`.
fn split_dash_tail(r: &str, extra_num: Option<String>, out: &mut KernelRelease) {
    let (first, after) = match r.split_once('-') {
        Some((f, a)) => (f, Some(a)),
        None => (r, None),
    };
    // An ABI is digits with dots (SUSE) or underscores (Cray).
    let is_abi = first.starts_with(|c: char| c.is_ascii_digit())
        && first
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_');
    if is_abi {
        out.abi = Some(first.to_string());
        out.flavour = after.filter(|a| !a.is_empty()).map(str::to_string);
    } else {
        out.abi = extra_num;
        out.flavour = Some(r.to_string());
    }
    out.distro = flavour_distro(out.flavour.as_deref(), out.abi.as_deref());
    // Ubuntu arm64 writes the page size into the flavour (`generic-64k`).
    if out.page_size.is_none() && out.flavour.as_deref().is_some_and(|f| f.ends_with("-64k")) {
        out.page_size = Some("64k".to_string());
    }
}

/// True for a RHEL dist tag: `el7`, `el8_10`, `el9`, `el8uek`.
fn is_el_tag(p: &str) -> bool {
    p.strip_prefix("el")
        .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()))
}

/// True for a Fedora dist tag: `fc41`.
fn is_fc_tag(p: &str) -> bool {
    p.strip_prefix("fc")
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// Builds the RHEL variant from a dist tag.
fn el_distro(tag: &str) -> KernelDistro {
    let t = &tag[2..];
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let after = &t[digits.len()..];
    let minor = after
        .strip_prefix('_')
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
        .map(|_| tag.to_string());
    KernelDistro::Rhel {
        major: digits.parse().ok(),
        minor,
    }
}

/// Guesses the distribution from a dash-style flavour.
fn flavour_distro(flavour: Option<&str>, abi: Option<&str>) -> Option<KernelDistro> {
    let f = flavour?;
    if f.starts_with("microsoft-standard") {
        return Some(KernelDistro::Wsl2);
    }
    if f == "pve" {
        return Some(KernelDistro::Proxmox);
    }
    if f.starts_with("arch") {
        return Some(KernelDistro::Arch);
    }
    if f == "default" || f.starts_with("cray") {
        return Some(KernelDistro::Suse);
    }
    if DEBIAN_ARCH_SUFFIXES
        .iter()
        .any(|a| f == *a || f.ends_with(&format!("-{a}")))
    {
        return Some(KernelDistro::Debian);
    }
    let numeric_abi = abi.is_some_and(|a| a.bytes().all(|b| b.is_ascii_digit()));
    if numeric_abi && UBUNTU_FLAVOURS.contains(&f) {
        return Some(KernelDistro::Ubuntu);
    }
    None
}

/// Extracts the release from a `/proc/version` line (`Linux version 5.15.0-91-generic (buildd@…) …`).
pub fn kernel_release_from_proc_version(s: &str) -> Option<String> {
    let rest = s.trim_start().strip_prefix("Linux version ")?;
    let token = rest.split_whitespace().next()?;
    parse_kernel_release(token).ok().map(|k| k.release)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BY_DISTRO: &str =
        include_str!("../../tests/fixtures/captures/uname-r_kernel_release_strings_by_distro.txt");
    const UNAME_A: &str =
        include_str!("../../tests/fixtures/captures/uname-a_vm_captures_debian_ubuntu_centos.txt");

    /// Expected (release, version, abi, flavour, distro, arch, page_size).
    type Case = (
        &'static str,
        (u64, u64, u64),
        Option<&'static str>,
        Option<&'static str>,
        Option<KernelDistro>,
        Option<&'static str>,
        Option<&'static str>,
    );

    fn rhel(major: u32, minor: Option<&str>) -> Option<KernelDistro> {
        Some(KernelDistro::Rhel {
            major: Some(major),
            minor: minor.map(str::to_string),
        })
    }

    fn check(c: &Case) {
        let k = parse_kernel_release(c.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.release, c.0);
        assert_eq!(k.version, Version::new(c.1 .0, c.1 .1, c.1 .2), "{}", c.0);
        assert_eq!(k.abi.as_deref(), c.2, "abi of {}", c.0);
        assert_eq!(k.flavour.as_deref(), c.3, "flavour of {}", c.0);
        assert_eq!(k.distro, c.4, "distro of {}", c.0);
        assert_eq!(k.arch.as_deref(), c.5, "arch of {}", c.0);
        assert_eq!(k.page_size.as_deref(), c.6, "page size of {}", c.0);
    }

    #[test]
    fn every_capture_line_parses() {
        let lines: Vec<&str> = BY_DISTRO
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .collect();
        assert_eq!(lines.len(), 32);
        for l in lines {
            let k = parse_kernel_release(l).unwrap_or_else(|e| panic!("{e}"));
            assert!(k.distro.is_some(), "{l} has no distro");
            assert_eq!(k.release, l);
        }
    }

    /// Ubuntu releases split into ABI and flavour.
    #[test]
    fn ubuntu_capture_lines_split_exactly() {
        use KernelDistro::Ubuntu;
        let cases: Vec<Case> = vec![
            (
                "5.4.0-54-generic",
                (5, 4, 0),
                Some("54"),
                Some("generic"),
                Some(Ubuntu),
                None,
                None,
            ),
            (
                "6.5.0-26-generic",
                (6, 5, 0),
                Some("26"),
                Some("generic"),
                Some(Ubuntu),
                None,
                None,
            ),
            (
                "6.17.0-1012-oem",
                (6, 17, 0),
                Some("1012"),
                Some("oem"),
                Some(Ubuntu),
                None,
                None,
            ),
            (
                "6.8.0-1036-aws",
                (6, 8, 0),
                Some("1036"),
                Some("aws"),
                Some(Ubuntu),
                None,
                None,
            ),
            (
                "6.17.0-1022-azure",
                (6, 17, 0),
                Some("1022"),
                Some("azure"),
                Some(Ubuntu),
                None,
                None,
            ),
            (
                "6.5.0-1018-oracle",
                (6, 5, 0),
                Some("1018"),
                Some("oracle"),
                Some(Ubuntu),
                None,
                None,
            ),
        ];
        for c in &cases {
            check(c);
        }
    }

    /// RHEL releases split into ABI, dist tag, arch and page size.
    #[test]
    fn rhel_capture_lines_split_exactly() {
        let cases: Vec<Case> = vec![
            (
                "3.10.0-1127.19.1.el7.x86_64",
                (3, 10, 0),
                Some("1127.19.1"),
                None,
                rhel(7, None),
                Some("x86_64"),
                None,
            ),
            (
                "4.18.0-553.40.1.el8_10.x86_64",
                (4, 18, 0),
                Some("553.40.1"),
                None,
                rhel(8, Some("el8_10")),
                Some("x86_64"),
                None,
            ),
            (
                "4.18.0-348.el8.x86_64",
                (4, 18, 0),
                Some("348"),
                None,
                rhel(8, None),
                Some("x86_64"),
                None,
            ),
            (
                "5.14.0-427.22.1.el9_4.x86_64",
                (5, 14, 0),
                Some("427.22.1"),
                None,
                rhel(9, Some("el9_4")),
                Some("x86_64"),
                None,
            ),
            (
                "5.14.0-362.24.1.el9_3.aarch64+64k",
                (5, 14, 0),
                Some("362.24.1"),
                None,
                rhel(9, Some("el9_3")),
                Some("aarch64"),
                Some("64k"),
            ),
            (
                "5.14.0-503.23.1.el9_5.ppc64le",
                (5, 14, 0),
                Some("503.23.1"),
                None,
                rhel(9, Some("el9_5")),
                Some("ppc64le"),
                None,
            ),
        ];
        for c in &cases {
            check(c);
        }
    }

    /// SUSE, Cray, Arch and Fedora releases split exactly.
    #[test]
    fn suse_arch_and_fedora_capture_lines_split_exactly() {
        use KernelDistro::{Arch, Fedora, Suse};
        let cases: Vec<Case> = vec![
            (
                "5.14.21-150500.55.49-default",
                (5, 14, 21),
                Some("150500.55.49"),
                Some("default"),
                Some(Suse),
                None,
                None,
            ),
            (
                "5.14.21-150400.24.46_12.0.73-cray_shasta_c",
                (5, 14, 21),
                Some("150400.24.46_12.0.73"),
                Some("cray_shasta_c"),
                Some(Suse),
                None,
                None,
            ),
            (
                "4.12.14-197.18-default",
                (4, 12, 14),
                Some("197.18"),
                Some("default"),
                Some(Suse),
                None,
                None,
            ),
            (
                "6.8.5-1-default",
                (6, 8, 5),
                Some("1"),
                Some("default"),
                Some(Suse),
                None,
                None,
            ),
            (
                "6.9.1-arch1-1",
                (6, 9, 1),
                None,
                Some("arch1-1"),
                Some(Arch),
                None,
                None,
            ),
            (
                "6.13.9-200.fc41.x86_64",
                (6, 13, 9),
                Some("200"),
                None,
                Some(Fedora { fc: "41".into() }),
                Some("x86_64"),
                None,
            ),
        ];
        for c in &cases {
            check(c);
        }
    }

    /// Debian, Proxmox and WSL2 releases split exactly.
    #[test]
    fn debian_proxmox_and_wsl_capture_lines_split_exactly() {
        use KernelDistro::{Debian, Proxmox, Wsl2};
        let cases: Vec<Case> = vec![
            (
                "6.1.0-18-cloud-amd64",
                (6, 1, 0),
                Some("18"),
                Some("cloud-amd64"),
                Some(Debian),
                None,
                None,
            ),
            (
                "6.1.0-34-amd64",
                (6, 1, 0),
                Some("34"),
                Some("amd64"),
                Some(Debian),
                None,
                None,
            ),
            (
                "7.0.12-1-pve",
                (7, 0, 12),
                Some("1"),
                Some("pve"),
                Some(Proxmox),
                None,
                None,
            ),
            (
                "6.8.4-3-pve",
                (6, 8, 4),
                Some("3"),
                Some("pve"),
                Some(Proxmox),
                None,
                None,
            ),
            (
                "5.15.153.1-microsoft-standard-WSL2",
                (5, 15, 153),
                Some("1"),
                Some("microsoft-standard-WSL2"),
                Some(Wsl2),
                None,
                None,
            ),
            (
                "5.15.167.4-microsoft-standard-WSL2",
                (5, 15, 167),
                Some("4"),
                Some("microsoft-standard-WSL2"),
                Some(Wsl2),
                None,
                None,
            ),
            (
                "6.6.87.2-microsoft-standard-WSL2",
                (6, 6, 87),
                Some("2"),
                Some("microsoft-standard-WSL2"),
                Some(Wsl2),
                None,
                None,
            ),
        ];
        for c in &cases {
            check(c);
        }
    }

    #[test]
    fn series_and_wsl() {
        let k = parse_kernel_release("5.15.153.1-microsoft-standard-WSL2").unwrap();
        assert!(k.is_wsl());
        assert_eq!(k.series(), "5.15");
        let k = parse_kernel_release("5.15.0-91-generic").unwrap();
        assert!(!k.is_wsl());
        assert_eq!(k.series(), "5.15");
        // Early WSL2 kernels had no `-WSL2` suffix.
        let k = parse_kernel_release("4.19.128-microsoft-standard").unwrap();
        assert_eq!(k.distro, Some(KernelDistro::Wsl2));
        assert!(k.is_wsl());
        let k = parse_kernel_release("6.8.0-1010-nvidia-64k").unwrap();
        assert_eq!(k.page_size.as_deref(), Some("64k"));
        assert_eq!(k.distro, Some(KernelDistro::Ubuntu));
        // WSL1 reports `4.4.0-19041-Microsoft`: WSL, but not WSL2.
        let k = parse_kernel_release("4.4.0-19041-Microsoft").unwrap();
        assert!(k.is_wsl());
        assert_eq!(k.distro, None);
    }

    #[test]
    fn uname_a_third_fields_parse() {
        let expected = [
            ("5.15.0-139-generic", Some(KernelDistro::Ubuntu)),
            ("6.1.0-34-amd64", Some(KernelDistro::Debian)),
            ("5.14.0-582.el9.x86_64", rhel(9, None)),
            ("6.8.0-59-generic", Some(KernelDistro::Ubuntu)),
            ("4.18.0-348.7.1.el8_5.x86_64", rhel(8, Some("el8_5"))),
            ("5.10.0-35-amd64", Some(KernelDistro::Debian)),
        ];
        let fields: Vec<&str> = UNAME_A
            .lines()
            .filter(|l| l.starts_with("Linux "))
            .map(|l| l.split_whitespace().nth(2).unwrap())
            .collect();
        assert_eq!(fields.len(), expected.len());
        for (f, (rel, distro)) in fields.iter().zip(expected) {
            assert_eq!(*f, rel);
            assert_eq!(parse_kernel_release(f).unwrap().distro, distro, "{f}");
        }
    }

    #[test]
    fn odd_strings() {
        for bad in [
            "",
            "  ",
            "abc",
            "5",
            "99999999999999999999.1.2",
            "5.15.0 91",
            "5.15.0\0-91",
            "-5.15",
            "5.15.0-91-generic\u{FFFD}\u{FFFD}",
            "\u{FFFD}\u{1}\u{7f}",
        ] {
            assert!(parse_kernel_release(bad).is_err(), "{bad:?} accepted");
        }
        let long = format!("5.15.0-{}", "9".repeat(300));
        assert!(parse_kernel_release(&long).is_err());
        let k = parse_kernel_release("5.15").unwrap();
        assert_eq!(k.version, Version::new(5, 15, 0));
        assert_eq!((k.abi, k.flavour, k.distro), (None, None, None));
        let k = parse_kernel_release("5.15.0-91-generic\n").unwrap();
        assert_eq!(k.release, "5.15.0-91-generic");
        assert_eq!(k.distro, Some(KernelDistro::Ubuntu));
        // Truncated and partial forms still parse without inventing fields.
        let k = parse_kernel_release("5.15.0-").unwrap();
        assert_eq!((k.abi, k.flavour, k.distro), (None, None, None));
        let k = parse_kernel_release("5.14.0-427.").unwrap();
        assert_eq!(k.distro, None);
        let k = parse_kernel_release("6.1.21-v8+").unwrap();
        assert_eq!(k.page_size, None);
        assert_eq!(k.flavour.as_deref(), Some("v8+"));
    }

    #[test]
    fn proc_version() {
        assert_eq!(
            kernel_release_from_proc_version(
                "Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023\n"
            )
            .as_deref(),
            Some("5.15.0-91-generic")
        );
        assert_eq!(kernel_release_from_proc_version(""), None);
        assert_eq!(kernel_release_from_proc_version("Linux version "), None);
        assert_eq!(
            kernel_release_from_proc_version("Linux version abc (x)"),
            None
        );
        assert_eq!(kernel_release_from_proc_version("garbage\u{FFFD}"), None);
    }
}
