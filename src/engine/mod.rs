//! The container engine. For now: asking a Docker-compatible daemon what it is, for `doctor`.

mod ping;

pub use ping::{docker_status, endpoint_from_env};
