//! What the engine reports while it works; the commands turn these into progress bars or log lines.

/// What a build reports while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildEvent {
    /// The image for this context already exists; the builder is not asked.
    CacheHit {
        /// `rocmenv/<stack>:<hash>`.
        tag: String,
    },
    /// A base image is missing locally and is being pulled.
    Pulling {
        /// The image reference.
        image: String,
    },
    /// A Dockerfile step started.
    Step {
        /// 1-based step number.
        index: u32,
        /// Steps in the Dockerfile.
        total: u32,
        /// The instruction, `RUN apt-get update`.
        instruction: String,
    },
    /// A line the current step printed.
    Line(String),
    /// Download or extraction progress (pulls, `ADD URL`).
    Progress {
        /// Layer or item id.
        id: String,
        /// `Downloading`, `Extracting`, …
        status: String,
        /// Bytes done, when known.
        current: Option<u64>,
        /// Bytes in all, when known.
        total: Option<u64>,
    },
    /// The daemon reported an error; the build stops.
    Error(String),
}
