//! The container engine: the only module that names bollard. It speaks in rocmenv's types (`BuildEvent`, `RunSpec`,
//! `RunOutcome`, `DeviceMap`) and never prints; the commands and reporters do.

mod build;
mod connect;
mod context;
mod devices;
mod dockerignore;
mod dxg;
mod endpoint;
mod events;
mod fault;
mod gc;
mod image;
mod image_gc;
mod mount;
mod owner;
mod print;
mod run;
mod seccomp;
mod signals;
mod tls;

pub use crate::error::Unreachable;
pub use build::{build_context, build_files, content_tag, BuildFlags, BuildOutcome};
pub use connect::{docker_status, docker_status_from_env, DockerInfo, DockerStatus, Engine};
pub use context::{base_images, BuildContext};
pub use devices::{device_map, shm_size, video_render_gids, DeviceMap, GpuRequest};
pub use dockerignore::DockerIgnore;
pub use dxg::{dxg_mapping, DxgMapping, DXG};
pub use endpoint::{
    context_dir_name, resolve as resolve_docker_endpoint, resolve_endpoint, DockerEnv, Endpoint,
    EndpointOrigin, TlsFiles, DEFAULT_CONTEXT, DEFAULT_SOCKET,
};
pub use events::BuildEvent;
pub use gc::{keep_reason, GcOutcome, GcScope, Kept, Leftover};
pub use image_gc::{plan_image_gc, BuiltImage, ImageGcOutcome, KeptImage, STACK_LABEL};
pub use mount::{Mount, MountKind};
pub use owner::{hostname, liveness, Liveness, Owner};
pub use print::docker_run_line;
pub use run::{new_run_id, OutputStream, RunOutcome, RunSpec, Upload, MANAGED_LABEL, RUN_ID_LABEL};
pub use seccomp::{strict_security_opt, Security, NUMA_SYSCALLS, STRICT_PROFILE};
pub(crate) use signals::StopSignals;
