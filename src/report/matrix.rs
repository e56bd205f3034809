//! `rocmenv matrix` as text: one block per answer, a label column and the values.

use crate::matrix::*;
use crate::vendor::Vendor;
use std::io::{self, Write};

/// Writes the answer to a `rocmenv matrix` query as text; `origin` says which matrices answered.
pub fn render_matrix(a: &MatrixAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    match a {
        MatrixAnswer::Rocm(r) => rocm(r, origin, out),
        MatrixAnswer::RocmReleases(r) => rocm_releases(r, origin, out),
        MatrixAnswer::RocmWsl(w) => rocm_wsl(w.wsl, origin, out),
        MatrixAnswer::Gfx(g) => gfx(g, origin, out),
        MatrixAnswer::Kernel(k) => kernel(k, origin, out),
        MatrixAnswer::Cuda(c) => cuda(c, origin, out),
        MatrixAnswer::Ngc(n) => ngc(n, origin, out),
        MatrixAnswer::Check(c) => check(c, out),
        MatrixAnswer::Gpu(g) => gpu(g, origin, out),
    }
}

/// `matrix gpu`: each model, with its gfx target's table under the first model of that target.
fn gpu(g: &GpuAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    let found = &g.models;
    let table = &g.gfx;
    for (n, g) in found.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        let vendor = g.vendor.label();
        writeln!(
            out,
            "{} ({vendor}, PCI id {})",
            g.name,
            g.pci_ids.join(", ")
        )?;
        if let Some(t) = &g.gfx {
            writeln!(out, "  gfx target:   {t}")?;
        }
        if let Some(cc) = &g.compute_capability {
            writeln!(out, "  compute capability: {cc}")?;
        }
        if let Some(a) = &g.arch {
            writeln!(out, "  architecture: {a}")?;
        }
        match g.vram_gib {
            Some(v) if v > 0.0 => writeln!(out, "  VRAM:         {v} GiB")?,
            Some(_) => writeln!(out, "  VRAM:         shares system memory")?,
            None => {}
        }
        if let Some(p) = &g.peaks {
            let figs: Vec<String> = [
                (p.fp32_tflops, "FP32 TFLOP/s"),
                (p.fp16_tflops, "FP16 TFLOP/s"),
                (p.bf16_tflops, "BF16 TFLOP/s"),
                (p.mem_bw_gbs, "GB/s"),
            ]
            .into_iter()
            .filter_map(|(v, u)| v.map(|v| format!("{v} {u}")))
            .collect();
            if !figs.is_empty() {
                writeln!(out, "  peaks:        {}", figs.join(", "))?;
            }
        }
        if let Some(s) = &g.source {
            writeln!(out, "  source:       {s}")?;
        }
        // One gfx table is enough when several matches share the target.
        if let Some(Some(a)) = table.get(n) {
            writeln!(out)?;
            gfx(a, origin, out)?;
        }
        if g.vendor == Vendor::Nvidia {
            writeln!(
                out,
                "  CUDA: every current release runs compute capability {}; `rocmenv matrix cuda X.Y` gives a release's driver floor",
                g.compute_capability.as_deref().unwrap_or("?")
            )?;
        }
    }
    Ok(())
}

fn row(out: &mut dyn Write, label: &str, value: impl AsRef<str>) -> io::Result<()> {
    writeln!(out, "  {label:<16} {}", value.as_ref())
}

fn list<T: ToString>(items: &[T]) -> String {
    if items.is_empty() {
        return "-".into();
    }
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn provenance(out: &mut dyn Write, p: &dyn Sourced) -> io::Result<()> {
    row(out, "source", p.source().unwrap_or("-"))?;
    if !p.unconfirmed().is_empty() {
        row(out, "unconfirmed", p.unconfirmed().join(", "))?;
    }
    Ok(())
}

fn kind(k: KernelKind) -> &'static str {
    match k {
        KernelKind::Ga => "GA",
        KernelKind::Hwe => "HWE",
        KernelKind::Uek => "UEK",
        KernelKind::Oem => "OEM",
    }
}

