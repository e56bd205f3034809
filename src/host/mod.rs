//! Reading a host: `HostRoot` (files), `Session` (facts no file shows), `probe` → `HostFacts`.

pub mod bundle;
mod facts;
mod probe;
mod root;
mod session;

pub use facts::*;
pub use probe::{
    dxg_address, is_dxg, parse_groups, probe, ProbeOptions, DXG_CONTAINER_LIBS,
    FIRMWARE_COMPONENTS, GPU_ENV, MODPROBE_DIRS, SECURE_BOOT_VAR, TOOLS, WSL_LIBDXCORE, WSL_LIBHSA,
    WSL_LIBROCDXG, WSL_NVIDIA_SMI,
};
pub use root::{Asked, HostRoot, ReadError, Recording, Seen, MAX_READ};
pub use session::{
    HipLister, Identity, LiveSession, NodeMeta, RecordedFacts, RecordedOutcome, RecordedSession,
    RecordingSession, Session, ToolRun, RECORDED_FILE,
};

/// Opens the host a command reads: the running one, or a tree under `sysroot` (refused when it lacks the files
/// every host has) with its recorded facts. A `sysroot` that is a file is a bundle (`rocmenv collect`), unpacked
/// into a temporary directory that lives as long as the returned root. `hip` lists the HIP runtime's devices on the
/// running host (a tree answers from its record).
pub fn open(
    sysroot: Option<&std::path::Path>,
    tool_timeout: std::time::Duration,
    hip: Option<HipLister>,
) -> Result<(HostRoot, Box<dyn Session>), crate::error::Error> {
    let root = match sysroot {
        Some(p) => {
            let root = if bundle::is_bundle(p) {
                bundle::open(p)?
            } else {
                HostRoot::sysroot(p)?
            };
            root.check_host_tree()?;
            root
        }
        None => HostRoot::live(),
    };
    let session: Box<dyn Session> = if root.is_live() {
        Box::new(LiveSession { tool_timeout, hip })
    } else {
        Box::new(RecordedSession::open(&root))
    };
    Ok((root, session))
}
