//! Running the built binary as the report tests do (schemas, report merge, report html): a fixed locale, no colour,
//! the embedded matrices, and the node name a report records set or left out.

use std::process::{Command, Output};

/// `rocmenv ARGS`, with `ROCMENV_NODE_NAME` set to `node` when given (else the hostname is recorded).
pub fn rocmenv(args: &[&str], node: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("ROCMENV_NODE_NAME");
    if let Some(n) = node {
        c.env("ROCMENV_NODE_NAME", n);
    }
    c.output().expect("runs")
}
