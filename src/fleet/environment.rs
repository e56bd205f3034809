//! What a report says about its node's software and devices (OS, kernel, drivers, ROCm or CUDA, GPUs, torch, the
//! image), and identical environments grouped once with their nodes, so a fleet of 2,000 nodes on three images shows
//! three environments.

use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One environment and the nodes that have it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvGroup {
    /// (what, value) pairs, in a fixed order.
    pub items: Vec<(String, String)>,
    /// The nodes' places in the merge's node list, in node order.
    pub nodes: Vec<usize>,
}

/// The text at `path` in `v`, when it is a string that is not empty.
pub fn text_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_str().filter(|t| !t.is_empty())
}

/// The kind of a report document (`doctor` when it names none).
pub fn kind(doc: &Value) -> &str {
    match doc.get("kind").and_then(Value::as_str) {
        Some(k) => k,
        None => "doctor",
    }
}

/// Adds `(label, value)` unless the label is there already or the value is missing.
fn add(items: &mut Vec<(String, String)>, label: &str, value: Option<&str>) {
    if let Some(v) = value {
        if !items.iter().any(|(l, _)| l == label) {
            items.push((label.to_string(), v.to_string()));
        }
    }
}

fn doctor_env(doc: &Value, items: &mut Vec<(String, String)>) {
    let h = &doc["host"];
    add(items, "OS", text_at(h, &["os", "pretty_name"]));
    add(items, "kernel", text_at(h, &["kernel", "release"]));
    add(items, "ROCm", text_at(h, &["rocm", "version"]));
    add(items, "CUDA", text_at(h, &["cuda", "version"]));
    add(
        items,
        "amdgpu driver",
        text_at(h, &["amdgpu_driver", "version"]),
    );
    add(
        items,
        "NVIDIA driver",
        text_at(h, &["nvidia_driver", "version"]),
    );
    let gpus: Vec<String> = h["gpus"]
        .as_array()
        .map(|g| {
            g.iter()
                .map(|g| {
                    let name = text_at(g, &["name"]).unwrap_or("unknown GPU");
                    match text_at(g, &["gfx"]).or(text_at(g, &["compute_capability"])) {
                        Some(arch) => format!("{name} ({arch})"),
                        None => name.to_string(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if !gpus.is_empty() {
        add(items, "GPUs", Some(&count_same(&gpus)));
    }
}

fn suite_env(doc: &Value, items: &mut Vec<(String, String)>) {
    let v = &doc["versions"];
    add(items, "torch", text_at(v, &["torch"]));
    add(items, "HIP (torch)", text_at(v, &["hip"]));
    add(items, "CUDA (torch)", text_at(v, &["cuda"]));
    add(items, "Python", text_at(v, &["python"]));
    let dev = &doc["device"];
    let name = text_at(dev, &["name"]).map(str::to_string);
    let count = dev["count"].as_u64().unwrap_or(0);
    add(
        items,
        "device",
        name.map(|n| {
            if count > 1 {
                format!("{count} × {n}")
            } else {
                n
            }
        })
        .as_deref(),
    );
    add(items, "image", image_of(doc));
}

/// What a document says about its node's software and devices.
pub fn environment(doc: &Value) -> Vec<(String, String)> {
    let mut items = Vec::new();
    match kind(doc) {
        "doctor" => doctor_env(doc, &mut items),
        "smoke" | "bench" => suite_env(doc, &mut items),
        "validate" => {
            for st in doc["stacks"].as_array().into_iter().flatten() {
                if let (Some(name), Some(image)) = (text_at(st, &["name"]), text_at(st, &["image"]))
                {
                    add(&mut items, &format!("image ({name})"), Some(image));
                }
            }
        }
        _ => {}
    }
    items
}

/// The image a suite ran in, by digest when the document has one.
pub fn image_of(doc: &Value) -> Option<&str> {
    text_at(doc, &["image", "digest"])
        .or(text_at(doc, &["image", "id"]))
        .or(text_at(doc, &["image", "reference"]))
        .or(text_at(doc, &["image"]))
}

/// `["A", "A", "B"]` → `2 × A, B`.
fn count_same(names: &[String]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|(s, _)| s == n) {
            Some((_, c)) => *c += 1,
            None => seen.push((n.clone(), 1)),
        }
    }
    seen.iter()
        .map(|(n, c)| {
            if *c > 1 {
                format!("{c} × {n}")
            } else {
                n.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Identical environments once: `(items, node place)` in node order → groups, the most common first.
pub fn group(envs: Vec<(Vec<(String, String)>, usize)>) -> Vec<EnvGroup> {
    let mut index: HashMap<Vec<(String, String)>, usize> = HashMap::new();
    let mut out: Vec<EnvGroup> = Vec::new();
    for (items, place) in envs {
        match index.get(&items) {
            Some(&i) => out[i].nodes.push(place),
            None => {
                index.insert(items.clone(), out.len());
                out.push(EnvGroup {
                    items,
                    nodes: vec![place],
                });
            }
        }
    }
    // Stable: equal counts keep the order of their first node.
    out.sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_environments_group_once() {
        let a = vec![("OS".to_string(), "Ubuntu".to_string())];
        let b = vec![("OS".to_string(), "RHEL".to_string())];
        let g = group(vec![(a.clone(), 0), (b.clone(), 1), (a.clone(), 2)]);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].items.clone(), g[0].nodes.clone()), (a, vec![0, 2]));
        assert_eq!((g[1].items.clone(), g[1].nodes.clone()), (b, vec![1]));
    }
}
