//! `rocmenv k8s`: a Job (one GPU node) or a DaemonSet (every GPU node) that runs rocmenv's checks where the GPUs are
//! and prints the result as one JSON document in the pod's log.

use super::names;
use super::objects::*;
use crate::error::Error;
use crate::suites::Level;
use crate::vendor::Vendor;
use std::collections::BTreeMap;

/// Where the pod sees the node's files (`rocmenv doctor --sysroot /host`).
pub const HOST_ROOT: &str = "/host";
/// Where the ConfigMap with `rocmenv.yaml` is mounted for `validate`.
pub const CONFIG_DIR: &str = "/etc/rocmenv";
/// The uid the pod runs as: the non-root user rocmenv's images create (images/_common.j2).
pub const RUN_AS: u32 = 1000;

/// The node's paths doctor reads, mounted read-only under [`HOST_ROOT`]: path and whether it is a file. `/dev` shows
/// the device nodes (doctor stats them; the device cgroup still lets the pod open only the GPUs it was given),
/// `/etc/group` who may use them.
const HOST_PATHS: [(&str, bool); 6] = [
    ("/proc", false),
    ("/sys", false),
    ("/dev", false),
    ("/etc/os-release", true),
    ("/etc/group", true),
    ("/opt", false),
];

/// One pod on one node, or one on every GPU node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// A Job: one pod, on the first GPU node the scheduler picks (or `--node`).
    Job,
    /// A DaemonSet: a pod on every GPU node.
    DaemonSet,
}

/// The vendor's device plugin and node labels: only for a GPU vendor, which [`Plan::new`] makes sure of.
struct DevicePlugin;

impl DevicePlugin {
    /// The extended resource the vendor's device plugin advertises
    /// (<https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/>).
    fn resource(vendor: Vendor) -> &'static str {
        match vendor {
            Vendor::Amd => "amd.com/gpu",
            Vendor::Nvidia => "nvidia.com/gpu",
            Vendor::Cpu => unreachable!("Plan::new admits only GPU vendors"),
        }
    }

    /// Node-selector terms (OR-ed) that mark a node with the vendor's GPUs.
    fn node_terms(vendor: Vendor) -> Vec<NodeSelectorTerm> {
        let term = |key: &str, operator: &'static str, values: &[&str]| NodeSelectorTerm {
            match_expressions: vec![Requirement {
                key: key.to_string(),
                operator,
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
        };
        match vendor {
            Vendor::Amd => vec![
                // The AMD GPU Operator's NodeFeatureRule labels nodes with an AMD GPU
                // (ROCm/gpu-operator@33e90978f682505c255571c7ef6752c0704ee490:helm-charts-k8s/templates/gpu-nfd-default-rule.yaml).
                term("feature.node.kubernetes.io/amd-gpu", "In", &["true"]),
                // The device plugin's node labeller (`-family`) without the operator: `amd.com/gpu.family=<family>`
                // (ROCm/k8s-device-plugin@14316e20d6e55818fec475c3c15bd17b78d824bf:cmd/k8s-node-labeller/main.go).
                term("amd.com/gpu.family", "Exists", &[]),
            ],
            // The NVIDIA GPU Operator labels every GPU node `nvidia.com/gpu.present=true`
            // (NVIDIA/gpu-operator@04751ec7ac14bca378d528af3d3f503c7c5716f5:controllers/state_manager.go).
            Vendor::Nvidia => vec![term("nvidia.com/gpu.present", "In", &["true"])],
            Vendor::Cpu => unreachable!("Plan::new admits only GPU vendors"),
        }
    }

    /// The seccomp profile: AMD's own unprivileged PyTorch pod runs `Unconfined`
    /// (ROCm/k8s-device-plugin@8bfe66bd4a26e96901f57c56419d57d6f06fb11d:example/pod/pytorch-non-privileged.yaml), as
    /// `rocmenv run` does for ROCm; NVIDIA needs nothing beyond the runtime's default.
    fn seccomp(vendor: Vendor) -> &'static str {
        match vendor {
            Vendor::Amd => "Unconfined",
            Vendor::Nvidia => "RuntimeDefault",
            Vendor::Cpu => unreachable!("Plan::new admits only GPU vendors"),
        }
    }
}

