//! Build progress for people: an indicatif spinner on a terminal, plain lines otherwise, nothing with `--json`.

use crate::engine::BuildEvent;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::time::Duration;

/// Where build events go.
pub enum BuildProgress {
    /// `--json`: nothing but the final document.
    Hidden,
    /// Not a terminal: one line per step and per output line.
    Plain(Box<dyn Write>),
    /// A terminal: steps and output scroll above a spinner that shows the current step.
    Bar(ProgressBar),
}

impl BuildProgress {
    /// The reporter for this output: hidden with `--json`, a spinner when stderr is a terminal, else plain lines.
    pub fn new(json: bool, terminal: bool, err: Box<dyn Write>) -> Self {
        if json {
            return BuildProgress::Hidden;
        }
        if !terminal {
            return BuildProgress::Plain(err);
        }
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        BuildProgress::Bar(bar)
    }

    /// Shows one event.
    pub fn event(&mut self, ev: &BuildEvent) {
        let line = match ev {
            BuildEvent::CacheHit { tag } => format!("{tag} exists: nothing to build"),
            BuildEvent::Pulling { image } => format!("pulling {image}"),
            BuildEvent::Step {
                index,
                total,
                instruction,
            } => format!("[{index}/{total}] {instruction}"),
            BuildEvent::Line(l) => format!("  {}", l.trim_start()),
            // Per-layer download counters are noise in a log; the spinner shows them.
            BuildEvent::Progress {
                id,
                status,
                current,
                total,
            } => {
                if let (BuildProgress::Bar(b), Some(c), Some(t)) = (&*self, current, total) {
                    b.set_message(format!("{status} {id} {} / {} MiB", c >> 20, t >> 20));
                }
                return;
            }
            BuildEvent::Error(e) => format!("error: {e}"),
        };
        match self {
            BuildProgress::Hidden => {}
            BuildProgress::Plain(w) => {
                let _ = writeln!(w, "{line}");
            }
            BuildProgress::Bar(b) => {
                if let BuildEvent::Step { .. } | BuildEvent::Pulling { .. } = ev {
                    b.set_message(line.clone());
                }
                b.println(line);
            }
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let BuildProgress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}
