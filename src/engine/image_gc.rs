//! `rocmenv gc --images`: remove the images rocmenv built (they carry the `rocmenv.stack` label) that no container
//! uses, keeping the newest of each stack, and measure the space that freed.

use super::connect::Engine;
use super::fault::describe;
use crate::error::Error;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, RemoveImageOptionsBuilder,
};
use std::collections::{BTreeMap, HashMap};

/// The label every image `rocmenv build` makes carries: the stack it was built for.
pub const STACK_LABEL: &str = "rocmenv.stack";

/// An image rocmenv built.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BuiltImage {
    /// Image id (`sha256:` dropped, 12 characters).
    pub id: String,
    /// Its tags (`rocmenv/rocm:1a2b…`, and any the user added); empty for a dangling image.
    pub tags: Vec<String>,
    /// The stack it was built for (`rocm`, `cpu`, `context`).
    pub stack: String,
    /// Creation time, seconds since the epoch.
    pub created: i64,
    /// Its size in bytes, shared layers included.
    pub size: u64,
}

impl BuiltImage {
    /// The name to show: its rocmenv tag, else its first tag, else its id.
    pub fn name(&self) -> &str {
        self.tags
            .iter()
            .find(|t| t.starts_with("rocmenv/"))
            .or(self.tags.first())
            .map_or(&self.id, String::as_str)
    }
}

/// An image `rocmenv gc --images` left in place, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KeptImage {
    /// The image.
    pub image: BuiltImage,
    /// Why it stayed: used by a container, tagged by the user, the newest of its stack, or refused by the engine.
    pub why: String,
}

/// What `rocmenv gc --images` did (or, in a dry run, would do).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ImageGcOutcome {
    /// Removed images.
    pub removed: Vec<BuiltImage>,
    /// Images left in place, each with why.
    pub kept: Vec<KeptImage>,
    /// Bytes freed: measured (`/system/df` before and after, on daemons whose API reports image usage), else the
    /// removed images' sizes added up, an upper bound (layers shared with kept images stay).
    pub freed_bytes: u64,
    /// True when `freed_bytes` was measured, false when it is the upper bound.
    pub freed_measured: bool,
}

