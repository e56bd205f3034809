//! `/proc/driver/nvidia/version`: the loaded NVIDIA kernel module's version and flavour.

use crate::version::DriverVersion;
use serde::Serialize;

/// The loaded NVIDIA kernel module.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaKernelModule {
    /// Driver version, e.g. 550.127.05.
    pub version: DriverVersion,
    /// True for the open GPU kernel modules ("Open Kernel Module").
    pub open: bool,
}

/// Reads the `NVRM version:` line; `None` when it is absent or carries no driver version.
pub fn parse_nvidia_proc_version(s: &str) -> Option<NvidiaKernelModule> {
    let line = s
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("NVRM version:"))?;
    let open = line.contains("Open Kernel Module");
    // The version is the first token after "Kernel Module" that reads as a driver version.
    let after = line
        .split_once("Kernel Module")
        .map(|(_, rest)| rest)
        .unwrap_or(line);
    let version = after
        .split_whitespace()
        .filter(|t| t.contains('.'))
        .find_map(|t| t.parse::<DriverVersion>().ok())?;
    Some(NvidiaKernelModule { version, open })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proprietary_module() {
        let s = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
        let m = parse_nvidia_proc_version(s).unwrap();
        assert_eq!(m.version.to_string(), "550.127.05");
        assert!(!m.open);
    }

    #[test]
    fn open_module() {
        let s = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Oct 10 12:02:35 UTC 2024\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n";
        let m = parse_nvidia_proc_version(s).unwrap();
        assert_eq!(m.version.to_string(), "565.57.01");
        assert!(m.open);
        let s = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build  (dvs-builder@U16-A24-23-2)  Fri Jan 24 20:10:00 UTC 2025";
        assert_eq!(
            parse_nvidia_proc_version(s).unwrap().version.to_string(),
            "570.86.15"
        );
        // Legacy two-part versions (e.g. 390.157) are still versions.
        let s =
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12 09:19:07 UTC 2022";
        assert_eq!(parse_nvidia_proc_version(s).unwrap().version.branch(), 390);
    }

    #[test]
    fn garbage() {
        for bad in [
            "",
            "NVRM version:",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  5x0.1  Tue",
            "GCC version: gcc version 12.2.0",
            "\u{FFFD}\0\u{FFFD}",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  99999999999999.1.2",
        ] {
            assert_eq!(parse_nvidia_proc_version(bad), None, "{bad:?}");
        }
    }
}
