//! The part of the Kubernetes API the manifests use, as typed values serialised with serde: every user value lands in
//! a YAML scalar the serialiser quotes, never in text pasted together. (k8s-openapi has every type, but pulls in the
//! whole API for the dozen fields used here.)

use serde::Serialize;
use std::collections::BTreeMap;

/// A top-level object: `apiVersion`, `kind`, `metadata`, `spec`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<S> {
    /// `batch/v1` or `apps/v1`.
    pub api_version: &'static str,
    /// `Job` or `DaemonSet`.
    pub kind: &'static str,
    /// Name, namespace, labels.
    pub metadata: ObjectMeta,
    /// The workload.
    pub spec: S,
}

/// `metadata`.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectMeta {
    /// The object's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

/// `Job.spec`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// Retries: 0, a failed check is an answer, not a flake to retry.
    pub backoff_limit: u32,
    /// Seconds the whole Job may run.
    pub active_deadline_seconds: u64,
    /// Seconds a finished Job (and its pod's log) is kept.
    pub ttl_seconds_after_finished: u64,
    /// The pod.
    pub template: PodTemplate,
}

/// `DaemonSet.spec`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    /// Which pods are the DaemonSet's.
    pub selector: LabelSelector,
    /// The pod.
    pub template: PodTemplate,
}

/// `selector`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels the pods carry.
    pub match_labels: BTreeMap<String, String>,
}

/// `template`.
#[derive(Debug, Clone, Serialize)]
pub struct PodTemplate {
    /// The pod's labels.
    pub metadata: ObjectMeta,
    /// The pod.
    pub spec: PodSpec,
}

/// `PodSpec`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// `Never` for a Job; `Always` for a DaemonSet.
    pub restart_policy: &'static str,
    /// The pod talks to no API server: no token.
    pub automount_service_account_token: bool,
    /// No service variables in the environment.
    pub enable_service_links: bool,
    /// One node by its hostname label (`rocmenv k8s job --node`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// GPU nodes only.
    pub affinity: Affinity,
    /// GPU nodes are often tainted with the resource name.
    pub tolerations: Vec<Toleration>,
    /// Who the processes run as.
    pub security_context: PodSecurityContext,
    /// Containers that run to completion first (the DaemonSet's check).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Container>,
    /// The containers.
    pub containers: Vec<Container>,
    /// Host paths, the ConfigMap and scratch space.
    pub volumes: Vec<Volume>,
}

/// `affinity`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    /// Node affinity.
    pub node_affinity: NodeAffinity,
}

/// `nodeAffinity`.
#[derive(Debug, Clone, Serialize)]
pub struct NodeAffinity {
    /// A hard requirement.
    #[serde(rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    pub required: NodeSelector,
}

/// `NodeSelector`: the terms are OR-ed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    /// Any one of these.
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// A term: its expressions are AND-ed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    /// All of these.
    pub match_expressions: Vec<Requirement>,
}

/// `key operator values`.
#[derive(Debug, Clone, Serialize)]
pub struct Requirement {
    /// The label.
    pub key: String,
    /// `In` or `Exists`.
    pub operator: &'static str,
    /// The values for `In`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A toleration.
#[derive(Debug, Clone, Serialize)]
pub struct Toleration {
    /// The taint's key.
    pub key: String,
    /// `Exists`.
    pub operator: &'static str,
    /// `NoSchedule`.
    pub effect: &'static str,
}

/// The pod's `securityContext`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityContext {
    /// Refuse to start as root.
    pub run_as_non_root: bool,
    /// The user.
    pub run_as_user: u32,
    /// The primary group.
    pub run_as_group: u32,
    /// More groups: the host's `render` and `video` GIDs own AMD's device nodes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supplemental_groups: Vec<u32>,
}

/// A container.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Its name.
    pub name: String,
    /// The image.
    pub image: String,
    /// `IfNotPresent`.
    pub image_pull_policy: &'static str,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Variables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// Requests and limits.
    pub resources: Resources,
    /// What the process may do.
    pub security_context: SecurityContext,
    /// Mounts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
}

/// A variable: a value, or one from the downward API.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// A literal value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Or a field of the pod.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvSource>,
}

/// `valueFrom`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvSource {
    /// The pod field.
    pub field_ref: FieldRef,
}

/// `fieldRef`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldRef {
    /// `spec.nodeName`.
    pub field_path: &'static str,
}

/// `resources`.
#[derive(Debug, Clone, Serialize)]
pub struct Resources {
    /// What the scheduler reserves.
    pub requests: BTreeMap<String, String>,
    /// Ceilings; extended resources (GPUs) are given here.
    pub limits: BTreeMap<String, String>,
}

/// A container's `securityContext`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityContext {
    /// Never.
    pub privileged: bool,
    /// No setuid gains.
    pub allow_privilege_escalation: bool,
    /// The image stays as built; scratch goes to an emptyDir.
    pub read_only_root_filesystem: bool,
    /// Capabilities: all dropped.
    pub capabilities: Capabilities,
    /// The seccomp profile.
    pub seccomp_profile: SeccompProfile,
}

/// `capabilities`.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    /// `ALL`.
    pub drop: Vec<&'static str>,
}

/// `seccompProfile`.
#[derive(Debug, Clone, Serialize)]
pub struct SeccompProfile {
    /// `RuntimeDefault` or `Unconfined`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// A mount.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// The volume.
    pub name: String,
    /// Where.
    pub mount_path: String,
    /// Read-only.
    pub read_only: bool,
}

/// A volume.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// Its name.
    pub name: String,
    /// A path on the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPath>,
    /// A ConfigMap's keys as files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapSource>,
    /// Scratch space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDir>,
}

/// `hostPath`.
#[derive(Debug, Clone, Serialize)]
pub struct HostPath {
    /// The node's path.
    pub path: String,
    /// `Directory` or `File`: the pod does not start when it is missing (nothing is created on the node).
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// `configMap`.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigMapSource {
    /// The ConfigMap.
    pub name: String,
}

/// `emptyDir`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDir {
    /// Most it may hold.
    pub size_limit: String,
}
