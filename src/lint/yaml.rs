//! Compose files and Kubernetes manifests read into scopes: a compose service, or a Kubernetes container (of a
//! Pod, or of any workload's pod template), each with its image and environment. serde_yaml_ng keeps no positions,
//! so lines are found by reading the text forward from the previous find (the order of a YAML mapping is the file's).

use super::files::{index_urls_in, Located, ReadProblem, Scope};
use serde_yaml_ng::Value;

/// The services of a compose file.
pub fn compose_scopes(text: &str) -> Result<Vec<Scope>, ReadProblem> {
    let doc: Value = serde_yaml_ng::from_str(text).map_err(problem)?;
    let mut at = Cursor::new(text);
    let Some(services) = doc.get("services").and_then(Value::as_mapping) else {
        return Err(ReadProblem {
            line: None,
            message: "a compose file without a `services:` mapping".into(),
        });
    };
    let mut out = Vec::new();
    for (name, svc) in services {
        let name = scalar(name);
        at.find(&format!("{name}:"));
        let mut scope = Scope {
            name: Some(format!("service {name}")),
            ..Scope::default()
        };
        if let Some(image) = svc.get("image").map(scalar) {
            let line = at.find(&image);
            scope.image = Some(located(&image, "", line));
        }
        for key in ["environment"] {
            match svc.get(key) {
                Some(Value::Mapping(m)) => {
                    for (k, v) in m {
                        let (k, v) = (scalar(k), scalar(v));
                        let line = at.find(&format!("{k}:"));
                        scope.vars.push(located(&k, &v, line));
                    }
                }
                Some(Value::Sequence(items)) => {
                    for item in items {
                        let kv = scalar(item);
                        let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
                        let line = at.find(k);
                        scope.vars.push(located(k, v, line));
                    }
                }
                _ => {}
            }
        }
        for cmd in ["command", "entrypoint"] {
            if let Some(c) = svc.get(cmd) {
                let text = words(c);
                scope.index_urls.extend(index_urls_in(&text, at.line));
            }
        }
        out.push(scope);
    }
    Ok(out)
}

/// The containers (and init containers) of every document in a Kubernetes manifest.
pub fn kubernetes_scopes(text: &str) -> Result<Vec<Scope>, ReadProblem> {
    let mut at = Cursor::new(text);
    let mut out = Vec::new();
    for de in serde_yaml_ng::Deserializer::from_str(text) {
        let doc = serde_path_to_error_free(de)?;
        let kind = doc.get("kind").map(scalar).unwrap_or_default();
        let obj = doc
            .get("metadata")
            .and_then(|m| m.get("name"))
            .map(scalar)
            .unwrap_or_default();
        let spec = pod_spec(&doc);
        for list in ["initContainers", "containers"] {
            let Some(cs) = spec.and_then(|s| s.get(list)).and_then(Value::as_sequence) else {
                continue;
            };
            for c in cs {
                let cname = c.get("name").map(scalar).unwrap_or_default();
                at.find(&format!("name: {cname}"));
                let mut scope = Scope {
                    name: Some(format!("{kind}/{obj} container {cname}")),
                    ..Scope::default()
                };
                if let Some(image) = c.get("image").map(scalar) {
                    let line = at.find(&image);
                    scope.image = Some(located(&image, "", line));
                }
                for e in c
                    .get("env")
                    .and_then(Value::as_sequence)
                    .into_iter()
                    .flatten()
                {
                    let name = e.get("name").map(scalar).unwrap_or_default();
                    // valueFrom (a secret, a field) has no value to judge.
                    let Some(value) = e.get("value").map(scalar) else {
                        continue;
                    };
                    let line = at.find(&name);
                    scope.vars.push(located(&name, &value, line));
                }
                for cmd in ["command", "args"] {
                    if let Some(v) = c.get(cmd) {
                        scope.index_urls.extend(index_urls_in(&words(v), at.line));
                    }
                }
                out.push(scope);
            }
        }
    }
    Ok(out)
}

