//! `rocmenv gc`: remove the containers crashed rocmenv runs left behind.

use crate::engine::Engine;
use crate::error::Error;
use std::io::Write;

/// Runs `rocmenv gc`: removes leftover managed containers and lists them on `out`.
pub fn exec(json: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let engine = Engine::connect_default()?;
    let removed = engine.gc()?;
    let res = if json {
        serde_json::to_string_pretty(&removed)
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}"))
    } else if removed.is_empty() {
        writeln!(out, "no leftover rocmenv containers")
    } else {
        let names: Vec<String> = removed
            .iter()
            .map(|c| format!("{} ({})", c.name, c.state))
            .collect();
        writeln!(
            out,
            "removed {} container(s): {}",
            removed.len(),
            names.join(", ")
        )
    };
    res.map_err(Error::Output)?;
    Ok(0)
}
