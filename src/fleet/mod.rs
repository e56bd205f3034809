//! Fleets: many nodes' JSON reports (doctor, smoke, bench, validate, or an earlier merge) read one at a time into one
//! table of checks by node (`input` → `table`, with `environment` grouping identical environments), and written as
//! text, JSON, JUnit or Markdown (`render`): failures first, grouped by check and message, then counts per check,
//! then the grid while it stays readable.

pub mod compare;
pub mod environment;
pub mod input;
pub mod render;
pub mod table;

pub use environment::{environment, EnvGroup};
pub use input::{parse, parse_doc, reports_of, Entry, NodeReport};
pub use table::{merge, Cell, Counts, Merged, Merger, Problem, Row, GRID_MAX_NODES};
