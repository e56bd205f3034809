//! Running one container: create with the vendor's devices, stream logs, enforce the timeout, catch SIGINT/SIGTERM,
//! read back the exit code, OOM state and a result file, and remove the container on every path.

use super::connect::Engine;
use super::devices::DeviceMap;
use super::fault::describe;
use super::image::ensure_image;
use super::mount::{Mount, MountKind};
use super::owner::Owner;
use super::signals::StopSignals;
use crate::error::{Error, StopSignal, EXIT_RUN_FAILED, EXIT_TIMEOUT};
use bollard::models::{ContainerCreateBody, DeviceMapping, DeviceRequest, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    KillContainerOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
    UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;

/// The label every container rocmenv creates carries; `rocmenv gc` removes what a crash left behind.
pub const MANAGED_LABEL: &str = "rocmenv.managed";
/// The label holding the run id.
pub const RUN_ID_LABEL: &str = "rocmenv.run-id";
/// The outcome keeps at most this much of the output (the tail), so a chatty workload cannot exhaust memory.
const MAX_KEPT_LOG: usize = 8 << 20;

/// One container to run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSpec {
    /// Image reference.
    pub image: String,
    /// Command and arguments; empty runs the image's default command.
    pub command: Vec<String>,
    /// Environment variables.
    pub env: Vec<(String, String)>,
    /// Bind mounts and named volumes.
    pub mounts: Vec<Mount>,
    /// Killed after this long.
    pub timeout: Option<Duration>,
    /// Memory limit in bytes (swap disabled with it).
    pub memory: Option<u64>,
    /// The vendor's device mapping.
    pub devices: DeviceMap,
    /// A file the workload writes, copied out after it exits.
    pub result_path: Option<String>,
    /// Files copied into the container before it starts (through the API, so a remote daemon works too).
    #[serde(skip)]
    pub uploads: Vec<Upload>,
}

impl RunSpec {
    /// The container's environment: the device mapping's variables, then the spec's (an `-e` of the same name wins).
    pub fn container_env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .devices
            .env
            .iter()
            .filter(|(k, _)| !self.env.iter().any(|(n, _)| n == k))
            .cloned()
            .collect();
        env.extend(self.env.iter().cloned());
        env
    }

    /// Every mount: the device mapping's host libraries, then the spec's `-v`.
    pub fn container_mounts(&self) -> impl Iterator<Item = &Mount> {
        self.devices.mounts.iter().chain(&self.mounts)
    }
}

/// A file copied into a container before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// An existing directory in the image, e.g. `/tmp`.
    pub dir: String,
    /// The path inside it (`run.py`, or `suite/rocmenv_smoke/x.py`: directories are created).
    pub name: String,
    /// Permission bits.
    pub mode: u32,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// How a run ended.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The container's exit code; `None` when rocmenv killed it (timeout, signal).
    pub exit_code: Option<i64>,
    /// The kernel's OOM killer ended it.
    pub oom_killed: bool,
    /// It outlived `RunSpec::timeout` and was killed.
    pub timed_out: bool,
    /// rocmenv got this signal and stopped the container.
    pub interrupted: Option<StopSignal>,
    /// stdout and stderr as they came (the last 8 MiB).
    #[serde(skip)]
    pub logs: Vec<u8>,
    /// The result file's bytes, when `result_path` was set and the file exists.
    #[serde(skip)]
    pub result_file: Option<Vec<u8>>,
    /// Why `result_path` could not be copied out (`does not exist in the container`, …), when it was set and not copied.
    pub result_error: Option<String>,
    /// The container's id (it has been removed).
    pub container_id: String,
    /// The engine could not start the command (not found: exit 127; not executable: 126), in its words.
    pub start_error: Option<String>,
}

/// The code the docker CLI gives a command the engine could not start: 127 when it is not found, 126 when it cannot be
/// executed (docker/cli@26da5bf025c8da9d4bf94e8c3d982f084578d093:cli/command/container/run.go, `runStartContainerErr`);
/// `None` for other start failures, which are rocmenv's own (125).
pub fn start_failure_code(message: &str) -> Option<i64> {
    let m = message.to_ascii_lowercase();
    if m.contains("executable file not found") || m.contains("no such file or directory") {
        Some(127)
    } else if m.contains("permission denied") || m.contains("is a directory") {
        Some(126)
    } else {
        None
    }
}

impl RunOutcome {
    /// The code `rocmenv run` exits with, like `docker run`: the container's, 124 timeout, 130 SIGINT, 143 SIGTERM.
    pub fn process_exit_code(&self) -> i32 {
        match (self.interrupted, self.timed_out, self.exit_code) {
            (Some(signal), ..) => signal.exit_code(),
            (None, true, _) => EXIT_TIMEOUT,
            (None, false, Some(c)) => c.clamp(0, 255) as i32,
            (None, false, None) => EXIT_RUN_FAILED,
        }
    }
}

