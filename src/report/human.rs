//! The human report: a GPU table, then findings grouped by area with ✓ ! ✗ - marks.

use super::DoctorReport;
use crate::checks::{Finding, Status, AREAS};
use crate::host::Gpu;
use std::io::Write;

/// Whether to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Plain text.
    Plain,
    /// ANSI colours.
    Color,
}

impl Style {
    /// Colour for `stream` as anstream decides it: only on a terminal that can show it, never with `NO_COLOR`
    /// or `TERM=dumb`, always with `CLICOLOR_FORCE`.
    pub fn detect<S: anstream::stream::RawStream>(stream: &S) -> Self {
        match anstream::AutoStream::choice(stream) {
            anstream::ColorChoice::Never => Style::Plain,
            _ => Style::Color,
        }
    }

    fn paint(self, style: anstyle::Style, text: &str) -> String {
        match self {
            Style::Plain => text.to_string(),
            Style::Color => format!("{style}{text}{style:#}"),
        }
    }
}

const GREEN: anstyle::Style = anstyle::AnsiColor::Green.on_default();
const YELLOW: anstyle::Style = anstyle::AnsiColor::Yellow.on_default();
const RED_BOLD: anstyle::Style = anstyle::AnsiColor::Red.on_default().bold();
const DIM: anstyle::Style = anstyle::Style::new().dimmed();
const BOLD: anstyle::Style = anstyle::Style::new().bold();

pub(super) fn mark(s: Status, style: Style) -> String {
    match s {
        Status::Pass => style.paint(GREEN, "✓"),
        Status::Warn => style.paint(YELLOW, "!"),
        Status::Fail => style.paint(RED_BOLD, "✗"),
        Status::Skip => style.paint(DIM, "-"),
    }
}