/// What the pod runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `rocmenv validate --config /etc/rocmenv/rocmenv.yaml` from a ConfigMap.
    Validate,
    /// `rocmenv doctor --sysroot /host --json` and `rocmenv smoke --host`, merged into one document.
    DoctorSmoke,
}

impl Check {
    /// `validate` or `doctor-smoke`.
    pub fn name(self) -> &'static str {
        match self {
            Check::Validate => "validate",
            Check::DoctorSmoke => "doctor-smoke",
        }
    }
}

/// What to print, as asked (`rocmenv k8s` flags); [`Plan::new`] checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Job or DaemonSet.
    pub workload: Workload,
    /// Whose GPUs.
    pub vendor: Vendor,
    /// The image with rocmenv on its PATH (and Python with torch for smoke): `--image`.
    pub image: String,
    /// The namespace: `--namespace`.
    pub namespace: String,
    /// What runs: `--command`.
    pub check: Check,
    /// For `validate`: the ConfigMap holding `rocmenv.yaml` (`--config-map`).
    pub config_map: Option<String>,
    /// The smoke level: `--level`.
    pub level: Level,
    /// GPUs the pod asks for: `--gpus`.
    pub gpus: u32,
    /// Extra group ids (the host's `render` and `video` for AMD): `--group-add`.
    pub group_add: Vec<u32>,
    /// For a Job: the node, by its `kubernetes.io/hostname` label (`--node`).
    pub node: Option<String>,
}

/// A manifest to print: a [`Request`] whose values [`Plan::new`], the only way to make one, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan(Request);

impl std::ops::Deref for Plan {
    type Target = Request;

    fn deref(&self) -> &Request {
        &self.0
    }
}

impl Plan {
    /// Checks every value (names as DNS-1123, the image as a reference) and the combinations.
    pub fn new(r: Request) -> Result<Plan, Error> {
        if !r.vendor.is_gpu() {
            return Err(Error::invalid(
                "vendor",
                "a Kubernetes device plugin serves GPUs: use --vendor amd or nvidia",
            ));
        }
        crate::sanitize::image_reference("image", &r.image)?;
        names::label("namespace", &r.namespace)?;
        match (r.check, &r.config_map) {
            (Check::Validate, Some(c)) => {
                names::subdomain("config-map", c)?;
            }
            (Check::Validate, None) => {
                return Err(Error::invalid(
                    "config-map",
                    "--command validate reads rocmenv.yaml from a ConfigMap: name it (kubectl create configmap rocmenv-config --from-file=rocmenv.yaml)",
                ))
            }
            (Check::DoctorSmoke, Some(_)) => {
                return Err(Error::invalid(
                    "config-map",
                    "only --command validate reads a ConfigMap; drop it, or add --command validate",
                ))
            }
            (Check::DoctorSmoke, None) => {}
        }
        match (r.workload, &r.node) {
            (Workload::Job, Some(n)) => {
                names::subdomain("node", n)?;
            }
            (Workload::DaemonSet, Some(_)) => {
                return Err(Error::invalid(
                    "node",
                    "a DaemonSet runs on every GPU node; --node picks one for `rocmenv k8s job`",
                ))
            }
            (_, None) => {}
        }
        if r.gpus == 0 {
            return Err(Error::invalid(
                "gpus",
                "a check on GPU nodes asks for at least 1 GPU",
            ));
        }
        Ok(Plan(r))
    }

    /// The object's name: `rocmenv-<check>-<vendor>`.
    pub fn name(&self) -> String {
        format!("rocmenv-{}-{}", self.check.name(), self.vendor.name())
    }

