//! `rocmenv report merge|html`: many nodes' reports read one file at a time into one merge and one page (the fleet
//! module, as commands see it), so 10,000 reports never sit in memory together.

use crate::error::Error;
pub use crate::fleet::{merge, parse_doc, render, Merged, NodeReport};
use crate::report::html;
use std::path::{Path, PathBuf};

/// Reads one report file: its JSON document and the node reports merge makes of it, or [`Error::Report`] naming
/// it.
pub fn read_one(path: &Path) -> Result<(serde_json::Value, Vec<NodeReport>), Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::Report {
        path: path.to_path_buf(),
        why: format!("cannot be read ({e})"),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| Error::Report {
        path: path.to_path_buf(),
        why: "is not UTF-8 text".into(),
    })?;
    parse_doc(path, &text).map_err(|why| Error::Report {
        path: path.to_path_buf(),
        why,
    })
}

/// Reads `files` one at a time into the page (and the merge it holds); the first file that is not a report ends it
/// with [`Error::Report`].
pub fn read_all(files: &[PathBuf]) -> Result<html::Builder, Error> {
    let mut b = html::Builder::new();
    for path in files {
        let (doc, reports) = read_one(path)?;
        b.add(&path.display().to_string(), &doc, &reports);
    }
    Ok(b)
}
