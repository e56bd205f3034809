//! `rocmenv.yaml`: the stacks `rocmenv validate` checks, the hosts they deploy to, the smoke level, benchmarks and
//! the checks allowed to warn. Loaded once, validated on load (unknown keys, wrong types, values that would reach a
//! Dockerfile), with errors that name the file, line and column.

mod example;
mod load;
mod schema;

pub use example::{render as render_example, ExampleInput};
pub use load::{Config, StackValues, DEFAULT_FILE};
pub use schema::*;