    /// The command line that prints this manifest, for its header.
    pub fn command_line(&self) -> String {
        let mut args = vec![
            "rocmenv".to_string(),
            "k8s".into(),
            match self.workload {
                Workload::Job => "job",
                Workload::DaemonSet => "daemonset",
            }
            .into(),
            format!("--vendor {}", self.vendor.name()),
            format!("--image {}", self.image),
            format!("--namespace {}", self.namespace),
            format!("--command {}", self.check.name()),
        ];
        if let Some(c) = &self.config_map {
            args.push(format!("--config-map {c}"));
        }
        if self.check == Check::DoctorSmoke && self.level != Level::Quick {
            args.push(format!("--level {}", self.level.name()));
        }
        if self.gpus != 1 {
            args.push(format!("--gpus {}", self.gpus));
        }
        for g in &self.group_add {
            args.push(format!("--group-add {g}"));
        }
        if let Some(n) = &self.node {
            args.push(format!("--node {n}"));
        }
        args.join(" ")
    }
}

/// The shell script the check container runs: fixed text, with only names from closed sets (vendor, level, the exit
/// rule) in it. Progress goes to files, so the log holds the one JSON document; a step that could not run adds its
/// own log on stderr.
pub fn script(plan: &Plan) -> String {
    let last = match plan.workload {
        Workload::Job => "exit \"$code\"",
        // A DaemonSet pod restarts a check that exits non-zero; the result is in the log, so it ends cleanly.
        Workload::DaemonSet => "exit 0",
    };
    match plan.check {
        Check::DoctorSmoke => format!(
            r#"set -u
out=/tmp/rocmenv
mkdir -p "$out"
rocmenv doctor --sysroot {HOST_ROOT} --json >"$out/doctor.json" 2>"$out/doctor.log"
doctor=$?
rocmenv smoke --host --vendor {vendor} --level {level} --json "$out/smoke.json" >"$out/smoke.log" 2>&1
smoke=$?
set --
for f in "$out/doctor.json" "$out/smoke.json"; do
  if [ -s "$f" ]; then set -- "$@" "$f"; fi
done
code=2
if [ "$#" -gt 0 ]; then
  rocmenv report merge --format json "$@"
  code=$?
fi
if [ "$doctor" -ge 2 ]; then cat "$out/doctor.log" >&2; code=$doctor; fi
if [ "$smoke" -ge 2 ]; then cat "$out/smoke.log" >&2; code=$smoke; fi
{last}
"#,
            vendor = plan.vendor.name(),
            level = plan.level.name(),
        ),
        Check::Validate => format!(
            r#"set -u
out=/tmp/rocmenv
mkdir -p "$out"
rocmenv validate --config {CONFIG_DIR}/rocmenv.yaml --json "$out/validate.json" >"$out/validate.log" 2>&1
code=$?
if [ -s "$out/validate.json" ]; then cat "$out/validate.json"; else cat "$out/validate.log" >&2; fi
{last}
"#
        ),
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn security_context(vendor: Vendor) -> SecurityContext {
    SecurityContext {
        privileged: false,
        allow_privilege_escalation: false,
        read_only_root_filesystem: true,
        capabilities: Capabilities { drop: vec!["ALL"] },
        seccomp_profile: SeccompProfile {
            kind: DevicePlugin::seccomp(vendor),
        },
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_string(),
        mount_path: path.to_string(),
        read_only,
    }
}

fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        value_from: None,
    }
}

/// The volume name of a host path: `host-` and the path's words (`/etc/os-release` → `host-etc-os-release`).
fn host_volume(path: &str) -> String {
    format!("host{}", path.replace('/', "-"))
}