fn status(s: SupportStatus) -> &'static str {
    match s {
        SupportStatus::Supported => "supported",
        SupportStatus::Deprecated => "deprecated",
        SupportStatus::Experimental => "experimental",
        SupportStatus::Unsupported => "unsupported",
    }
}

fn rocm_releases(a: &RocmReleasesAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "ROCm releases ({origin} matrices); newest production: {}",
        a.newest
    )?;
    writeln!(
        out,
        "  {:<8} {:<9} {:<11} {:<22} {:<8} gfx",
        "release", "stream", "status", "installs at", "pytorch"
    )?;
    for r in &a.releases {
        writeln!(
            out,
            "  {:<8} {:<9} {:<11} {:<22} {:<8} {}{}",
            r.version.to_string(),
            r.stream.as_str(),
            r.status.as_str(),
            r.prefix,
            r.pytorch.as_deref().unwrap_or("-"),
            r.gfx,
            match r.unconfirmed.as_slice() {
                [] => String::new(),
                [all] if all == "*" => "  (unconfirmed)".into(),
                some => format!("  (unconfirmed: {})", some.join(", ")),
            }
        )?;
    }
    Ok(())
}

/// Writes a ROCm-on-WSL release: GPUs, Windows driver, distributions, PyTorch, notes and provenance.
fn rocm_wsl(w: &WslRelease, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "ROCm {} on WSL ({origin} matrices)", w.release)?;
    row(
        out,
        "runs",
        "inside WSL 2 only, through /dev/dxg and the Windows driver (not listed for native Linux)",
    )?;
    row(out, "gpus", w.gpus_text())?;
    row(
        out,
        "gfx",
        w.gfx
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    )?;
    let driver = match &w.windows_driver {
        Some(v) => format!("AMD Software: Adrenalin Edition {v} (WSL edition)"),
        None => "a current AMD Windows driver (AMD names no version)".to_string(),
    };
    row(out, "windows driver", driver)?;
    if let Some(r) = &w.rocdxg {
        row(
            out,
            "rocdxg",
            format!("librocdxg {r}, AMD's ROCDXG bridge, built in WSL (`rocmenv fix` prints the steps) and loaded with HSA_ENABLE_DXG_DETECTION=1"),
        )?;
    }
    let distros: Vec<String> = w
        .distros
        .iter()
        .map(|d| format!("{} {}", d.id, d.version))
        .collect();
    row(out, "distros", distros.join(", "))?;
    row(out, "pytorch", list(&w.pytorch))?;
    for (i, n) in w.notes.iter().enumerate() {
        row(out, if i == 0 { "notes" } else { "" }, n)?;
    }
    provenance(out, w)
}

/// Writes one ROCm release: stream, distros, gfx targets, drivers, images, notes and provenance.
fn rocm(a: &RocmAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    let r = a.release;
    writeln!(out, "ROCm {} ({origin} matrices)", r.version)?;
    row(
        out,
        "stream",
        format!(
            "{}, {}; installs at {}",
            r.stream.as_str(),
            r.status.as_str(),
            r.install_prefix()
        ),
    )?;
    rocm_distros(r, out)?;
    rocm_gfx(r, out)?;
    row(out, "drivers", rocm_drivers(r))?;
    row(out, "pytorch", list(&r.pytorch))?;
    rocm_images(r, out)?;
    for (i, n) in r.notes.iter().enumerate() {
        row(out, if i == 0 { "notes" } else { "" }, n)?;
    }
    if let Some(w) = a.wsl {
        row(
            out,
            "wsl",
            format!(
                "also AMD's ROCm-on-WSL release{}: GPUs {}; {} (`--json` shows the record)",
                w.rocdxg
                    .as_ref()
                    .map(|r| format!(" (librocdxg {r})"))
                    .unwrap_or_default(),
                w.gpus_text(),
                w.driver_text()
            ),
        )?;
    }
    provenance(out, r)
}

