//! `rocmenv dockerfile`: a Dockerfile and build context for the rocm, ngc or cpu stack, from the templates in `images/`.

mod context;
mod render;
mod request;
mod select;

pub use context::write_context;
pub use render::{render, validate_request, Rendered, SMOKE_TESTS_DIR, USER_NAME, USER_UID};
pub use request::{DockerfileRequest, Stack};
pub use select::{select_base, BaseImage, CPU_DEFAULT_BASE, ROCM_REPOSITORY};