fn gib(b: u64) -> String {
    let g = b as f64 / (1u64 << 30) as f64;
    if g >= 10.0 {
        format!("{g:.0} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

fn link(g: &Gpu) -> String {
    let Some(l) = &g.pcie else { return "-".into() };
    let fmt = |s: Option<f64>, w: Option<u32>| match (s, w) {
        (Some(s), Some(w)) => format!("{s} GT/s x{w}"),
        (Some(s), None) => format!("{s} GT/s"),
        (None, Some(w)) => format!("x{w}"),
        (None, None) => "?".into(),
    };
    format!(
        "{} / {}",
        fmt(l.current_speed_gts, l.current_width),
        fmt(l.max_speed_gts, l.max_width)
    )
}

fn gpu_table(r: &DoctorReport, out: &mut dyn Write) -> std::io::Result<()> {
    let rows: Vec<[String; 8]> = r
        .facts
        .gpus
        .iter()
        .map(|g| {
            [
                g.index.to_string(),
                g.name
                    .clone()
                    .unwrap_or_else(|| format!("unknown {}", g.device_id))
                    + if g.integrated == Some(true) {
                        " (iGPU)"
                    } else {
                        ""
                    },
                g.pci_address.clone(),
                g.gfx
                    .map(|t| t.to_string())
                    .or(g.compute_capability.clone().map(|c| format!("sm {c}")))
                    .unwrap_or_else(|| "-".into()),
                g.vram_bytes.map(gib).unwrap_or_else(|| "-".into()),
                g.numa_node
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "-".into()),
                link(g),
                g.render_node
                    .clone()
                    .map(|p| p.trim_start_matches("/dev/dri/").to_string())
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let head = [
        "#",
        "GPU",
        "PCI",
        "target",
        "VRAM",
        "NUMA",
        "PCIe now / max",
        "render",
    ];
    let mut w = head.map(|h| h.chars().count());
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            s.push(' ');
            s.push_str(c);
            if i + 1 < cells.len() {
                s.push_str(&" ".repeat(w[i] - c.chars().count() + 1));
            }
        }
        s
    };
    writeln!(out, "{}", line(&head.map(str::to_string)))?;
    for row in &rows {
        writeln!(out, "{}", line(row))?;
    }
    Ok(())
}

fn area_title(a: &str) -> &'static str {
    match a {
        "system" => "System",
        "gpu" => "GPUs",
        "driver" => "Kernel drivers",
        "devices" => "Device nodes",
        "userspace" => "User space",
        "runtime" => "GPU runtimes",
        "environment" => "Environment",
        "topology" => "Topology",
        "health" => "Node health",
        "containers" => "Containers",
        "boot" => "Boot and firmware",
        "tools" => "Tools (--deep)",
        _ => "Other",
    }
}

fn finding(f: &Finding, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "  {} {}", mark(f.status, style), f.summary)?;
    let shows_more = matches!(f.status, Status::Warn | Status::Fail);
    if let (Some(d), true) = (&f.detail, shows_more || f.conditional) {
        writeln!(out, "      {}", style.paint(DIM, d))?;
    }
    if let (Some(x), true) = (&f.fix, shows_more) {
        writeln!(out, "      fix: {x}")?;
    }
    Ok(())
}

/// The first line of the report, the answer a person came for: can this host run PyTorch on the target, and on how
/// many of its GPUs (`checks::Verdict`, which also gives the exit code).
pub fn verdict(r: &DoctorReport) -> String {
    r.verdict().line
}

/// Writes the human report.
pub fn render_human(r: &DoctorReport, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let f = &r.facts;
    writeln!(out, "{}", style.paint(BOLD, &verdict(r)))?;
    let where_ = if f.mode == "live" {
        "this host".to_string()
    } else {
        format!("host tree {}", r.root)
    };
    let label = if r.target_label.is_empty() {
        "nothing"
    } else {
        &r.target_label
    };
    // A reason with its own parenthesis is not wrapped in another: `newest release (no GPU found))` read as a typo.
    let against = if r.target_why.contains('(') {
        format!("{label}: {}", r.target_why)
    } else {
        format!("{label} ({})", r.target_why)
    };
    writeln!(out, "rocmenv doctor: {where_}, checked against {against}")?;
    let os =
        f.os.as_ref()
            .and_then(|o| o.pretty_name.clone())
            .unwrap_or_else(|| "unknown OS".into());
    let kernel = f
        .kernel
        .as_ref()
        .map(|k| k.release.clone())
        .unwrap_or_else(|| "unknown kernel".into());
    let cpu = f
        .cpu
        .as_ref()
        .map(|c| format!(", {} CPUs", c.logical_cores))
        .unwrap_or_default();
    let mem = f
        .memory_bytes
        .map(|m| format!(", {} RAM", gib(m)))
        .unwrap_or_default();
    writeln!(
        out,
        "{os}, kernel {kernel}{cpu}{mem}{}",
        if f.wsl { " (WSL2)" } else { "" }
    )?;
    if !f.gpus.is_empty() {
        writeln!(out)?;
        gpu_table(r, out)?;
    }
    for area in AREAS {
        let items: Vec<&Finding> = r.findings.iter().filter(|x| x.area == area).collect();
        if items.is_empty() {
            continue;
        }
        writeln!(out)?;
        writeln!(out, "{}", style.paint(BOLD, area_title(area)))?;
        for x in items {
            finding(x, style, out)?;
        }
    }
    if !f.unavailable.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", style.paint(BOLD, "Could not read"))?;
        for u in &f.unavailable {
            writeln!(out, "  - {}: {}", u.fact, u.reason)?;
        }
    }
    let s = r.summary;
    writeln!(out)?;
    writeln!(out, "{}", s.line())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::doctor::{build_report, DoctorOptions};

    fn failed(id: &'static str, subject: Option<String>) -> Finding {
        Finding {
            id,
            area: "gpu",
            subject,
            status: Status::Fail,
            summary: "x".into(),
            detail: None,
            fix: None,
            conditional: false,
        }
    }

    fn fixture(name: &str, target: &str) -> DoctorReport {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
        build_report(&DoctorOptions {
            sysroot: Some(dir.join(name)),
            target: Some(target.parse().unwrap()),
            ..DoctorOptions::default()
        })
        .unwrap()
    }

    /// Issue 25: the report opened with its target and a list of checks; the answer came last, as counts. Now the
    /// first line is the verdict, and a failure about one GPU takes out that GPU only.
    #[test]
    fn the_report_opens_with_a_one_line_verdict() {
        let r = fixture("mi300x-x4-ubuntu2204", "rocm-6.2");
        assert_eq!(
            verdict(&r),
            format!(
                "verdict: this host tree can run PyTorch on ROCm 6.2.4 on 4 of 4 GPUs{}",
                match r.summary.warn {
                    0 => String::new(),
                    1 => ", with 1 warning".into(),
                    n => format!(", with {n} warnings"),
                }
            )
        );
        let mut out = Vec::new();
        render_human(&r, Style::Plain, &mut out).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .starts_with("verdict: this host tree can run PyTorch"));
        let mut one_bad = fixture("mi300x-x4-ubuntu2204", "rocm-6.2");
        let addr = one_bad.facts.gpus[2].pci_address.clone();
        one_bad.findings.push(failed("gpu.x", Some(addr)));
        // Issue 33: "can run … on 3 of 4 GPUs" beside exit 1 read as a pass; the line now says what fails.
        assert_eq!(
            verdict(&one_bad),
            "verdict: this host tree cannot run PyTorch on ROCm 6.2.4 on GPU 2 (3 of its 4 GPUs can)"
        );
        assert_eq!(one_bad.verdict().exit_code, 1);
        let mut host_bad = fixture("mi300x-x4-ubuntu2204", "rocm-6.2");
        host_bad.findings.push(failed("kernel.x", None));
        host_bad.summary = crate::checks::Summary::of(&host_bad.findings);
        assert_eq!(
            verdict(&host_bad),
            "verdict: this host tree cannot run PyTorch on ROCm 6.2.4 yet: 1 check failed (the first: kernel.x)"
        );
    }

    /// Issue 25: `checked against ROCm 7.2.4 (newest release (no GPU found))` closed two parentheses.
    #[test]
    fn the_header_does_not_double_a_parenthesis() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
        let r = build_report(&DoctorOptions {
            sysroot: Some(dir.join("no-gpu-debian12")),
            ..DoctorOptions::default()
        })
        .unwrap();
        let mut out = Vec::new();
        render_human(&r, Style::Plain, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("))"), "{text}");
        assert!(text.contains(": newest release (no GPU found)\n"), "{text}");
        assert!(
            text.starts_with(
                "verdict: this host tree cannot run PyTorch on ROCm 10.1.0: no GPU found (PyTorch runs on its CPU only)"
            ),
            "{text}"
        );
    }

    #[test]
    fn paint_only_in_colour() {
        assert_eq!(Style::Plain.paint(RED_BOLD, "x"), "x");
        assert_eq!(Style::Color.paint(RED_BOLD, "x"), "\x1b[1m\x1b[31mx\x1b[0m");
        // A pipe is no terminal: plain, whatever TERM says (CLICOLOR_FORCE aside, see tests/cli.rs).
        if std::env::var_os("CLICOLOR_FORCE").is_none() {
            assert_eq!(Style::detect(&Vec::<u8>::new()), Style::Plain);
        }
    }
}
