//! `rocmenv report merge|html`: many nodes' reports read and merged into one table (the fleet module, as commands
//! see it).

pub use crate::fleet::{merge, parse_doc, render, Merged, NodeReport};
