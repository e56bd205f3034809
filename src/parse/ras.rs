//! Error counters the kernel keeps in sysfs: amdgpu's RAS files and PCIe AER statistics.
//!
//! Formats, from the kernel's own sources:
//! - `ras/<block>_err_count`: lines `ue: N` and `ce: N` (newer kernels add `de: N`, deferred), or
//!   `Query currently inaccessible` (`amdgpu_ras_sysfs_read`,
//!   `torvalds/linux@d5e8ff5f7b2a41d503914d4896ed3c6b3befe933:drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c`).
//! - `ras/gpu_vram_bad_pages`: one line per page, `0x%08x : 0x%08x : %1s` (page frame, size, flag `R` reserved,
//!   `P` pending, `F` could not be reserved) (`amdgpu_ras_sysfs_badpages_read`, same file).
//! - `aer_dev_{correctable,fatal,nonfatal}`: lines `<error name> N`, ending with `TOTAL_ERR_COR N`,
//!   `TOTAL_ERR_FATAL N` or `TOTAL_ERR_NONFATAL N`
//!   (`torvalds/linux@0e7d29a39a546161ea3a49e8e282a43212d7ff68:Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats`).

/// One amdgpu RAS block's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrCount {
    /// Uncorrectable errors.
    pub ue: u64,
    /// Correctable errors.
    pub ce: u64,
    /// Deferred errors (`de:`), on kernels that print them.
    pub de: Option<u64>,
}

/// Parses a `<block>_err_count` file; `Err` says why it is not one (the driver's "Query currently inaccessible",
/// a missing `ue:`/`ce:` line, a count that is not a number).
pub fn parse_err_count(text: &str) -> Result<ErrCount, String> {
    let (mut ue, mut ce, mut de) = (None, None, None);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("says `{}`", clip(line)));
        };
        let slot = match key.trim() {
            "ue" => &mut ue,
            "ce" => &mut ce,
            "de" => &mut de,
            // A line this parser does not know is no reason to drop the counts it does.
            _ => continue,
        };
        let n = value
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("has `{}`, not a count", clip(line)))?;
        *slot = Some(n);
    }
    match (ue, ce) {
        (Some(ue), Some(ce)) => Ok(ErrCount { ue, ce, de }),
        _ => Err("has no `ue:` and `ce:` lines".into()),
    }
}

/// The retired pages `gpu_vram_bad_pages` lists, by flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BadPages {
    /// `R`: reserved, no longer used.
    pub reserved: u64,
    /// `P`: marked bad, reserved at the next chance.
    pub pending: u64,
    /// `F`: could not be reserved.
    pub failed: u64,
}

impl BadPages {
    /// Every page listed: what the driver stores in its EEPROM table and counts against its threshold.
    pub fn total(&self) -> u64 {
        self.reserved + self.pending + self.failed
    }
}

/// Parses `gpu_vram_bad_pages`; `Err` names the first line that is not `0x… : 0x… : R|P|F`.
pub fn parse_bad_pages(text: &str) -> Result<BadPages, String> {
    let mut pages = BadPages::default();
    for (i, line) in text.lines().enumerate() {
        // The driver pads its buffer with NULs (`memset(buf, 0, count)`); they end the listing.
        let line = line.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split(':').map(str::trim).collect();
        let hex_ok = |s: &str| {
            s.strip_prefix("0x")
                .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        };
        let slot = match parts.as_slice() {
            [pfn, size, flag] if hex_ok(pfn) && hex_ok(size) => match *flag {
                "R" => &mut pages.reserved,
                "P" => &mut pages.pending,
                "F" => &mut pages.failed,
                _ => return Err(bad_line(i, line)),
            },
            _ => return Err(bad_line(i, line)),
        };
        *slot += 1;
    }
    Ok(pages)
}

fn bad_line(i: usize, line: &str) -> String {
    format!(
        "line {} is `{}`, not `0x… : 0x… : R|P|F`",
        i + 1,
        clip(line)
    )
}

/// One `aer_dev_*` file: its `TOTAL_ERR_*` line and the kinds of error counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AerCounts {
    /// The `TOTAL_ERR_*` line: error messages the device sent.
    pub total: u64,
    /// The error kinds with a non-zero count, as the kernel names them (`Receiver Error 2`).
    pub nonzero: Vec<(String, u64)>,
}

