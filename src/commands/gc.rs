//! `rocmenv gc`: remove the containers crashed rocmenv runs left behind, keeping those of live runs.

use crate::engine::{Engine, GcOutcome};
use crate::error::Error;
use std::io::Write;

/// Runs `rocmenv gc` (`--all`: every labelled container, live runs' too) and lists what it did on `out`.
pub fn exec(json: bool, all: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let engine = Engine::connect_default()?;
    let outcome = engine.gc(all)?;
    let res = if json {
        serde_json::to_string_pretty(&outcome.removed)
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}"))
    } else {
        write_human(&outcome, out)
    };
    super::written(res)?;
    Ok(0)
}

fn write_human(o: &GcOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    if o.removed.is_empty() {
        writeln!(out, "no leftover rocmenv containers")?;
    } else {
        let names: Vec<String> = o
            .removed
            .iter()
            .map(|c| format!("{} ({})", c.name, c.state))
            .collect();
        writeln!(
            out,
            "removed {} container(s): {}",
            o.removed.len(),
            names.join(", ")
        )?;
    }
    for k in &o.kept {
        writeln!(
            out,
            "kept {} ({}): {} (rocmenv gc --all removes it)",
            k.container.name, k.container.state, k.why
        )?;
    }
    Ok(())
}