/// Which images to remove (the rest kept, with why): every image no container uses, except the newest of each stack
/// (unless `all`) and those the user also tagged under another name.
pub fn plan_image_gc(
    images: Vec<BuiltImage>,
    used: &HashMap<String, String>,
    all: bool,
) -> (Vec<BuiltImage>, Vec<KeptImage>) {
    let mut by_stack: BTreeMap<String, Vec<BuiltImage>> = BTreeMap::new();
    for i in images {
        by_stack.entry(i.stack.clone()).or_default().push(i);
    }
    let (mut remove, mut keep) = (Vec::new(), Vec::new());
    for (stack, mut list) in by_stack {
        list.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        for (n, i) in list.into_iter().enumerate() {
            let foreign: Vec<&String> = i
                .tags
                .iter()
                .filter(|t| !t.starts_with("rocmenv/"))
                .collect();
            let why = if let Some(c) = used.get(&i.id) {
                Some(format!("container {c} uses it"))
            } else if !foreign.is_empty() {
                Some(format!(
                    "it is also tagged {} (docker rmi removes that tag)",
                    foreign
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            } else if n == 0 && !all {
                Some(format!(
                    "the newest {stack} image (rocmenv gc --images --all removes it)"
                ))
            } else {
                None
            };
            match why {
                Some(why) => keep.push(KeptImage { image: i, why }),
                None => remove.push(i),
            }
        }
    }
    (remove, keep)
}

fn short_id(id: &str) -> String {
    id.trim_start_matches("sha256:").chars().take(12).collect()
}

impl Engine {
    /// The images rocmenv built (labelled with their stack), newest first.
    pub fn built_images(&self) -> Result<Vec<BuiltImage>, Error> {
        let filters = HashMap::from([("label", vec![STACK_LABEL.to_string()])]);
        let opts = ListImagesOptionsBuilder::new().filters(&filters).build();
        let list = self
            .rt
            .block_on(self.docker.list_images(Some(opts)))
            .map_err(|e| Error::Engine(format!("cannot list images: {}", describe(&e))))?;
        let mut out: Vec<BuiltImage> = list
            .into_iter()
            .map(|i| BuiltImage {
                id: short_id(&i.id),
                tags: i
                    .repo_tags
                    .into_iter()
                    .filter(|t| t != "<none>:<none>")
                    .collect(),
                stack: i.labels.get(STACK_LABEL).cloned().unwrap_or_default(),
                created: i.created,
                size: i.size.max(0) as u64,
            })
            .collect();
        out.sort_by_key(|i| std::cmp::Reverse(i.created));
        Ok(out)
    }

    /// Every container (running or not) with the image it uses: (image id, container name).
    pub fn image_users(&self) -> Result<Vec<(String, String)>, Error> {
        let opts = ListContainersOptionsBuilder::new().all(true).build();
        let list = self
            .rt
            .block_on(self.docker.list_containers(Some(opts)))
            .map_err(|e| Error::Engine(format!("cannot list containers: {}", describe(&e))))?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                let name = c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .map(|n| n.trim_start_matches('/').to_string())
                    .unwrap_or_default();
                Some((short_id(&c.image_id?), name))
            })
            .collect())
    }

    /// The bytes the daemon's images take (`docker system df`); `None` when its API version does not report it.
    pub fn layers_size(&self) -> Option<u64> {
        let df = self.rt.block_on(self.docker.df(None)).ok()?;
        df.image_usage?.total_size.map(|b| b.max(0) as u64)
    }

    /// Removes the image `i` by each of its tags (by id when it has none), without force: `Ok(Some(why))` when the
    /// engine refused because a container made meanwhile uses it, and the image stays.
    pub fn remove_built_image(&self, i: &BuiltImage) -> Result<Option<String>, Error> {
        let names: Vec<String> = if i.tags.is_empty() {
            vec![i.id.clone()]
        } else {
            i.tags.clone()
        };
        for n in &names {
            let opts = RemoveImageOptionsBuilder::new().build();
            match self
                .rt
                .block_on(self.docker.remove_image(n, Some(opts), None))
            {
                Ok(_) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 409,
                    message,
                }) => return Ok(Some(message)),
                Err(e) => {
                    return Err(Error::Engine(format!(
                        "cannot remove image {n}: {}",
                        describe(&e)
                    )))
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(id: &str, stack: &str, created: i64, tags: &[&str]) -> BuiltImage {
        BuiltImage {
            id: id.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            stack: stack.into(),
            created,
            size: 100,
        }
    }

    /// Issue 25: each build left a `rocmenv/<stack>:<hash>` image and gc removed none. The newest of each stack,
    /// images a container uses and images the user tagged stay; the rest go, and `all` takes the newest too.
    #[test]
    fn gc_images_keeps_the_newest_per_stack_and_what_is_used_or_tagged() {
        let images = vec![
            image("a1", "rocm", 10, &["rocmenv/rocm:a1"]),
            image("a2", "rocm", 30, &["rocmenv/rocm:a2"]),
            image("a3", "rocm", 20, &["rocmenv/rocm:a3"]),
            image("c1", "cpu", 5, &["rocmenv/cpu:c1"]),
            image("c2", "cpu", 1, &["rocmenv/cpu:c2", "me/cpu:1"]),
            image("d1", "cpu", 2, &[]),
        ];
        let used = HashMap::from([("a3".to_string(), "rocmenv-x".to_string())]);
        let (remove, keep) = plan_image_gc(images.clone(), &used, false);
        let ids = |v: &[BuiltImage]| v.iter().map(|i| i.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&remove), ["d1", "a1"]);
        let why: HashMap<String, String> = keep.into_iter().map(|k| (k.image.id, k.why)).collect();
        assert!(why["a2"].contains("newest rocm"), "{why:?}");
        assert!(why["c1"].contains("newest cpu"), "{why:?}");
        assert!(why["a3"].contains("rocmenv-x uses it"), "{why:?}");
        assert!(why["c2"].contains("me/cpu:1"), "{why:?}");
        let (remove, keep) = plan_image_gc(images, &used, true);
        assert_eq!(ids(&remove), ["c1", "d1", "a2", "a1"]);
        assert_eq!(keep.len(), 2);
    }
}