/// The pod spec of a Pod, of a workload's `spec.template`, or of a CronJob's `spec.jobTemplate.spec.template`.
fn pod_spec(doc: &Value) -> Option<&Value> {
    let spec = doc.get("spec")?;
    if spec.get("containers").is_some() {
        return Some(spec);
    }
    spec.get("template")
        .and_then(|t| t.get("spec"))
        .or_else(|| {
            spec.get("jobTemplate")?
                .get("spec")?
                .get("template")?
                .get("spec")
        })
}

fn serde_path_to_error_free(de: serde_yaml_ng::Deserializer<'_>) -> Result<Value, ReadProblem> {
    use serde::Deserialize;
    Value::deserialize(de).map_err(problem)
}

fn problem(e: serde_yaml_ng::Error) -> ReadProblem {
    ReadProblem {
        line: e.location().map(|l| l.line()),
        message: format!("not valid YAML: {e}"),
    }
}

/// A scalar as text (`3` and `true` as written); a sequence or mapping as its words.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        other => words(other),
    }
}

fn words(v: &Value) -> String {
    match v {
        Value::Sequence(items) => items.iter().map(scalar).collect::<Vec<_>>().join(" "),
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => scalar(v),
        _ => String::new(),
    }
}

fn located(name: &str, value: &str, line: usize) -> Located {
    Located {
        name: name.to_string(),
        value: value.to_string(),
        line,
    }
}

/// Reads lines forward: each find starts where the last one ended, so repeated names resolve in file order.
struct Cursor<'t> {
    lines: Vec<&'t str>,
    line: usize,
}

impl<'t> Cursor<'t> {
    fn new(text: &'t str) -> Self {
        Cursor {
            lines: text.lines().collect(),
            line: 1,
        }
    }

    /// The 1-based line, at or after the cursor, holding `token` (the cursor moves there); else the cursor's line.
    fn find(&mut self, token: &str) -> usize {
        if let Some(i) = self.lines[self.line.saturating_sub(1).min(self.lines.len())..]
            .iter()
            .position(|l| l.contains(token))
        {
            self.line += i;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_services() {
        let t = "services:\n  train:\n    image: rocm/pytorch:latest\n    environment:\n      HSA_OVERRIDE_GFX_VERSION: \"10.3.0\"\n      - nothing\n";
        // A mapping with a stray item is not YAML.
        assert!(compose_scopes(t).is_err());
        let t = "services:\n  train:\n    image: rocm/pytorch:latest\n    environment:\n      HSA_OVERRIDE_GFX_VERSION: \"10.3.0\"\n  infer:\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n";
        let s = compose_scopes(t).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].image.as_ref().unwrap().line, 3);
        assert_eq!(s[0].var("HSA_OVERRIDE_GFX_VERSION").unwrap().line, 5);
        assert_eq!(s[1].var("CUDA_VISIBLE_DEVICES").unwrap().value, "0");
        assert_eq!(s[1].var("CUDA_VISIBLE_DEVICES").unwrap().line, 9);
    }

    #[test]
    fn kubernetes_containers() {
        let t = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: rocm/pytorch:rocm6.2.3_ubuntu22.04_py3.10_pytorch_release_2.3.0\n        env:\n        - name: HSA_OVERRIDE_GFX_VERSION\n          value: \"11.0.0\"\n        - name: TOKEN\n          valueFrom: {secretKeyRef: {name: s, key: k}}\n";
        let s = kubernetes_scopes(t).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(
            s[0].name.as_deref(),
            Some("Deployment/trainer container main")
        );
        assert_eq!(s[0].var("HSA_OVERRIDE_GFX_VERSION").unwrap().line, 16);
        assert!(s[0].var("TOKEN").is_none());
        assert!(kubernetes_scopes("a: [").is_err());
    }
}
