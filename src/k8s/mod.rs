//! Kubernetes manifests that run rocmenv on GPU nodes: typed objects (`objects`), name checks (`names`) and the
//! Job / DaemonSet builder (`manifest`).

pub mod manifest;
pub mod names;
pub mod objects;

pub use manifest::{render, script, Check, Plan, Request, Workload};