/// Parses an `aer_dev_correctable`, `aer_dev_fatal` or `aer_dev_nonfatal` file; `Err` when it has no
/// `TOTAL_ERR_*` line or a line does not end in a count.
pub fn parse_aer(text: &str) -> Result<AerCounts, String> {
    let mut total = None;
    let mut nonzero = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((name, n)) = line.rsplit_once(char::is_whitespace) else {
            return Err(format!("has `{}`, not `NAME count`", clip(line)));
        };
        let n: u64 = n
            .parse()
            .map_err(|_| format!("has `{}`, not `NAME count`", clip(line)))?;
        let name = name.trim();
        if name.starts_with("TOTAL_ERR_") {
            total = Some(n);
        } else if n > 0 {
            nonzero.push((name.to_string(), n));
        }
    }
    let total = total.ok_or("has no TOTAL_ERR_* line")?;
    Ok(AerCounts { total, nonzero })
}

/// `xgmi_error`: one count (`%u`), which the driver resets as it reads it.
pub fn parse_xgmi_error(text: &str) -> Result<u64, String> {
    let t = text.trim();
    t.parse()
        .map_err(|_| format!("says `{}`, not a count", clip(t)))
}

/// A line as quoted in a message: at most 80 characters, control characters dropped.
fn clip(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn err_count_reads_the_kernels_format() {
        // The example in amdgpu_ras.c's "AMDGPU RAS sysfs Error Count Interface" comment.
        assert_eq!(
            parse_err_count("ue: 0\nce: 1\n"),
            Ok(ErrCount {
                ue: 0,
                ce: 1,
                de: None
            })
        );
        assert_eq!(
            parse_err_count("ue: 2\nce: 0\nde: 3\n").unwrap().de,
            Some(3)
        );
        assert!(parse_err_count("Query currently inaccessible\n")
            .unwrap_err()
            .contains("Query currently inaccessible"));
        assert!(parse_err_count("ue: x\nce: 0\n").is_err());
        assert!(parse_err_count("ue: 1\n").is_err());
        assert!(parse_err_count("").is_err());
    }

    #[test]
    fn bad_pages_count_by_flag() {
        // The example in amdgpu_ras.c's "gpu_vram_bad_pages Interface" comment, with an F line.
        let t = "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n0x00000003 : 0x00001000 : F\n";
        let p = parse_bad_pages(t).unwrap();
        assert_eq!((p.reserved, p.pending, p.failed, p.total()), (1, 1, 1, 3));
        assert_eq!(parse_bad_pages("").unwrap().total(), 0);
        assert_eq!(parse_bad_pages("\0\0\0").unwrap().total(), 0);
        let e = parse_bad_pages("0x00000001 : 0x00001000 : R\ngarbage\n").unwrap_err();
        assert!(e.starts_with("line 2 is `garbage`"), "{e}");
        assert!(parse_bad_pages("0x1 : 0x1000 : X\n").is_err());
        assert!(parse_bad_pages("0xzz : 0x1000 : R\n").is_err());
    }

    #[test]
    fn aer_reads_the_documented_sample() {
        // The sample output in Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats.
        let t = "Receiver Error 2\nBad TLP 0\nBad DLLP 0\nRELAY_NUM Rollover 0\nReplay Timer Timeout 0\nAdvisory Non-Fatal 0\nCorrected Internal Error 0\nHeader Log Overflow 0\nTOTAL_ERR_COR 2\n";
        let a = parse_aer(t).unwrap();
        assert_eq!(a.total, 2);
        assert_eq!(a.nonzero, vec![("Receiver Error".to_string(), 2)]);
        assert!(parse_aer("Receiver Error 2\n").is_err());
        assert!(parse_aer("Receiver Error two\nTOTAL_ERR_COR 2\n").is_err());
        assert!(parse_aer("").is_err());
    }

    #[test]
    fn xgmi_error_is_one_count() {
        assert_eq!(parse_xgmi_error("2\n"), Ok(2));
        assert!(parse_xgmi_error("-1\n").is_err());
    }
}
