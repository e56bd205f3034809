//! `rocmenv gc`: remove the containers crashed runs left behind (they carry the managed label), and keep those of
//! live runs, which record their owner in labels.

use super::connect::Engine;
use super::fault::describe;
use super::owner::{hostname, liveness, Liveness, Owner};
use super::run::MANAGED_LABEL;
use crate::error::Error;
use bollard::query_parameters::{ListContainersOptionsBuilder, RemoveContainerOptionsBuilder};
use std::collections::HashMap;
use std::path::Path;

/// A container `rocmenv gc` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Leftover {
    /// Container id (short).
    pub id: String,
    /// Its name, without the leading `/`.
    pub name: String,
    /// `running`, `exited`, …
    pub state: String,
    /// The rocmenv process that created it, when its labels record one.
    pub owner: Option<Owner>,
}

/// A container `rocmenv gc` left in place, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Kept {
    /// The container.
    pub container: Leftover,
    /// Why it was kept, e.g. `its rocmenv run (pid 42) is still running`.
    pub why: String,
}

/// What `rocmenv gc` did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GcOutcome {
    /// Removed containers.
    pub removed: Vec<Leftover>,
    /// Containers of live (or uncheckable) runs, left alone.
    pub kept: Vec<Kept>,
}

/// Why `c` must stay, or `None` when gc may remove it. `all` removes everything; otherwise a container stays while
/// its owner runs (whatever its state: an exited one is still being read), and a running one stays when its owner
/// cannot be checked (another host, or no owner labels).
pub fn keep_reason(c: &Leftover, all: bool, host: &str, proc_root: &Path) -> Option<String> {
    if all {
        return None;
    }
    let running = !matches!(c.state.as_str(), "created" | "exited" | "dead");
    match (liveness(c.owner.as_ref(), host, proc_root), &c.owner) {
        (Liveness::Alive, Some(o)) => {
            Some(format!("its rocmenv run (pid {}) is still running", o.pid))
        }
        (Liveness::OtherHost, Some(o)) if running => Some(format!(
            "it runs for rocmenv pid {} on host {}, which cannot be checked from here",
            o.pid, o.host
        )),
        (Liveness::Unknown, _) if running => {
            Some("it runs and records no owner, so it may belong to a live run".to_string())
        }
        _ => None,
    }
}

impl Engine {
    /// Containers with the managed label, running or not.
    pub fn managed_containers(&self) -> Result<Vec<Leftover>, Error> {
        let filters = HashMap::from([("label", vec![format!("{MANAGED_LABEL}=true")])]);
        let opts = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let list = self
            .rt
            .block_on(self.docker.list_containers(Some(opts)))
            .map_err(|e| Error::Engine(format!("cannot list containers: {}", describe(&e))))?;
        Ok(list
            .into_iter()
            .map(|c| Leftover {
                id: c.id.unwrap_or_default().chars().take(12).collect(),
                name: c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .map(|n| n.trim_start_matches('/').to_string())
                    .unwrap_or_default(),
                state: c.state.map(|s| s.to_string()).unwrap_or_default(),
                owner: c.labels.as_ref().and_then(Owner::from_labels),
            })
            .collect())
    }

    /// Removes the managed containers no live rocmenv owns (every one with `all`, killing running ones).
    pub fn gc(&self, all: bool) -> Result<GcOutcome, Error> {
        let host = hostname();
        let mut outcome = GcOutcome::default();
        for c in self.managed_containers()? {
            if let Some(why) = keep_reason(&c, all, &host, Path::new("/proc")) {
                outcome.kept.push(Kept { container: c, why });
                continue;
            }
            let opts = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            match self
                .rt
                .block_on(self.docker.remove_container(&c.id, Some(opts)))
            {
                Ok(()) => outcome.removed.push(c),
                // Removed meanwhile (by its own run finishing): nothing left to do.
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {}
                Err(e) => {
                    return Err(Error::Engine(format!(
                        "cannot remove {}: {}",
                        c.name,
                        describe(&e)
                    )))
                }
            }
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(state: &str, owner: Option<Owner>) -> Leftover {
        Leftover {
            id: "0123456789ab".into(),
            name: "rocmenv-x".into(),
            state: state.into(),
            owner,
        }
    }

    /// Issue 10: gc removed the running container of a live `rocmenv run`; now only what no live rocmenv owns goes.
    #[test]
    fn gc_keeps_what_a_live_run_owns_and_removes_the_rest() {
        let me = Owner::current().unwrap();
        let host = hostname();
        let proc = Path::new("/proc");
        let gone = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        let elsewhere = Owner {
            host: format!("{host}-other"),
            ..me.clone()
        };
        let kept = |c: &Leftover| keep_reason(c, false, &host, proc);
        assert!(kept(&container("running", Some(me.clone())))
            .unwrap()
            .contains("still running"));
        assert!(kept(&container("exited", Some(me.clone()))).is_some());
        assert_eq!(kept(&container("running", Some(gone.clone()))), None);
        assert_eq!(kept(&container("exited", Some(gone))), None);
        assert!(kept(&container("running", Some(elsewhere.clone()))).is_some());
        assert_eq!(kept(&container("exited", Some(elsewhere))), None);
        assert!(kept(&container("running", None)).is_some());
        assert_eq!(kept(&container("created", None)), None);
        // --all removes everything labelled.
        assert_eq!(
            keep_reason(&container("running", Some(me)), true, &host, proc),
            None
        );
    }
}