/// A short id unique enough to name one run's container.
pub fn new_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(0);
    format!("{:08x}{:04x}", nanos, std::process::id() & 0xffff)
}

fn host_config(spec: &RunSpec) -> HostConfig {
    let m = &spec.devices;
    let some = |v: Vec<String>| (!v.is_empty()).then_some(v);
    HostConfig {
        devices: some(m.devices.clone()).map(|d| {
            d.into_iter()
                .map(|p| DeviceMapping {
                    path_on_host: Some(p.clone()),
                    path_in_container: Some(p),
                    cgroup_permissions: Some("rwm".into()),
                })
                .collect()
        }),
        device_requests: m.gpu_request.as_ref().map(|r| {
            vec![DeviceRequest {
                driver: Some(r.driver.clone()),
                count: r.count,
                device_ids: some(r.device_ids.clone()),
                capabilities: (!r.capabilities.is_empty()).then(|| r.capabilities.clone()),
                options: None,
            }]
        }),
        group_add: some(m.group_add.iter().map(u32::to_string).collect()),
        security_opt: some(m.security_opt.clone()),
        ipc_mode: m.ipc_host.then(|| "host".to_string()),
        shm_size: (!m.ipc_host).then_some(m.shm_size as i64),
        // Mounts, not binds: a bind whose host path is missing is an error instead of a new empty directory.
        mounts: (spec.container_mounts().next().is_some()).then(|| {
            spec.container_mounts()
                .map(|m| bollard::models::Mount {
                    typ: Some(match m.kind {
                        MountKind::Bind => bollard::models::MountType::BIND,
                        MountKind::Volume => bollard::models::MountType::VOLUME,
                    }),
                    source: Some(m.source.clone()),
                    target: Some(m.container.clone()),
                    read_only: m.read_only.then_some(true),
                    ..Default::default()
                })
                .collect()
        }),
        memory: spec.memory.map(|b| b as i64),
        memory_swap: spec.memory.map(|b| b as i64),
        ..Default::default()
    }
}

impl Engine {
    /// The regular file at `path` inside the local image `image`, read from a container that is created, never
    /// started, and removed (`None`: the image is not local, or has no such file). `run` reads
    /// `/opt/rocm/.info/version` this way when neither the tag nor the environment names the image's ROCm.
    pub fn read_image_file(&self, image: &str, path: &str) -> Result<Option<Vec<u8>>, Error> {
        self.rt.block_on(async {
            let mut labels = HashMap::from([
                (MANAGED_LABEL.to_string(), "true".to_string()),
                (RUN_ID_LABEL.to_string(), new_run_id()),
            ]);
            // A leftover (the process killed between create and remove) is one `rocmenv gc` takes.
            labels.extend(Owner::current().iter().flat_map(Owner::labels));
            let body = ContainerCreateBody {
                image: Some(image.to_string()),
                // Never started; a command is still required by images without one.
                cmd: Some(vec!["true".into()]),
                labels: Some(labels),
                ..Default::default()
            };
            let id = match self
                .docker
                .create_container(
                    None::<bollard::query_parameters::CreateContainerOptions>,
                    body,
                )
                .await
            {
                Ok(c) => c.id,
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => return Ok(None),
                Err(e) => {
                    return Err(Error::Engine(format!(
                        "cannot create a container from {image}: {}",
                        describe(&e)
                    )))
                }
            };
            let read = self.copy_out(&id, path).await;
            let opts = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            self.docker
                .remove_container(&id, Some(opts))
                .await
                .map_err(|e| {
                    Error::Engine(format!("cannot remove container {id}: {}", describe(&e)))
                })?;
            Ok(read.ok())
        })
    }

    /// Runs `spec` to the end; output goes to `on_output` as it arrives. The container is removed on every path.
    pub fn run(
        &self,
        spec: &RunSpec,
        on_output: &mut dyn FnMut(OutputStream, &[u8]),
    ) -> Result<RunOutcome, Error> {
        self.rt.block_on(async {
            // Installed before the container exists, so a Ctrl-C during create is not lost.
            let mut signals = StopSignals::install()?;
            let id = self.create(spec).await?;
            let res = match self.drive(&id, spec, on_output, &mut signals).await {
                Err(e) => Err(self.explain_lost(e, "the run").await),
                ok => ok,
            };
            let opts = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            let removed = self.docker.remove_container(&id, Some(opts)).await;
            let outcome = res?;
            removed.map_err(|e| {
                Error::Engine(format!("cannot remove container {id}: {}", describe(&e)))
            })?;
            Ok(outcome)
        })
    }

