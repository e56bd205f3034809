//! `rocmenv k8s`: manifests that validate GPU nodes. The work is pure (a checked plan rendered as YAML), so this is
//! the k8s module as commands see it.

pub use crate::k8s::{render, Check, Plan, Request, Workload};
