//! `rocmenv gc`: remove the containers crashed rocmenv runs left behind, keeping those of live runs; with `--images`,
//! also the images rocmenv built that no container uses, keeping the newest of each stack.

use crate::error::Error;
use crate::ops::gc::{GcOutcome, GcPlan, GcReport, GcScope};
use crate::ops::Ctx;
use std::io::Write;

/// The plan gc's flags ask for (clap has already refused `--force` without `--all`).
pub fn plan(all: bool, force: bool, images: bool, dry_run: bool) -> GcPlan {
    let scope = match (all, force) {
        (true, true) => GcScope::Everything,
        (true, false) => GcScope::AllButLive,
        (false, _) => GcScope::Orphans,
    };
    GcPlan {
        scope,
        images,
        dry_run,
    }
}

/// Runs `rocmenv gc` as `p` says and lists what it did on `out`, as JSON with `json`.
pub fn exec(p: GcPlan, json: bool, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    let r = crate::ops::gc::gc(ctx, &p)?;
    let res = if json {
        serde_json::to_string_pretty(&json_doc(&r))
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}"))
    } else {
        write_human(&r, out)
    };
    super::written(res)?;
    Ok(0)
}

/// gc's JSON document: the removed containers, as it always was, unless `--images` or `--dry-run` asked for more;
/// then an object that says whether it was a dry run, with the containers removed and kept, and the images.
pub fn json_doc(r: &GcReport) -> serde_json::Value {
    let c = &r.containers;
    if r.images.is_none() && !r.dry_run {
        return serde_json::json!(c.removed);
    }
    let mut doc = serde_json::json!({
        "dry_run": r.dry_run,
        "containers": {"removed": c.removed, "kept": c.kept},
    });
    if let Some(i) = &r.images {
        doc["images"] = serde_json::json!(i);
    }
    doc
}

/// Bytes as a person reads them: `512 B`, `3.4 MiB`, `1.2 GiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The human report: one line for what was removed (or that nothing was), then one per thing kept and why; a dry
/// run says `would remove` and `would keep`.
pub fn write_human(r: &GcReport, out: &mut dyn Write) -> std::io::Result<()> {
    let (removed, kept) = if r.dry_run {
        ("would remove", "would keep")
    } else {
        ("removed", "kept")
    };
    let o = &r.containers;
    write_containers(o, removed, kept, out)?;
    let Some(i) = &r.images else { return Ok(()) };
    match (i.removed.len(), i.kept.len()) {
        (0, 0) => writeln!(out, "no images built by rocmenv")?,
        (0, _) => writeln!(out, "{removed} no images")?,
        (n, _) => {
            let names: Vec<&str> = i.removed.iter().map(|x| x.name()).collect();
            let freed = if i.freed_measured {
                format!("{} freed", human_bytes(i.freed_bytes))
            } else {
                format!(
                    "up to {} freed (layers kept images share stay)",
                    human_bytes(i.freed_bytes)
                )
            };
            writeln!(out, "{removed} {n} image(s), {freed}: {}", names.join(", "))?;
        }
    }
    for k in &i.kept {
        writeln!(out, "{kept} image {}: {}", k.image.name(), k.why)?;
    }
    Ok(())
}