    async fn create(&self, spec: &RunSpec) -> Result<String, Error> {
        let run_id = new_run_id();
        let mut labels = HashMap::from([
            (MANAGED_LABEL.to_string(), "true".to_string()),
            (RUN_ID_LABEL.to_string(), run_id.clone()),
        ]);
        // `rocmenv gc` keeps the containers whose owner still runs.
        labels.extend(Owner::current().iter().flat_map(Owner::labels));
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            cmd: (!spec.command.is_empty()).then(|| spec.command.clone()),
            env: Some(
                spec.container_env()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
            ),
            labels: Some(labels),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            host_config: Some(host_config(spec)),
            ..Default::default()
        };
        let opts = CreateContainerOptionsBuilder::new()
            .name(&format!("rocmenv-{run_id}"))
            .build();
        let d = &self.docker;
        let created = match d.create_container(Some(opts.clone()), body.clone()).await {
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {
                ensure_image(self, &spec.image, &mut |_| {}).await?;
                d.create_container(Some(opts), body).await
            }
            other => other,
        };
        created.map(|c| c.id).map_err(|e| {
            Error::Engine(format!(
                "cannot create a container from {}: {}",
                spec.image,
                describe(&e)
            ))
        })
    }

    async fn drive(
        &self,
        id: &str,
        spec: &RunSpec,
        on_output: &mut dyn FnMut(OutputStream, &[u8]),
        signals: &mut StopSignals,
    ) -> Result<RunOutcome, Error> {
        let d = &self.docker;
        let mut out = RunOutcome {
            exit_code: None,
            oom_killed: false,
            timed_out: false,
            interrupted: None,
            logs: Vec::new(),
            result_file: None,
            result_error: None,
            container_id: id.to_string(),
            start_error: None,
        };
        let engine_err = |what: &str, e: bollard::errors::Error| {
            Error::Engine(format!("{what} {id}: {}", describe(&e)))
        };
        self.upload(id, spec).await?;
        if let Err(e) = d.start_container(id, None).await {
            let message = describe(&e);
            return match start_failure_code(&message) {
                Some(code) => {
                    out.exit_code = Some(code);
                    out.start_error = Some(message);
                    Ok(out)
                }
                None => Err(engine_err("cannot start container", e)),
            };
        }
        let deadline = async {
            match spec.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        {
            let follow = self.follow_logs(id, on_output, &mut out.logs);
            tokio::select! {
                _ = follow => {}
                _ = deadline => out.timed_out = true,
                s = signals.recv() => out.interrupted = Some(s),
            }
        }
        if out.interrupted.is_some() {
            return Ok(out);
        }
        if out.timed_out {
            let opts = KillContainerOptionsBuilder::new().signal("KILL").build();
            let _ = d.kill_container(id, Some(opts)).await;
        } else {
            let state = d
                .inspect_container(id, None)
                .await
                .map_err(|e| engine_err("cannot inspect container", e))?
                .state;
            out.exit_code = state.as_ref().and_then(|s| s.exit_code);
            out.oom_killed = state.and_then(|s| s.oom_killed).unwrap_or(false);
        }
        if let Some(path) = &spec.result_path {
            match self.copy_out(id, path).await {
                Ok(data) => out.result_file = Some(data),
                Err(why) => out.result_error = Some(why),
            }
        }
        Ok(out)
    }

    /// Copies the spec's uploads into the container, one archive per target directory (one API call per suite).
    async fn upload(&self, id: &str, spec: &RunSpec) -> Result<(), Error> {
        let mut dirs: Vec<&str> = spec.uploads.iter().map(|u| u.dir.as_str()).collect();
        dirs.sort_unstable();
        dirs.dedup();
        for dir in dirs {
            let files: Vec<&Upload> = spec.uploads.iter().filter(|u| u.dir == dir).collect();
            let tar = upload_tar(&files)
                .map_err(|e| Error::Engine(format!("cannot pack the files for {dir}: {e}")))?;
            let opts = UploadToContainerOptionsBuilder::new().path(dir).build();
            self.docker
                .upload_to_container(id, Some(opts), bollard::body_full(tar.into()))
                .await
                .map_err(|e| {
                    Error::Engine(format!(
                        "cannot copy files into {dir} of container {id}: {}",
                        describe(&e)
                    ))
                })?;
        }
        Ok(())
    }

    /// Passes the container's output to `on_output` until it stops, keeping the last `MAX_KEPT_LOG` bytes in `logs`.
    async fn follow_logs(
        &self,
        id: &str,
        on_output: &mut dyn FnMut(OutputStream, &[u8]),
        logs: &mut Vec<u8>,
    ) {
        let d = &self.docker;
        let opts = LogsOptionsBuilder::new()
            .follow(true)
            .stdout(true)
            .stderr(true)
            .build();
        let mut s = d.logs(id, Some(opts));
        while let Some(Ok(chunk)) = s.next().await {
            let (which, bytes) = match chunk {
                bollard::container::LogOutput::StdErr { message } => {
                    (OutputStream::Stderr, message)
                }
                other => (OutputStream::Stdout, other.into_bytes()),
            };
            on_output(which, &bytes);
            logs.extend_from_slice(&bytes);
            if logs.len() > MAX_KEPT_LOG {
                logs.drain(..logs.len() - MAX_KEPT_LOG);
            }
        }
        // The log stream ends when the container stops; wait only reads the state back.
        let _ = d.wait_container(id, None).next().await;
    }

    /// The contents of the regular file at `path` (symbolic links followed), or why there is none.
    async fn copy_out(&self, id: &str, path: &str) -> Result<Vec<u8>, String> {
        let mut path = path.to_string();
        // A few hops, so a link cycle ends.
        for _ in 0..8 {
            let opts = DownloadFromContainerOptionsBuilder::new()
                .path(&path)
                .build();
            let mut s = self.docker.download_from_container(id, Some(opts));
            let mut archive = Vec::new();
            while let Some(chunk) = s.next().await {
                match chunk {
                    Ok(c) => archive.extend_from_slice(&c),
                    Err(bollard::errors::Error::DockerResponseServerError {
                        status_code: 404,
                        ..
                    }) => return Err("does not exist in the container".into()),
                    Err(e) => return Err(format!("could not be read: {}", describe(&e))),
                }
            }
            match archived_file(&archive)? {
                Archived::File(data) => return Ok(data),
                Archived::Link(target) => path = resolve_link(&path, &target),
            }
        }
        Err("is a chain of symbolic links too long to follow".into())
    }
}