/// Writes the release's distros, one a line: version, point releases, kernels, and the GPUs it is limited to.
fn rocm_distros(r: &RocmRelease, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "  distros:")?;
    for d in &r.distros {
        let points = if d.point_releases.is_empty() {
            String::new()
        } else {
            format!(" ({})", d.point_releases.join(", "))
        };
        let kernels: Vec<String> = d
            .kernels
            .iter()
            .map(|k| format!("{} {}", k.series, kind(k.kind)))
            .collect();
        // The GPUs the row is for: its targets or models, and the models it leaves out (issue 34).
        let only = if d.limits_gpus() {
            format!("  for {}", d.gpus_text())
        } else {
            String::new()
        };
        let note = d
            .note
            .as_deref()
            .map(|n| format!("{only}  [{n}]"))
            .unwrap_or(only);
        writeln!(
            out,
            "    {:<24} kernels {}{note}",
            format!("{} {}{points}", d.id, d.version),
            kernels.join(", ")
        )?;
    }
    Ok(())
}

/// Writes the release's gfx targets by support status, then the targets each component is built for.
fn rocm_gfx(r: &RocmRelease, out: &mut dyn Write) -> io::Result<()> {
    for s in [
        SupportStatus::Supported,
        SupportStatus::Deprecated,
        SupportStatus::Experimental,
        SupportStatus::Unsupported,
    ] {
        let targets: Vec<String> = r
            .gfx
            .iter()
            .filter(|g| g.status == s)
            .map(|g| match &g.note {
                Some(n) => format!("{} ({n})", g.target),
                None => g.target.to_string(),
            })
            .collect();
        if !targets.is_empty() {
            row(out, &format!("gfx {}", status(s)), targets.join(", "))?;
        }
    }
    for b in &r.built {
        let targets: Vec<String> = b.targets.iter().map(|t| t.to_string()).collect();
        row(
            out,
            &format!("built: {}", b.component),
            format!(
                "{} ({})",
                targets.join(", "),
                b.source.as_deref().unwrap_or("-")
            ),
        )?;
    }
    Ok(())
}

/// The drivers row: the amdgpu series the release accepts, the one it ships, and its dkms module version.
fn rocm_drivers(r: &RocmRelease) -> String {
    // Two-part series (`30.30`) accept any patch; Version prints them as `30.30.0`.
    let series: Vec<String> = r
        .kernel_drivers
        .iter()
        .map(|k| {
            if k.patch() == 0 {
                k.short()
            } else {
                k.to_string()
            }
        })
        .collect();
    let mut drivers = format!("amdgpu {}", list(&series));
    if let Some(s) = &r.ships_driver {
        drivers.push_str(&format!("; ships {s}"));
    }
    if let Some(d) = &r.amdgpu_dkms {
        drivers.push_str(&format!("; /sys/module/amdgpu/version {d}"));
    }
    drivers
}

/// Writes the release's rocm/pytorch images, one a row, marking unconfirmed ones, and its PyTorch wheels.
fn rocm_images(r: &RocmRelease, out: &mut dyn Write) -> io::Result<()> {
    if r.images.is_empty() {
        row(out, "images", "-")?;
    }
    for (i, img) in r.images.iter().enumerate() {
        let mark = if img.unconfirmed.is_empty() {
            ""
        } else {
            " (unconfirmed)"
        };
        row(
            out,
            if i == 0 { "images" } else { "" },
            format!("rocm/pytorch:{}{mark}", img.tag),
        )?;
    }
    if let Some(w) = r.wheels.as_ref() {
        let builds: Vec<String> = w
            .builds
            .iter()
            .map(|b| {
                format!(
                    "torch {} (torchvision {})",
                    b.torch(&r.version),
                    b.torchvision
                )
            })
            .collect();
        row(
            out,
            "wheels",
            format!("{} on {}, from {}", list(&builds), w.base, w.index),
        )?;
        let devices: Vec<String> = w.devices.iter().map(|d| d.to_string()).collect();
        row(out, "", format!("[device-*] extras: {}", list(&devices)))?;
    }
    Ok(())
}

