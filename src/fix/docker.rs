//! Docker's `nvidia` runtime in `/etc/docker/daemon.json`, written as `nvidia-ctk runtime configure --runtime=docker`
//! writes it (NVIDIA/nvidia-container-toolkit@83ad09b1791879564014fc2538f9ea02eef97bec:pkg/config/engine/docker/docker.go:
//! `runtimes.nvidia = {"path": "nvidia-container-runtime", "args": []}`, the other keys kept, keys sorted, four-space
//! indent), for a host with NVIDIA GPUs whose Docker has neither that runtime nor an NVIDIA CDI spec.

use super::{Action, Change, Needs};
use serde::Serialize;
use serde_json::{Map, Value};

/// Where nvidia-ctk's docker configuration lives.
pub const DAEMON_JSON: &str = "/etc/docker/daemon.json";

const SOURCE: &str = "NVIDIA/nvidia-container-toolkit@83ad09b1791879564014fc2538f9ea02eef97bec:pkg/config/engine/docker/docker.go";

/// The runtime entry, or why it is not planned (a note). `current` is daemon.json's text (`None`: no file);
/// `runtime_installed`: `nvidia-container-runtime` is on the host.
pub fn plan_docker_runtime(
    current: Option<&str>,
    runtime_installed: bool,
) -> Result<Action, String> {
    if !runtime_installed {
        return Err("docker runtime: nvidia-container-runtime is not installed; install nvidia-container-toolkit (fix.install prints NVIDIA's commands), then run `rocmenv fix` again".into());
    }
    let mut doc: Map<String, Value> = match current.map(str::trim) {
        None | Some("") => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(_) | Err(_) => {
                return Err(format!("docker runtime: {DAEMON_JSON} is not a JSON object; fix it by hand (`nvidia-ctk runtime configure` would refuse it too)"))
            }
        },
    };
    let runtimes = doc
        .entry("runtimes")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(runtimes) = runtimes else {
        return Err(format!(
            "docker runtime: `runtimes` in {DAEMON_JSON} is not an object; fix it by hand"
        ));
    };
    runtimes.insert(
        "nvidia".into(),
        serde_json::json!({"args": [], "path": "nvidia-container-runtime"}),
    );
    let after = four_space(&Value::Object(doc));
    Ok(Action {
        id: "fix.docker-runtime",
        fixes: vec!["docker.gpu-runtime".into()],
        summary: format!("{DAEMON_JSON}: add the nvidia runtime as `nvidia-ctk runtime configure --runtime=docker` does; then restart Docker (sudo systemctl restart docker)"),
        change: Change::Edit {
            path: DAEMON_JSON.into(),
            before: current.map(str::to_string),
            after,
        },
        needs: Needs {
            root: true,
            relogin: false,
            reboot: false,
        },
        source: SOURCE,
    })
}

/// JSON as Go's `json.MarshalIndent(c, "", "    ")` writes a map: keys sorted (serde_json's map is ordered by key),
/// four spaces; with a final newline.
fn four_space(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    v.serialize(&mut ser).expect("a JSON value serializes");
    let mut s = String::from_utf8(out).expect("serde_json writes UTF-8");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_added_beside_the_other_keys() {
        let a = plan_docker_runtime(Some("{\n  \"log-driver\": \"json-file\"\n}\n"), true).unwrap();
        let Change::Edit { after, .. } = &a.change else {
            panic!()
        };
        assert_eq!(after, "{\n    \"log-driver\": \"json-file\",\n    \"runtimes\": {\n        \"nvidia\": {\n            \"args\": [],\n            \"path\": \"nvidia-container-runtime\"\n        }\n    }\n}\n");
        let a = plan_docker_runtime(None, true).unwrap();
        let Change::Edit { before, .. } = &a.change else {
            panic!()
        };
        assert!(before.is_none());
    }

    #[test]
    fn what_cannot_be_planned_says_why() {
        assert!(plan_docker_runtime(None, false)
            .unwrap_err()
            .contains("install nvidia-container-toolkit"));
        assert!(plan_docker_runtime(Some("[1]"), true)
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(plan_docker_runtime(Some("{\"runtimes\": 3}"), true)
            .unwrap_err()
            .contains("not an object"));
    }
}