/// The pod template.
fn pod(plan: &Plan, labels: &BTreeMap<String, String>) -> PodTemplate {
    let (mounts, volumes) = mounts_and_volumes(plan);
    let check = check_container(plan, mounts);
    let (init_containers, containers) = init_and_main_containers(plan, check);
    PodTemplate {
        metadata: ObjectMeta {
            name: None,
            namespace: None,
            labels: labels.clone(),
        },
        spec: PodSpec {
            restart_policy: match plan.workload {
                Workload::Job => "Never",
                Workload::DaemonSet => "Always",
            },
            automount_service_account_token: false,
            enable_service_links: false,
            node_selector: plan
                .node
                .iter()
                .map(|n| ("kubernetes.io/hostname".to_string(), n.clone()))
                .collect(),
            affinity: Affinity {
                node_affinity: NodeAffinity {
                    required: NodeSelector {
                        node_selector_terms: DevicePlugin::node_terms(plan.vendor),
                    },
                },
            },
            // GPU nodes are often tainted with the resource's name (Kubernetes' ExtendedResourceToleration admission
            // plugin expects that key: https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#extendedresourcetoleration).
            tolerations: vec![Toleration {
                key: DevicePlugin::resource(plan.vendor).into(),
                operator: "Exists",
                effect: "NoSchedule",
            }],
            security_context: PodSecurityContext {
                run_as_non_root: true,
                run_as_user: RUN_AS,
                run_as_group: RUN_AS,
                supplemental_groups: plan.group_add.clone(),
            },
            init_containers,
            containers,
            volumes,
        },
    }
}

/// The check container's mounts and the pod's volumes: scratch, then the host paths (doctor) or the config map
/// (validate).
fn mounts_and_volumes(plan: &Plan) -> (Vec<VolumeMount>, Vec<Volume>) {
    let mut mounts = vec![mount("scratch", "/tmp", false)];
    let mut volumes = vec![Volume {
        name: "scratch".into(),
        host_path: None,
        config_map: None,
        empty_dir: Some(EmptyDir {
            size_limit: "2Gi".into(),
        }),
    }];
    match plan.check {
        Check::DoctorSmoke => {
            for (path, file) in HOST_PATHS {
                let name = host_volume(path);
                mounts.push(mount(&name, &format!("{HOST_ROOT}{path}"), true));
                volumes.push(Volume {
                    name,
                    host_path: Some(HostPath {
                        path: path.to_string(),
                        kind: if file { "File" } else { "Directory" },
                    }),
                    config_map: None,
                    empty_dir: None,
                });
            }
        }
        Check::Validate => {
            mounts.push(mount("config", CONFIG_DIR, true));
            volumes.push(Volume {
                name: "config".into(),
                host_path: None,
                config_map: Some(ConfigMapSource {
                    name: plan.config_map.clone().unwrap_or_default(),
                }),
                empty_dir: None,
            });
        }
    }
    (mounts, volumes)
}

/// The container that runs the check, with the GPUs it asks for and the caches moved to scratch.
fn check_container(plan: &Plan, mounts: Vec<VolumeMount>) -> Container {
    let gpus = plan.gpus.to_string();
    Container {
        name: "check".into(),
        image: plan.image.clone(),
        image_pull_policy: "IfNotPresent",
        command: vec!["/bin/sh".into(), "-c".into(), script(plan)],
        env: vec![
            EnvVar {
                name: crate::report::node::NODE_ENV.into(),
                value: None,
                value_from: Some(EnvSource {
                    field_ref: FieldRef {
                        field_path: "spec.nodeName",
                    },
                }),
            },
            // The root filesystem is read-only: caches (torch, MIOpen) go to the scratch volume.
            env("HOME", "/tmp"),
            env("XDG_CACHE_HOME", "/tmp/.cache"),
            env("PYTHONDONTWRITEBYTECODE", "1"),
            env("NO_COLOR", "1"),
        ],
        resources: Resources {
            requests: map(&[("cpu", "1"), ("memory", "4Gi")]),
            limits: map(&[
                ("memory", "16Gi"),
                (DevicePlugin::resource(plan.vendor), &gpus),
            ]),
        },
        security_context: security_context(plan.vendor),
        volume_mounts: mounts,
    }
}

