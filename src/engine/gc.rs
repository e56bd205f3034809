//! `rocmenv gc`: remove containers that crashed runs left behind (they carry the managed label).

use super::connect::{describe, Engine};
use super::run::MANAGED_LABEL;
use crate::error::Error;
use bollard::query_parameters::{ListContainersOptionsBuilder, RemoveContainerOptionsBuilder};
use std::collections::HashMap;

/// A container `rocmenv gc` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Leftover {
    /// Container id (short).
    pub id: String,
    /// Its name, without the leading `/`.
    pub name: String,
    /// `running`, `exited`, …
    pub state: String,
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
            })
            .collect())
    }

    /// Removes every managed container (killing running ones); returns what was removed.
    pub fn gc(&self) -> Result<Vec<Leftover>, Error> {
        let found = self.managed_containers()?;
        for c in &found {
            let opts = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            match self
                .rt
                .block_on(self.docker.remove_container(&c.id, Some(opts)))
            {
                Ok(()) => {}
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
        Ok(found)
    }
}
