//! `rocmenv fix`'s report: the plan, action by action (what it fixes, the change, what it needs, its source), and
//! what `--apply` or `--undo` did; or one JSON document.

use crate::fix::{Applied, FixPlan, FixRoot, Undone};
use std::io::{self, Write};

/// What the command did with the plan.
pub enum FixOutcome<'a> {
    /// Printed it only.
    Planned,
    /// Performed it.
    Applied(&'a Applied),
    /// Reverted the journal.
    Undone(&'a Undone),
}

fn root_words(r: &FixRoot) -> String {
    match r {
        FixRoot::Live => "this host".into(),
        FixRoot::Tree(p) => format!("the host tree {}", p.display()),
        FixRoot::Bundle(p) => format!("the bundle {}", p.display()),
    }
}

/// The human report.
pub fn render_fix(
    plan: Option<&FixPlan>,
    outcome: &FixOutcome,
    out: &mut dyn Write,
) -> io::Result<()> {
    if let FixOutcome::Undone(u) = outcome {
        if u.reverted.is_empty() {
            return writeln!(out, "rocmenv fix --undo: nothing to undo (no journal)");
        }
        for r in &u.reverted {
            writeln!(out, "  {r}")?;
        }
        return writeln!(
            out,
            "rocmenv fix --undo: reverted {} step(s); the journal is removed",
            u.reverted.len()
        );
    }
    let Some(p) = plan else { return Ok(()) };
    let user = p
        .user
        .as_deref()
        .map(|u| format!(", for {u}"))
        .unwrap_or_default();
    writeln!(
        out,
        "rocmenv fix: {}{user}: {} action(s)",
        root_words(&p.root),
        p.actions.len()
    )?;
    for (i, a) in p.actions.iter().enumerate() {
        let mut needs = Vec::new();
        if a.needs.root {
            needs.push("root");
        }
        if a.needs.relogin {
            needs.push("a new login");
        }
        if a.needs.reboot {
            needs.push("a reboot");
        }
        writeln!(out, "{}. {} — {}", i + 1, a.id, a.summary)?;
        writeln!(
            out,
            "   fixes: {}; needs: {}",
            if a.fixes.is_empty() {
                "no doctor finding".into()
            } else {
                a.fixes.join(", ")
            },
            if needs.is_empty() {
                "nothing".into()
            } else {
                needs.join(", ")
            }
        )?;
        for l in a.change.shown() {
            writeln!(out, "   {l}")?;
        }
        writeln!(out, "   source: {}", a.source)?;
    }
    for n in &p.notes {
        writeln!(out, "- skipped {n}")?;
    }
    let manual = p.actions.iter().filter(|a| !a.change.applies()).count();
    let yours = if manual > 0 {
        format!(
            "; the commands of {manual} action(s) above are yours to run: rocmenv never runs them"
        )
    } else {
        String::new()
    };
    match outcome {
        FixOutcome::Planned if p.actions.is_empty() => writeln!(out, "nothing to fix"),
        FixOutcome::Planned if manual == p.actions.len() => {
            writeln!(out, "nothing for rocmenv to change{yours}")
        }
        FixOutcome::Planned => writeln!(
            out,
            "dry run: nothing changed; `rocmenv fix --apply` performs the plan{yours}"
        ),
        FixOutcome::Applied(a) if a.done.is_empty() && manual > 0 => {
            writeln!(out, "nothing changed{yours}")
        }
        FixOutcome::Applied(a) if a.done.is_empty() => {
            writeln!(out, "nothing to fix: nothing changed")
        }
        FixOutcome::Applied(a) => writeln!(
            out,
            "applied {} action(s); journal {}; `rocmenv fix --undo` reverts them{yours}",
            a.done.len(),
            a.journal.as_deref().unwrap_or("-")
        ),
        FixOutcome::Undone(_) => Ok(()),
    }
}

/// One JSON document: the plan (root, user, actions, notes) and what was done.
pub fn render_fix_json(
    plan: Option<&FixPlan>,
    outcome: &FixOutcome,
    out: &mut dyn Write,
) -> io::Result<()> {
    let done = match outcome {
        FixOutcome::Planned => serde_json::json!({"mode": "plan"}),
        FixOutcome::Applied(a) => serde_json::json!({"mode": "apply", "applied": a}),
        FixOutcome::Undone(u) => serde_json::json!({"mode": "undo", "undone": u}),
    };
    let doc = serde_json::json!({
        "schema_version": 1,
        "root": plan.map(|p| root_words(&p.root)),
        "user": plan.and_then(|p| p.user.clone()),
        "actions": plan.map(|p| p.actions.clone()).unwrap_or_default(),
        "notes": plan.map(|p| p.notes.clone()).unwrap_or_default(),
        "outcome": done,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
