//! `rocmenv gc`: remove the containers crashed rocmenv runs left behind, keeping those of live runs; with `--images`,
//! also the images rocmenv built that no container uses, keeping the newest of each stack.

use crate::engine::{Engine, GcOutcome, ImageGcOutcome};
use crate::error::Error;
use std::io::Write;

/// Runs `rocmenv gc` (`--all`: every labelled container, live runs' too; `--images`: built images as well) and lists
/// what it did on `out`.
pub fn exec(json: bool, all: bool, images: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let engine = Engine::connect_default()?;
    let outcome = engine.gc(all)?;
    let image_outcome = if images {
        Some(engine.gc_images(all)?)
    } else {
        None
    };
    let res = match (json, &image_outcome) {
        // Without --images the document stays what it was: the removed containers.
        (true, None) => serde_json::to_string_pretty(&outcome.removed)
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}")),
        (true, Some(i)) => serde_json::to_string_pretty(&serde_json::json!({
            "containers": {"removed": outcome.removed, "kept": outcome.kept},
            "images": i,
        }))
        .map_err(std::io::Error::other)
        .and_then(|d| writeln!(out, "{d}")),
        (false, _) => write_human(&outcome, image_outcome.as_ref(), out),
    };
    super::written(res)?;
    Ok(0)
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

/// The human report: one line for what was removed (or that nothing was), then one per thing kept and why.
pub fn write_human(
    o: &GcOutcome,
    images: Option<&ImageGcOutcome>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match (o.removed.len(), o.kept.len()) {
        (0, 0) => writeln!(out, "no rocmenv containers")?,
        (0, n) => writeln!(
            out,
            "removed no containers: the {n} rocmenv container(s) there belong to live runs"
        )?,
        (n, _) => {
            let names: Vec<String> = o
                .removed
                .iter()
                .map(|c| format!("{} ({})", c.name, c.state))
                .collect();
            writeln!(out, "removed {n} container(s): {}", names.join(", "))?;
        }
    }
    for k in &o.kept {
        writeln!(
            out,
            "kept {} ({}): {} (rocmenv gc --all removes it)",
            k.container.name, k.container.state, k.why
        )?;
    }
    let Some(i) = images else { return Ok(()) };
    match (i.removed.len(), i.kept.len()) {
        (0, 0) => writeln!(out, "no images built by rocmenv")?,
        (0, _) => writeln!(out, "removed no images")?,
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
            writeln!(out, "removed {n} image(s), {freed}: {}", names.join(", "))?;
        }
    }
    for k in &i.kept {
        writeln!(out, "kept image {}: {}", k.image.name(), k.why)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{BuiltImage, Kept, KeptImage, Leftover};

    fn leftover(name: &str, state: &str) -> Leftover {
        Leftover {
            id: "0123456789ab".into(),
            name: name.into(),
            state: state.into(),
            owner: None,
        }
    }

    fn text(o: &GcOutcome, i: Option<&ImageGcOutcome>) -> String {
        let mut out = Vec::new();
        write_human(o, i, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Issue 25: with a live run's container there, gc said `no leftover rocmenv containers` and then
    /// `kept rocmenv-… (running)`. Now the first line agrees with the rest.
    #[test]
    fn gc_output_never_says_none_and_then_lists_one() {
        let o = GcOutcome {
            removed: vec![],
            kept: vec![Kept {
                container: leftover("rocmenv-a", "running"),
                why: "its rocmenv run (pid 7) is still running".into(),
            }],
        };
        let t = text(&o, None);
        assert!(
            !t.contains("no rocmenv containers") && !t.contains("no leftover"),
            "{t}"
        );
        assert!(t.starts_with("removed no containers: the 1 rocmenv container(s) there belong to live runs\nkept rocmenv-a (running)"), "{t}");
        assert_eq!(text(&GcOutcome::default(), None), "no rocmenv containers\n");
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
        let t = text(&GcOutcome::default(), Some(&i));
        assert_eq!(
            t,
            "no rocmenv containers\nremoved 2 image(s), 1.5 GiB freed: rocmenv/cpu:a, rocmenv/cpu:b\n\
             kept image rocmenv/cpu:c: the newest cpu image (rocmenv gc --images --all removes it)\n"
        );
        assert_eq!(human_bytes(512), "512 B");
    }
}
