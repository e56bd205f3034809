//! Fleets: many nodes' JSON reports (doctor, smoke, bench, validate, or an earlier merge) read into one table of
//! checks by node (`input` → `table`), and written as text, JSON, JUnit or Markdown (`render`).

pub mod input;
pub mod render;
pub mod table;

pub use input::{parse, parse_doc, Entry, NodeReport};
pub use table::{merge, Counts, Merged};
