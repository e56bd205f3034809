//! Reading a host: `HostRoot` (files), `Session` (facts no file shows), `probe` → `HostFacts`.

mod facts;
mod probe;
mod root;
mod session;

pub use facts::*;
pub use probe::{probe, ProbeOptions, GPU_ENV, TOOLS};
pub use root::{HostRoot, ReadError};
pub use session::{
    Identity, LiveSession, NodeMeta, RecordedSession, Session, ToolRun, RECORDED_FILE,
};
