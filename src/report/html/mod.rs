//! `rocmenv report html` (and `--html FILE`): any of rocmenv's JSON reports as one self-contained page: a node ×
//! check grid, each node's environment, bar charts of the benchmark figures, a throughput table per GPU kind. The
//! page has no script and loads nothing (its Content-Security-Policy forbids it); every value is HTML-escaped by the
//! template engine (minijinja's HTML auto-escaping), so a hostile node name or message stays text.

pub mod chart;
pub mod model;

pub use model::{page, Builder, Page, Source};

/// The page's template: data, laid out once; the values come from [`Page`].
const TEMPLATE: &str = include_str!("page.html");

/// The page as HTML; an error only if the embedded template is broken.
pub fn render(p: &Page) -> Result<String, minijinja::Error> {
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("page.html", TEMPLATE)?;
    env.get_template("page.html")?
        .render(minijinja::value::Serde(p))
}

#[cfg(test)]
mod tests;
