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

/// Opens the host a command reads: the running one, or a tree under `sysroot` with its recorded facts.
pub fn open(
    sysroot: Option<&std::path::Path>,
    tool_timeout: std::time::Duration,
) -> Result<(HostRoot, Box<dyn Session>), crate::error::Error> {
    let root = match sysroot {
        Some(p) => HostRoot::sysroot(p)?,
        None => HostRoot::live(),
    };
    let session: Box<dyn Session> = if root.is_live() {
        Box::new(LiveSession { tool_timeout })
    } else {
        Box::new(RecordedSession::open(&root))
    };
    Ok((root, session))
}

/// Opens and probes a host without running external tools (what `env`, `dockerfile` and `run` need).
pub fn read(
    sysroot: Option<&std::path::Path>,
    m: &crate::matrix::Matrices,
) -> Result<HostFacts, crate::error::Error> {
    let (root, session) = open(sysroot, std::time::Duration::from_secs(10))?;
    Ok(probe(&root, session.as_ref(), m, &ProbeOptions::default()))
}