fn gfx(a: &GfxAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    let arch = a.info.map(|i| format!(" ({})", i.arch)).unwrap_or_default();
    writeln!(out, "{}{arch} ({origin} matrices)", a.target)?;
    let gpus: Vec<String> = a
        .gpus
        .iter()
        .map(|g| format!("{} [{}]", g.name, g.pci_ids.join(" ")))
        .collect();
    row(out, "gpus", list(&gpus))?;
    match a.info.and_then(|i| i.override_to.as_ref()) {
        Some(o) => {
            let confidence = match o.confidence {
                Confidence::High => "high",
                Confidence::Medium => "medium",
                Confidence::Low => "low",
            };
            let crashes = if o.crashes { ", crashes" } else { "" };
            row(
                out,
                "override",
                format!(
                    "{} (HSA_OVERRIDE_GFX_VERSION={}, confidence {confidence}{crashes})",
                    o.target,
                    o.target.override_value()
                ),
            )?;
            if let Some(n) = &o.note {
                row(out, "", n)?;
            }
        }
        None => row(out, "override", "none known")?,
    }
    writeln!(out, "  releases:")?;
    // Consecutive releases with the same answer share one line.
    let mut lines: Vec<(String, String, usize)> = Vec::new();
    for r in &a.releases {
        let how = match (r.runs, r.status, r.override_to) {
            ("native", Some(s), _) => format!("native ({})", status(s)),
            ("override", _, Some(t)) => format!(
                "override to {t} (HSA_OVERRIDE_GFX_VERSION={})",
                t.override_value()
            ),
            ("built-not-supported", ..) => {
                "built, not on AMD's supported list (its libraries ship kernels for it)".into()
            }
            ("override-crashes", ..) => "not: the known override crashes (different ISA)".into(),
            ("override-not-built", ..) => "not: its override target is not built either".into(),
            ("override-unknown", _, Some(t)) => format!(
                "unknown (no built data): override to {t} (HSA_OVERRIDE_GFX_VERSION={}) as in the field, unconfirmed{}",
                t.override_value(),
                r.nearest_known
                    .as_ref()
                    .map(|v| format!("; nearest release with data: {v}"))
                    .unwrap_or_default()
            ),
            ("no-override", ..) => "not built, no override known".into(),
            (other, ..) => other.into(),
        };
        let note = r
            .note
            .as_deref()
            .map(|n| format!(" [{n}]"))
            .unwrap_or_default();
        let text = format!("{how}{note}");
        match lines.last_mut() {
            Some((_, last, n)) if *last == text => *n += 1,
            _ => lines.push((r.version.to_string(), text, 1)),
        }
    }
    let mut at = 0;
    for (first, text, n) in &lines {
        at += n;
        let span = if *n == 1 {
            first.clone()
        } else {
            format!("{first} - {}", a.releases[at - 1].version)
        };
        writeln!(out, "    {span:<17} {text}")?;
    }
    if let Some(i) = a.info {
        provenance(out, i)?;
    }
    Ok(())
}

fn kernel(a: &KernelAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    let on =
        a.os.as_deref()
            .map(|o| format!(" on {}", o.replacen(':', " ", 1)))
            .unwrap_or_default();
    let mut releases: Vec<&crate::version::Version> = a.rows.iter().map(|r| &r.release).collect();
    releases.dedup();
    writeln!(
        out,
        "kernel {}{on}: listed by {} ROCm releases ({origin} matrices)",
        a.series,
        releases.len()
    )?;
    for r in &a.rows {
        writeln!(
            out,
            "  {:<8} {:<18} {} {}",
            r.release.to_string(),
            format!("{} {}", r.distro, r.version),
            r.series,
            kind(r.kind)
        )?;
    }
    Ok(())
}