/// The (init, main) containers: a Job runs the check; a DaemonSet runs it first and then idles.
fn init_and_main_containers(plan: &Plan, check: Container) -> (Vec<Container>, Vec<Container>) {
    match plan.workload {
        Workload::Job => (vec![], vec![check]),
        // The check runs first, then the pod idles (a DaemonSet pod cannot finish); delete the DaemonSet once the
        // logs are read, as the pod keeps its GPUs while it exists.
        Workload::DaemonSet => {
            let idle = Container {
                name: "idle".into(),
                image: plan.image.clone(),
                image_pull_policy: "IfNotPresent",
                command: vec!["sleep".into(), "infinity".into()],
                env: vec![],
                resources: Resources {
                    requests: map(&[("cpu", "1m"), ("memory", "8Mi")]),
                    limits: map(&[("memory", "32Mi")]),
                },
                security_context: security_context(plan.vendor),
                volume_mounts: vec![],
            };
            (vec![check], vec![idle])
        }
    }
}

/// The manifest as YAML, with a header saying how it was made and how to read its result.
pub fn render(plan: &Plan) -> Result<String, Error> {
    let name = plan.name();
    let labels = map(&[
        ("app.kubernetes.io/name", "rocmenv"),
        ("app.kubernetes.io/instance", &name),
        ("app.kubernetes.io/component", plan.check.name()),
    ]);
    let metadata = ObjectMeta {
        name: Some(name.clone()),
        namespace: Some(plan.namespace.clone()),
        labels: labels.clone(),
    };
    let template = pod(plan, &labels);
    let yaml = match plan.workload {
        Workload::Job => serde_yaml_ng::to_string(&Object {
            api_version: "batch/v1",
            kind: "Job",
            metadata,
            spec: JobSpec {
                backoff_limit: 0,
                active_deadline_seconds: 3600,
                ttl_seconds_after_finished: 86400,
                template,
            },
        }),
        Workload::DaemonSet => serde_yaml_ng::to_string(&Object {
            api_version: "apps/v1",
            kind: "DaemonSet",
            metadata,
            spec: DaemonSetSpec {
                selector: LabelSelector {
                    match_labels: labels.clone(),
                },
                template,
            },
        }),
    }
    .map_err(|e| Error::Environment(format!("cannot write the manifest: {e}")))?;
    let ns = &plan.namespace;
    let read = match plan.workload {
        Workload::Job => format!(
            "# Result: kubectl wait -n {ns} --for=condition=complete --timeout=1h job/{name}; kubectl logs -n {ns} job/{name} > NODE.json"
        ),
        Workload::DaemonSet => format!(
            "# Result: one JSON document per node in the `check` container's log (kubectl logs -n {ns} POD -c check); the pods\n# keep their GPUs while they exist: kubectl delete -n {ns} daemonset/{name} once the logs are read."
        ),
    };
    let privileged = if plan.check == Check::DoctorSmoke {
        format!("\n# The host paths need a namespace whose Pod Security level allows hostPath volumes (privileged): kubectl label namespace {ns} pod-security.kubernetes.io/enforce=privileged")
    } else {
        String::new()
    };
    Ok(format!(
        "# Generated by rocmenv {}: {}\n{read}\n# Merge many: rocmenv report merge *.json{privileged}\n---\n{yaml}",
        env!("CARGO_PKG_VERSION"),
        plan.command_line(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            workload: Workload::Job,
            vendor: Vendor::Amd,
            image: "registry.example.com/gpu/rocmenv:1.0".into(),
            namespace: "gpu-checks".into(),
            check: Check::DoctorSmoke,
            config_map: None,
            level: Level::Quick,
            gpus: 1,
            group_add: vec![],
            node: None,
        }
    }

    #[test]
    fn bad_values_are_refused_with_their_flag() {
        let e = |r: Request| Plan::new(r).unwrap_err().to_string();
        let mut r = request();
        r.image = "x; rm -rf /".into();
        assert!(e(r).starts_with("image: "));
        let mut r = request();
        r.namespace = "Gpu".into();
        assert!(e(r).starts_with("namespace: `Gpu` is not valid"));
        let mut r = request();
        r.check = Check::Validate;
        assert!(e(r).starts_with("config-map: --command validate reads"));
        let mut r = request();
        r.config_map = Some("c".into());
        assert!(e(r).starts_with("config-map: only --command validate"));
        let mut r = request();
        r.workload = Workload::DaemonSet;
        r.node = Some("n1".into());
        assert!(e(r).starts_with("node: a DaemonSet"));
        let mut r = request();
        r.gpus = 0;
        assert!(e(r).starts_with("gpus: "));
        let mut r = request();
        r.vendor = Vendor::Cpu;
        assert!(e(r).starts_with("vendor: a Kubernetes device plugin serves GPUs"));
    }

    #[test]
    fn the_manifest_asks_for_the_vendors_gpus_and_labels() {
        let mut r = request();
        r.vendor = Vendor::Nvidia;
        r.node = Some("gpu-7".into());
        let text = render(&Plan::new(r).unwrap()).unwrap();
        let doc: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(text.split("\n---\n").nth(1).unwrap()).unwrap();
        let spec = &doc["spec"]["template"]["spec"];
        assert_eq!(doc["kind"].as_str(), Some("Job"));
        assert_eq!(
            spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as_str(),
            Some("1")
        );
        assert_eq!(
            spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchExpressions"][0]["key"]
                .as_str(),
            Some("nvidia.com/gpu.present")
        );
        assert_eq!(
            spec["nodeSelector"]["kubernetes.io/hostname"].as_str(),
            Some("gpu-7")
        );
        assert_eq!(
            spec["containers"][0]["securityContext"]["privileged"].as_bool(),
            Some(false)
        );
        assert_eq!(
            spec["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as_str(),
            Some("spec.nodeName")
        );
        assert!(text.starts_with("# Generated by rocmenv "));
    }

    fn yaml(plan: &Plan) -> serde_yaml_ng::Value {
        let text = render(plan).unwrap();
        serde_yaml_ng::from_str(text.split("\n---\n").nth(1).unwrap()).unwrap()
    }

    /// A DaemonSet's check is its init container and ends 0 (a pod that failed would restart it in a loop); a Job's
    /// exits with the check's code.
    #[test]
    fn a_daemonset_checks_in_its_init_container_and_a_job_keeps_the_exit_code() {
        let mut r = request();
        r.workload = Workload::DaemonSet;
        let ds = yaml(&Plan::new(r.clone()).unwrap());
        let spec = &ds["spec"]["template"]["spec"];
        assert_eq!(spec["restartPolicy"].as_str(), Some("Always"));
        assert_eq!(spec["initContainers"][0]["name"].as_str(), Some("check"));
        assert_eq!(spec["containers"][0]["name"].as_str(), Some("idle"));
        assert!(spec["containers"][0]["resources"]["limits"]
            .get("amd.com/gpu")
            .is_none());
        assert_eq!(
            ds["spec"]["selector"]["matchLabels"],
            ds["spec"]["template"]["metadata"]["labels"]
        );
        let init = spec["initContainers"][0]["command"][2].as_str().unwrap();
        assert!(init.ends_with("exit 0\n"), "{init}");
        r.workload = Workload::Job;
        let job = Plan::new(r).unwrap();
        assert!(script(&job).ends_with("exit \"$code\"\n"));
    }

    /// `--command validate` mounts the ConfigMap and no host path; doctor-smoke mounts the node read-only.
    #[test]
    fn validate_mounts_its_config_and_doctor_smoke_the_node_read_only() {
        let mut r = request();
        r.check = Check::Validate;
        r.config_map = Some("rocmenv-config".into());
        let v = yaml(&Plan::new(r).unwrap());
        let vols = v["spec"]["template"]["spec"]["volumes"]
            .as_sequence()
            .unwrap();
        assert!(vols.iter().all(|v| v.get("hostPath").is_none()));
        assert!(vols
            .iter()
            .any(|v| v["configMap"]["name"].as_str() == Some("rocmenv-config")));
        let d = yaml(&Plan::new(request()).unwrap());
        let mounts = d["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
            .as_sequence()
            .unwrap();
        for m in mounts {
            let path = m["mountPath"].as_str().unwrap();
            assert_eq!(
                m["readOnly"].as_bool(),
                Some(path.starts_with("/host/")),
                "{path}"
            );
        }
        assert_eq!(mounts.len(), 1 + HOST_PATHS.len());
    }
}
