//! `rocmenv k8s job|daemonset`: the flags checked into a plan, the manifest printed.

use crate::cli::{K8sArgs, K8sCheckArg, K8sKindArg};
use crate::error::Error;
use crate::ops::k8s::{self, Check, Plan, Request, Workload};
use std::io::Write;

/// The plan `rocmenv k8s` prints, from its flags.
pub fn plan(a: K8sArgs) -> Result<Plan, Error> {
    Plan::new(Request {
        workload: match a.kind {
            K8sKindArg::Job => Workload::Job,
            K8sKindArg::Daemonset => Workload::DaemonSet,
        },
        vendor: a.vendor,
        image: a.image,
        namespace: a.namespace,
        check: match a.check {
            K8sCheckArg::DoctorSmoke => Check::DoctorSmoke,
            K8sCheckArg::Validate => Check::Validate,
        },
        config_map: a.config_map,
        level: a.level,
        gpus: a.gpus,
        group_add: a.group_add,
        node: a.node,
    })
}

/// Runs `rocmenv k8s`: prints the manifest; returns the exit code.
pub fn exec(a: K8sArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let text = k8s::render(&plan(a)?)?;
    super::written(out.write_all(text.as_bytes()))?;
    Ok(crate::error::EXIT_OK)
}
