//! The plain-text report of `rocmenv probe`, with doctor's ✓ ! ✗ - marks.

use crate::runtime::{Check, ProbeStatus, RuntimeDevice, RuntimeProbe, RuntimeReport};
use crate::status::Status;
use std::io::Write;

/// Writes both runtimes as text for people.
pub fn render_runtime(report: &RuntimeReport, out: &mut dyn Write) -> std::io::Result<()> {
    runtime(&report.cuda, "CUDA", out)?;
    writeln!(out)?;
    runtime(&report.hip, "HIP", out)
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

fn runtime(p: &RuntimeProbe, title: &str, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{title}: {}", p.backend)?;
    let mut facts: Vec<String> = p.library.iter().cloned().collect();
    facts.extend(p.runtime_version.as_ref().map(|v| format!("runtime {v}")));
    facts.extend(p.driver_version.as_ref().map(|v| format!("driver {v}")));
    if !facts.is_empty() {
        writeln!(out, "  {}", facts.join(", "))?;
    }
    let (mark, summary) = match p.status {
        ProbeStatus::LibraryMissing => ("-", "library not found".to_string()),
        ProbeStatus::Unsupported => ("-", "not probed by this build".to_string()),
        ProbeStatus::NoDevice => ("!", "the runtime loads but sees no device".to_string()),
        ProbeStatus::Error => ("✗", "the runtime failed".to_string()),
        ProbeStatus::Ok => {
            let n = p.devices.len();
            (
                "✓",
                format!("{n} device{} working", if n == 1 { "" } else { "s" }),
            )
        }
    };
    writeln!(out, "  {mark} {summary}")?;
    if let Some(e) = &p.error {
        writeln!(
            out,
            "      {} ({}) from {}: {}",
            e.name, e.code, e.call, e.message
        )?;
        writeln!(out, "      fix: {}", e.fix)?;
    }
    if let Some(n) = &p.note {
        writeln!(out, "      {n}")?;
    }
    for d in &p.devices {
        device(d, out)?;
    }
    Ok(())
}

fn device(d: &RuntimeDevice, out: &mut dyn Write) -> std::io::Result<()> {
    let mut facts: Vec<String> = Vec::new();
    facts.extend(d.gfx.clone());
    facts.extend(d.compute_capability.as_ref().map(|c| format!("sm {c}")));
    facts.extend(d.pci_bus_id.clone());
    match (d.memory_total, d.memory_free) {
        (Some(t), Some(f)) => facts.push(format!("{} ({} free)", gib(t), gib(f))),
        (Some(t), None) => facts.push(gib(t)),
        _ => {}
    }
    facts.extend(d.multiprocessors.map(|m| format!("{m} multiprocessors")));
    let name = d.name.as_deref().unwrap_or("unnamed device");
    writeln!(out, "  {}  {name}  {}", d.index, facts.join("  "))?;
    for (what, check) in [("round trip", &d.round_trip), ("kernel", &d.kernel)] {
        if let Some(c) = check {
            check_line(what, c, out)?;
        }
    }
    for n in &d.notes {
        writeln!(out, "      {n}")?;
    }
    Ok(())
}

fn check_line(what: &str, c: &Check, out: &mut dyn Write) -> std::io::Result<()> {
    let mark = match c.status() {
        Status::Pass => "✓",
        // Never made by a probe (see `runtime::Check`); shown as the human report shows a warning.
        Status::Warn => "!",
        Status::Fail => "✗",
        Status::Skip => "-",
    };
    writeln!(out, "     {mark} {what}: {}", c.detail)?;
    if let Some(e) = &c.error {
        writeln!(out, "         {} ({}): {}", e.name, e.code, e.message)?;
        writeln!(out, "         fix: {}", e.fix)?;
    }
    Ok(())
}

/// One line per runtime as the container saw it, with the error's fix when there is one.
pub fn render_container_probe(
    image: &str,
    mapping: &str,
    v: &serde_json::Value,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "in {image} ({mapping} device mapping):")?;
    for r in ["hip", "cuda"] {
        let p = &v[r];
        let status = p["status"].as_str().unwrap_or("?");
        let lib = p["library"].as_str().unwrap_or("no library");
        let devices = p["devices"].as_array().map_or(0, |d| d.len());
        let mark = match status {
            "ok" => "✓",
            "no_device" | "error" => "✗",
            _ => "-",
        };
        let what = match status {
            "ok" => format!("{devices} device(s) through {lib}"),
            "library_missing" | "unsupported" => p["note"]
                .as_str()
                .unwrap_or("library not found")
                .to_string(),
            _ => format!("{lib}: {}", p["error"]["name"].as_str().unwrap_or(status)),
        };
        writeln!(out, "  {mark} {r}: {what}")?;
        if let Some(fix) = p["error"]["fix"].as_str() {
            writeln!(out, "      fix: {fix}")?;
        }
    }
    Ok(())
}
