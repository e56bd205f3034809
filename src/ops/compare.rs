//! `rocmenv report compare`: bench results read and compared, each against the first (the fleet module's
//! comparison, as commands see it).

use crate::error::Error;
pub use crate::fleet::compare::Comparison;
use std::path::PathBuf;

/// What to compare.
#[derive(Debug, Clone)]
pub struct ComparePlan {
    /// The bench results, the first the reference.
    pub files: Vec<PathBuf>,
    /// A row more than this many percent slower than the first (or not run by a later result) regresses.
    pub fail_on_regression: Option<f64>,
}

/// Reads every file (the first that is not a bench result ends it with [`Error::Report`] naming it) and compares.
pub fn compare(plan: &ComparePlan) -> Result<Comparison, Error> {
    let mut docs = Vec::new();
    for path in &plan.files {
        let (doc, reports) = super::fleet::read_one(path)?;
        let node = reports.first().map(|r| r.node.clone()).unwrap_or_default();
        docs.push((path.display().to_string(), node, doc));
    }
    crate::fleet::compare::compare(&docs, plan.fail_on_regression).map_err(|(i, why)| {
        Error::Report {
            path: plan.files[i].clone(),
            why,
        }
    })
}