fn write_containers(
    o: &GcOutcome,
    removed: &str,
    kept: &str,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match (o.removed.len(), o.kept.len()) {
        (0, 0) => writeln!(out, "no rocmenv containers")?,
        (0, n) => writeln!(
            out,
            "{removed} no containers: the {n} rocmenv container(s) there belong to live runs"
        )?,
        (n, _) => {
            let names: Vec<String> = o
                .removed
                .iter()
                .map(|c| format!("{} ({})", c.name, c.state))
                .collect();
            writeln!(out, "{removed} {n} container(s): {}", names.join(", "))?;
        }
    }
    for k in &o.kept {
        // A live run's container goes only with --force; one whose owner cannot be checked, with --all.
        let flags = if k.live { "--all --force" } else { "--all" };
        writeln!(
            out,
            "{kept} {} ({}): {} (rocmenv gc {flags} removes it)",
            k.container.name, k.container.state, k.why
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{BuiltImage, ImageGcOutcome, Kept, KeptImage, Leftover};

    fn leftover(name: &str, state: &str) -> Leftover {
        Leftover {
            id: "0123456789ab".into(),
            name: name.into(),
            state: state.into(),
            owner: None,
        }
    }

    fn report(o: GcOutcome, i: Option<ImageGcOutcome>, dry_run: bool) -> GcReport {
        GcReport {
            containers: o,
            images: i,
            dry_run,
        }
    }

    fn text(r: &GcReport) -> String {
        let mut out = Vec::new();
        write_human(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn live_run() -> GcOutcome {
        GcOutcome {
            removed: vec![],
            kept: vec![Kept {
                container: leftover("rocmenv-a", "running"),
                why: "its rocmenv run (pid 7) is still running".into(),
                live: true,
            }],
        }
    }

    /// Issue 25: with a live run's container there, gc said `no leftover rocmenv containers` and then
    /// `kept rocmenv-… (running)`. Now the first line agrees with the rest. Issue 36: a live run's container goes
    /// only with `--all --force`, and the line says so.
    #[test]
    fn gc_output_never_says_none_and_then_lists_one() {
        let t = text(&report(live_run(), None, false));
        assert!(
            !t.contains("no rocmenv containers") && !t.contains("no leftover"),
            "{t}"
        );
        assert_eq!(t, "removed no containers: the 1 rocmenv container(s) there belong to live runs\n\
             kept rocmenv-a (running): its rocmenv run (pid 7) is still running (rocmenv gc --all --force removes it)\n");
        assert_eq!(
            text(&report(GcOutcome::default(), None, false)),
            "no rocmenv containers
"
        );
    }

    /// `--images` says what it removed and the space that freed, and why each kept image stayed.
    #[test]
    fn gc_images_says_what_went_and_the_space_freed() {
        let img = |id: &str| BuiltImage {
            id: id.into(),
            tags: vec![format!("rocmenv/cpu:{id}")],
            stack: "cpu".into(),
            created: 1,
            size: 1,
        };
        let i = ImageGcOutcome {
            removed: vec![img("a"), img("b")],
            kept: vec![KeptImage {
                image: img("c"),
                why: "the newest cpu image (rocmenv gc --images --all removes it)".into(),
            }],
            freed_bytes: 3 * 1024 * 1024 * 1024 / 2,
            freed_measured: true,
        };
        let t = text(&report(GcOutcome::default(), Some(i.clone()), false));
        assert_eq!(
            t,
            "no rocmenv containers\nremoved 2 image(s), 1.5 GiB freed: rocmenv/cpu:a, rocmenv/cpu:b\n\
             kept image rocmenv/cpu:c: the newest cpu image (rocmenv gc --images --all removes it)\n"
        );
        assert_eq!(human_bytes(512), "512 B");
        // A dry run says what would happen, in the same words.
        let o = GcOutcome {
            removed: vec![leftover("rocmenv-b", "exited")],
            kept: vec![],
        };
        let i = ImageGcOutcome {
            freed_measured: false,
            ..i
        };
        let t = text(&report(o, Some(i), true));
        assert_eq!(
            t,
            "would remove 1 container(s): rocmenv-b (exited)\n\
             would remove 2 image(s), up to 1.5 GiB freed (layers kept images share stay): rocmenv/cpu:a, rocmenv/cpu:b\n\
             would keep image rocmenv/cpu:c: the newest cpu image (rocmenv gc --images --all removes it)\n"
        );
    }

    /// Issue 36: `--all` alone keeps live runs; `--force` on top takes them. The JSON stays the bare list of removed
    /// containers unless `--images` or `--dry-run` asked for more; then it is an object with `dry_run`.
    #[test]
    fn flags_become_the_plan_and_the_json_stays_compatible() {
        assert_eq!(plan(false, false, false, false).scope, GcScope::Orphans);
        assert_eq!(plan(true, false, false, false).scope, GcScope::AllButLive);
        let p = plan(true, true, true, true);
        assert!(
            p.scope == GcScope::Everything && p.images && p.dry_run,
            "{p:?}"
        );
        let gone = || GcOutcome {
            removed: vec![leftover("rocmenv-b", "exited")],
            kept: vec![],
        };
        let bare = json_doc(&report(gone(), None, false));
        assert_eq!(bare[0]["name"], "rocmenv-b");
        assert!(bare.is_array(), "{bare}");
        let dry = json_doc(&report(gone(), None, true));
        assert_eq!(dry["dry_run"], true);
        assert_eq!(dry["containers"]["removed"][0]["name"], "rocmenv-b");
        assert!(dry.get("images").is_none(), "{dry}");
        let with_images = json_doc(&report(live_run(), Some(ImageGcOutcome::default()), false));
        assert_eq!(with_images["dry_run"], false);
        assert_eq!(
            with_images["containers"]["kept"][0]["why"],
            "its rocmenv run (pid 7) is still running"
        );
        assert!(with_images["containers"]["kept"][0].get("live").is_none());
        assert_eq!(with_images["images"]["freed_bytes"], 0);
    }
}