fn cuda(a: &CudaAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "CUDA {} ({origin} matrices)", a.requested)?;
    for c in &a.releases {
        let win = c
            .min_driver_windows
            .as_ref()
            .map(|w| format!(", Windows >= {w}"))
            .unwrap_or_default();
        let unc = if c.unconfirmed.is_empty() {
            String::new()
        } else {
            format!(" (unconfirmed: {})", c.unconfirmed.join(", "))
        };
        writeln!(
            out,
            "  {:<8} {:<18} Linux driver >= {}{win}{unc}",
            c.version.to_string(),
            c.label,
            c.min_driver_linux
        )?;
    }
    row(
        out,
        "driver floor",
        format!(">= {} (Linux)", a.min_driver_linux),
    )?;
    if let Some(f) = a.family {
        row(
            out,
            "minor compat",
            format!(
                "CUDA {}.x runs on >= {} with minor-version compatibility",
                f.major, f.min_driver
            ),
        )?;
    }
    if let Some(c) = a.releases.last() {
        row(
            out,
            "arches",
            format!("sm {}", c.compute_capabilities.join(", ")),
        )?;
    }
    if a.ngc.is_empty() {
        row(out, "ngc", "-")?;
    }
    for (i, n) in a.ngc.iter().enumerate() {
        row(
            out,
            if i == 0 { "ngc" } else { "" },
            format!(
                "{} (PyTorch {}; driver >= {}; forward-compat {})",
                n.image,
                n.release.pytorch,
                n.release.min_driver,
                list(&n.release.datacenter_drivers)
            ),
        )?;
    }
    if let Some(c) = a.releases.last() {
        provenance(out, *c)?;
    }
    Ok(())
}

fn ngc(a: &NgcAnswer, origin: &str, out: &mut dyn Write) -> io::Result<()> {
    let n = a.release.release;
    writeln!(out, "NGC PyTorch {} ({origin} matrices)", n.release)?;
    row(out, "image", &a.release.image)?;
    if let Some(d) = &n.digest {
        row(out, "digest", d)?;
    }
    row(out, "pytorch", &n.pytorch)?;
    let cuda = match a.cuda {
        Some(c) => format!(
            "{} ({}; toolkit driver >= {})",
            n.cuda, c.label, c.min_driver_linux
        ),
        None => format!("{} (not in cuda.yaml)", n.cuda),
    };
    row(out, "cuda", cuda)?;
    row(
        out,
        "os",
        format!("Ubuntu {}, Python {}", n.ubuntu, n.python),
    )?;
    row(out, "driver", format!(">= {}", n.min_driver))?;
    row(out, "forward-compat", list(&n.datacenter_drivers))?;
    if let Some(f) = a.family {
        row(
            out,
            "minor compat",
            format!("CUDA {}.x on >= {}", f.major, f.min_driver),
        )?;
    }
    provenance(out, n)
}

fn check(a: &CheckAnswer, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "matrices {}: valid", a.matrices)?;
    let file = |s: &FileSummary| format!("{} releases, {} … {}", s.releases, s.oldest, s.newest);
    row(out, "rocm.yaml", file(&a.rocm))?;
    row(out, "cuda.yaml", file(&a.cuda))?;
    row(out, "ngc.yaml", file(&a.ngc))?;
    row(
        out,
        "gpus.yaml",
        format!(
            "{} AMD and {} NVIDIA GPU models, {} gfx targets",
            a.amd_gpus, a.nvidia_gpus, a.gfx_targets
        ),
    )?;
    row(
        out,
        "unconfirmed",
        format!(
            "{} records have fields the sources did not confirm",
            a.records_with_unconfirmed
        ),
    )
}
