//! The context every operation runs in, made once per process: the matrices, the host and the engine connection,
//! each loaded, probed or opened on first use and at most once, so composed operations (validate runs doctor, the
//! build and the suites) share them instead of each loading its own.

use crate::engine::Engine;
use crate::error::Error;
use crate::host::{self, HostFacts, HostRoot, ProbeOptions, Session};
use crate::matrix::Matrices;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which host the context reads and how: `--sysroot`, `--tool-timeout`, `--deep`.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// `--sysroot DIR` (a tree or a bundle); `None` for the running host.
    pub sysroot: Option<PathBuf>,
    /// How long an external tool (rocminfo, nvidia-smi) may run.
    pub tool_timeout: Duration,
    /// `--deep`: run rocminfo / nvidia-smi (or read their recorded output).
    pub deep: bool,
}

impl Default for HostSpec {
    fn default() -> Self {
        HostSpec {
            sysroot: None,
            tool_timeout: Duration::from_secs(10),
            deep: false,
        }
    }
}

/// The host, probed: the root it was read through and what was found.
pub struct Host {
    /// The root the facts were read through (`/`, a tree or an unpacked bundle).
    pub root: HostRoot,
    /// What the probe found.
    pub facts: HostFacts,
}

/// The matrices, the host and the engine of one process; see the module doc.
pub struct Ctx {
    matrices_dir: Option<PathBuf>,
    host_spec: HostSpec,
    matrices: OnceCell<Matrices>,
    host: OnceCell<Host>,
    engine: OnceCell<Engine>,
    /// `ROCMENV_TRACE=loads`: one stderr line per matrices load, host probe and engine connection.
    trace: bool,
}

impl Ctx {
    /// A context for the matrices in `matrices_dir` (`None`: embedded) and the host `host` names; nothing is read yet.
    pub fn new(matrices_dir: Option<PathBuf>, host: HostSpec) -> Ctx {
        let trace =
            std::env::var("ROCMENV_TRACE").is_ok_and(|v| v.split(',').any(|w| w.trim() == "loads"));
        Ctx {
            matrices_dir,
            host_spec: host,
            matrices: OnceCell::new(),
            host: OnceCell::new(),
            engine: OnceCell::new(),
            trace,
        }
    }

    /// Ends the context of a process that is about to exit: the engine connection and the host's root (an unpacked
    /// bundle's temporary directory) are dropped as usual, but the matrices and the host's facts, tens of thousands
    /// of small allocations, are not freed one by one: the process's exit returns their memory at once. Only for a
    /// process's one context (the binary's `dispatch`); a context dropped normally frees everything.
    pub fn end_of_process(self) {
        let Ctx {
            matrices,
            host,
            engine,
            ..
        } = self;
        drop(engine);
        if let Some(Host { root, facts }) = host.into_inner() {
            root.end_of_process();
            std::mem::forget(facts);
        }
        std::mem::forget(matrices);
    }

    /// `--matrices DIR`, when given.
    pub fn matrices_dir(&self) -> Option<&Path> {
        self.matrices_dir.as_deref()
    }

    /// Which host this context reads.
    pub fn host_spec(&self) -> &HostSpec {
        &self.host_spec
    }

    /// The matrices, loaded and validated on first use.
    pub fn matrices(&self) -> Result<&Matrices, Error> {
        if let Some(m) = self.matrices.get() {
            return Ok(m);
        }
        // The one place the matrices are read; std's `get_or_try_init` is not stable yet.
        let m = Matrices::load(self.matrices_dir.as_deref())?;
        self.traced("matrices loaded");
        Ok(self.matrices.get_or_init(|| m))
    }

    /// The host, opened and probed on first use.
    pub fn host(&self) -> Result<&Host, Error> {
        if let Some(h) = self.host.get() {
            return Ok(h);
        }
        let m = self.matrices()?;
        let (root, session) = self.open_host()?;
        let facts = self.probe(&root, session.as_ref(), m);
        Ok(self.host.get_or_init(|| Host { root, facts }))
    }

    /// The host's facts, probed on first use.
    pub fn facts(&self) -> Result<&HostFacts, Error> {
        Ok(&self.host()?.facts)
    }

    /// Opens the host this context names without probing it (`collect` probes it through a recorder).
    pub fn open_host(&self) -> Result<(HostRoot, Box<dyn Session>), Error> {
        host::open(
            self.host_spec.sysroot.as_deref(),
            self.host_spec.tool_timeout,
            Some(crate::runtime::hip_seen),
        )
    }

    /// Probes the host through `root` and `session`: every probe of a process goes through here.
    pub fn probe(&self, root: &HostRoot, session: &dyn Session, m: &Matrices) -> HostFacts {
        let opts = ProbeOptions {
            deep: self.host_spec.deep,
        };
        let facts = crate::inventory::probe(root, session, m, &opts);
        self.traced("host probed");
        facts
    }

    /// The engine connection (`DOCKER_HOST`, a Docker context, the sockets), opened on first use.
    pub fn engine(&self) -> Result<&Engine, Error> {
        if let Some(e) = self.engine.get() {
            return Ok(e);
        }
        let e = Engine::connect_default()?;
        self.traced("engine connected");
        Ok(self.engine.get_or_init(|| e))
    }

    fn traced(&self, what: &str) {
        if self.trace {
            eprintln!("rocmenv: trace: {what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrices_and_the_host_are_read_once() {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/amdgpu-not-loaded");
        let ctx = Ctx::new(
            None,
            HostSpec {
                sysroot: Some(dir),
                ..HostSpec::default()
            },
        );
        let a: *const Matrices = ctx.matrices().unwrap();
        let b: *const Matrices = ctx.matrices().unwrap();
        assert_eq!(a, b, "one load");
        let f: *const HostFacts = ctx.facts().unwrap();
        let g: *const HostFacts = ctx.facts().unwrap();
        assert_eq!(f, g, "one probe");
    }
}