/// The first entry of an archive the daemon returns for one path: that path itself.
enum Archived {
    /// A regular file's contents.
    File(Vec<u8>),
    /// A symbolic link's target.
    Link(String),
}

/// Reads the entry for the path itself (the first one); a directory or another kind is refused by name.
fn archived_file(archive: &[u8]) -> Result<Archived, String> {
    let unreadable = |e: std::io::Error| format!("came back as an unreadable archive: {e}");
    let mut a = tar::Archive::new(archive);
    let mut entries = a.entries().map_err(unreadable)?;
    let mut e = match entries.next() {
        Some(e) => e.map_err(unreadable)?,
        None => return Err("does not exist in the container".into()),
    };
    let kind = e.header().entry_type();
    if kind.is_file() {
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut data).map_err(unreadable)?;
        Ok(Archived::File(data))
    } else if kind.is_symlink() {
        let target = e.link_name().map_err(unreadable)?.unwrap_or_default();
        Ok(Archived::Link(target.to_string_lossy().into_owned()))
    } else if kind.is_dir() {
        Err("is a directory in the container; name a file the command writes".into())
    } else {
        Err("is not a regular file in the container".into())
    }
}

/// Where the link at `path` points: an absolute target as is, a relative one from the link's directory.
fn resolve_link(path: &str, target: &str) -> String {
    if target.starts_with('/') {
        return target.to_string();
    }
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    format!("{dir}/{target}")
}

/// Files as one tar archive, the form the daemon's archive endpoint takes; a name with `/` creates its
/// directories (mode 0755) first.
fn upload_tar(files: &[&Upload]) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    let mut made: Vec<String> = Vec::new();
    for u in files {
        let parts: Vec<&str> = u.name.split('/').collect();
        for i in 1..parts.len() {
            let dir = format!("{}/", parts[..i].join("/"));
            if made.contains(&dir) {
                continue;
            }
            let mut header = tar::Header::new_gnu();
            header.set_size(0);
            header.set_mode(0o755);
            header.set_entry_type(tar::EntryType::Directory);
            b.append_data(&mut header, &dir, std::io::empty())?;
            made.push(dir);
        }
        let mut header = tar::Header::new_gnu();
        header.set_size(u.bytes.len() as u64);
        header.set_mode(u.mode);
        header.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut header, &u.name, u.bytes.as_slice())?;
    }
    b.into_inner()
}

#[cfg(test)]
mod start_tests {
    use super::start_failure_code;

    /// Issue 25: `rocmenv run -- nosuchcmd` exited 125 where `docker run` gives 127 (126 for a file it cannot execute).
    #[test]
    fn a_command_that_cannot_start_exits_like_docker_run() {
        let not_found = "failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"nosuchcmd\": executable file not found in $PATH: unknown (HTTP 400)";
        assert_eq!(start_failure_code(not_found), Some(127));
        assert_eq!(
            start_failure_code("exec: \"/etc/passwd\": permission denied: unknown"),
            Some(126)
        );
        assert_eq!(start_failure_code("cannot allocate memory"), None);
    }
}
