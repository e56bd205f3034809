//! `rocmenv gc`: remove the containers crashed runs left behind (they carry the managed label), and keep those of
//! live runs, which record their owner in labels.

use super::connect::Engine;
use super::fault::describe;
use super::owner::{liveness, Liveness, Owner};
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
    /// True when its run is alive on this host, which only `--all --force` overrides.
    #[serde(skip)]
    pub live: bool,
}

/// What `rocmenv gc` did (or, in a dry run, would do).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GcOutcome {
    /// Removed containers.
    pub removed: Vec<Leftover>,
    /// Containers of live (or uncheckable) runs, left alone.
    pub kept: Vec<Kept>,
}

/// Which labelled containers `rocmenv gc` may remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcScope {
    /// Those no live rocmenv owns: a container stays while its owner runs, and a running one stays when its owner
    /// cannot be checked (another host, or no owner labels).
    Orphans,
    /// `--all`: every one except those of runs alive on this host.
    AllButLive,
    /// `--all --force`: every one, killing live runs' containers.
    Everything,
}

/// Why `c` must stay under `scope`, and whether its run is alive; `None` when gc may remove it. A container stays
/// while its owner runs (whatever its state: an exited one is still being read) unless the scope is
/// [`GcScope::Everything`]; a running one whose owner cannot be checked stays under [`GcScope::Orphans`] only.
pub fn keep_reason(
    c: &Leftover,
    scope: GcScope,
    host: &str,
    proc_root: &Path,
) -> Option<(String, bool)> {
    if scope == GcScope::Everything {
        return None;
    }
    let running = !matches!(c.state.as_str(), "created" | "exited" | "dead");
    let uncheckable = scope == GcScope::Orphans && running;
    match (liveness(c.owner.as_ref(), host, proc_root), &c.owner) {
        (Liveness::Alive, Some(o)) => Some((
            format!("its rocmenv run (pid {}) is still running", o.pid),
            true,
        )),
        (Liveness::OtherHost, Some(o)) if uncheckable => Some((
            format!(
                "it runs for rocmenv pid {} on host {}, which cannot be checked from here",
                o.pid, o.host
            ),
            false,
        )),
        (Liveness::Unknown, _) if uncheckable => Some((
            "it runs and records no owner, so it may belong to a live run".to_string(),
            false,
        )),
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

    /// Removes the managed container `c`, killing it if it runs; false when it was already gone (its own run
    /// finished meanwhile).
    pub fn remove_managed(&self, c: &Leftover) -> Result<bool, Error> {
        let opts = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        match self
            .rt
            .block_on(self.docker.remove_container(&c.id, Some(opts)))
        {
            Ok(()) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(Error::Engine(format!(
                "cannot remove {}: {}",
                c.name,
                describe(&e)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::owner::hostname;
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
        let kept = |c: &Leftover| keep_reason(c, GcScope::Orphans, &host, proc);
        let (why, live) = kept(&container("running", Some(me.clone()))).unwrap();
        assert!(why.contains("still running") && live, "{why}");
        assert!(kept(&container("exited", Some(me.clone()))).is_some());
        assert_eq!(kept(&container("running", Some(gone.clone()))), None);
        assert_eq!(kept(&container("exited", Some(gone))), None);
        assert_eq!(
            kept(&container("running", Some(elsewhere.clone()))).map(|k| k.1),
            Some(false)
        );
        assert_eq!(kept(&container("exited", Some(elsewhere.clone()))), None);
        assert_eq!(kept(&container("running", None)).map(|k| k.1), Some(false));
        assert_eq!(kept(&container("created", None)), None);
        // Issue 36: --all takes what cannot be checked but keeps a live run's container, running or exited.
        let all = |c: &Leftover| keep_reason(c, GcScope::AllButLive, &host, proc);
        assert_eq!(
            all(&container("running", Some(me.clone()))).map(|k| k.1),
            Some(true)
        );
        assert_eq!(
            all(&container("exited", Some(me.clone()))).map(|k| k.1),
            Some(true)
        );
        assert_eq!(all(&container("running", Some(elsewhere))), None);
        assert_eq!(all(&container("running", None)), None);
        // --all --force removes everything labelled.
        assert_eq!(
            keep_reason(
                &container("running", Some(me)),
                GcScope::Everything,
                &host,
                proc
            ),
            None
        );
    }
}
