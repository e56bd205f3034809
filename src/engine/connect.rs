//! Finding and connecting to a Docker-compatible daemon (Docker or Podman), with the API version negotiated down.

use super::endpoint::Endpoint;
use super::fault::describe;
use super::tls;
use crate::error::{Error, Unreachable};
use bollard::Docker;
use serde::Serialize;
use std::time::Duration;

/// How long connecting and the version handshake may take: a dead tcp endpoint must not hang a command.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Per-request header timeout (seconds); streams (build output, logs, wait) are not cut by it.
const REQUEST_TIMEOUT_S: u64 = 600;

/// A connected daemon plus the runtime that drives it, so callers stay synchronous.
pub struct Engine {
    pub(crate) docker: Docker,
    pub(crate) rt: tokio::runtime::Runtime,
    endpoint: String,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

/// Why a bollard error happened, from the `std::io::Error` hyper wraps in its source chain.
fn classify(e: &bollard::errors::Error) -> Unreachable {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = src {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            return Unreachable::of_io(io.kind());
        }
        src = x.source();
    }
    match e {
        bollard::errors::Error::SocketNotFoundError(_) => Unreachable::NoSocket,
        _ => Unreachable::NoAnswer,
    }
}

impl Engine {
    /// Connects to `endpoint` (`unix://PATH`, a bare socket path, `tcp://HOST:PORT` or `http://…`, no TLS) and
    /// negotiates the API version, so daemons from Docker 20.10 (API 1.41) to current answer.
    pub fn connect(endpoint: &str) -> Result<Engine, Error> {
        Engine::connect_to(&Endpoint::plain(endpoint))
    }

    /// Connects to a resolved endpoint, over TLS when it carries TLS files, and negotiates the API version.
    pub fn connect_to(ep: &Endpoint) -> Result<Engine, Error> {
        let shown = ep.to_string();
        let unreachable = |reason: Unreachable, why: String| Error::DaemonUnreachable {
            endpoint: shown.clone(),
            why,
            reason,
        };
        let tls_failed = |why: String| Error::DockerTls {
            endpoint: shown.clone(),
            why,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Engine(format!("cannot start the async runtime: {e}")))?;
        let v = bollard::API_DEFAULT_VERSION;
        let host = ep.host.as_str();
        let docker = if let Some(t) = &ep.tls {
            tls::client(host, t, REQUEST_TIMEOUT_S).map_err(tls_failed)?
        } else if let Some(path) = host
            .strip_prefix("unix://")
            .or_else(|| host.starts_with('/').then_some(host))
        {
            // A directory this user may not enter hides the socket: that is a permission problem, not a missing one.
            if let Err(e) = std::fs::metadata(path) {
                let reason = Unreachable::of_io(e.kind());
                let why = match reason {
                    Unreachable::NoSocket => format!("{path} does not exist"),
                    Unreachable::PermissionDenied => {
                        format!("permission denied looking up {path}")
                    }
                    _ => format!("{path}: {e}"),
                };
                return Err(unreachable(reason, why));
            }
            Docker::connect_with_unix(path, REQUEST_TIMEOUT_S, v)
                .map_err(|e| unreachable(classify(&e), e.to_string()))?
        } else if host.starts_with("tcp://") || host.starts_with("http://") {
            Docker::connect_with_http(host, REQUEST_TIMEOUT_S, v)
                .map_err(|e| unreachable(classify(&e), e.to_string()))?
        } else if host.starts_with("https://") {
            return Err(tls_failed(format!(
                "an https:// endpoint needs TLS files: set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the directory with {}",
                tls::CERT_FILES
            )));
        } else {
            return Err(unreachable(
                Unreachable::Unsupported,
                "not a unix://, tcp:// or https:// endpoint (ssh endpoints are not supported)"
                    .into(),
            ));
        };
        let docker = rt
            .block_on(async {
                tokio::time::timeout(CONNECT_TIMEOUT, docker.negotiate_version()).await
            })
            .map_err(|_| {
                unreachable(
                    Unreachable::NoAnswer,
                    format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                )
            })?
            .map_err(|e| match &ep.tls {
                Some(t) => tls::explain(t, &e)
                    .map_or_else(|| unreachable(classify(&e), describe(&e)), tls_failed),
                None if tls::is_http_to_https(&e) => tls_failed(format!(
                    "the daemon speaks TLS on this port: set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the directory with {}",
                    tls::CERT_FILES
                )),
                None => unreachable(classify(&e), describe(&e)),
            })?;
        Ok(Engine {
            docker,
            rt,
            endpoint: shown,
        })
    }

    /// Connects to the daemon the environment names, as the docker CLI resolves it: `DOCKER_HOST` with
    /// `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`, a Docker context, or the local sockets.
    pub fn connect_default() -> Result<Engine, Error> {
        Engine::connect_to(&Endpoint::from_env()?)
    }

    /// After an engine call failed with `e`: when the daemon no longer answers a ping, the error says that the engine
    /// went away during `during` and names the endpoint, instead of the bare call that happened to fail.
    pub(crate) async fn explain_lost(&self, e: Error, during: &str) -> Error {
        let Error::Engine(msg) = &e else { return e };
        let alive = tokio::time::timeout(CONNECT_TIMEOUT, self.docker.ping())
            .await
            .is_ok_and(|r| r.is_ok());
        if alive {
            return e;
        }
        Error::Engine(format!(
            "the engine at {} stopped answering during {during} ({msg}); once it is back, `rocmenv gc` removes what was left",
            self.endpoint
        ))
    }

    /// The endpoint connected to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The negotiated API version (`1.41`).
    pub fn api_version(&self) -> String {
        self.docker.client_version().to_string()
    }

    /// The user a local image runs as (`1000`, `rocmenv`, `0:0`); `None` when the image is not local or names none
    /// (root).
    pub fn image_user(&self, image: &str) -> Option<String> {
        let d = &self.docker;
        self.rt
            .block_on(async { tokio::time::timeout(CONNECT_TIMEOUT, d.inspect_image(image)).await })
            .ok()?
            .ok()?
            .config?
            .user
            .filter(|u| !u.is_empty())
    }

    /// The architecture of a local image (`amd64`, `arm64`, …); `None` when the image is not local or says none.
    pub fn image_architecture(&self, image: &str) -> Option<String> {
        let d = &self.docker;
        self.rt
            .block_on(async { tokio::time::timeout(CONNECT_TIMEOUT, d.inspect_image(image)).await })
            .ok()?
            .ok()?
            .architecture
            .filter(|a| !a.is_empty())
    }

    /// The environment baked into a local image (`ENV` lines and its bases'), as `NAME`/`value` pairs.
    pub fn image_env(&self, image: &str) -> Result<Vec<(String, String)>, Error> {
        let d = &self.docker;
        let inspected = self
            .rt
            .block_on(async { tokio::time::timeout(CONNECT_TIMEOUT, d.inspect_image(image)).await })
            .map_err(|_| Error::Engine(format!("no answer inspecting {image}")))?
            .map_err(|e| Error::Engine(format!("cannot inspect {image}: {}", describe(&e))))?;
        Ok(inspected
            .config
            .and_then(|c| c.env)
            .unwrap_or_default()
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// The daemon's version, runtimes and CDI spec directories.
    pub fn info(&self) -> Result<DockerInfo, Error> {
        let d = &self.docker;
        let (version, info) = self
            .rt
            .block_on(async {
                tokio::time::timeout(CONNECT_TIMEOUT, async {
                    (d.version().await, d.info().await)
                })
                .await
            })
            .map_err(|_| Error::Engine("the daemon did not answer /version and /info".into()))?;
        let version = version.map_err(|e| Error::Engine(describe(&e)))?;
        let info = info.ok();
        let mut runtimes: Vec<String> = info
            .as_ref()
            .and_then(|i| i.runtimes.as_ref())
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default();
        runtimes.sort();
        let podman = version
            .components
            .as_ref()
            .is_some_and(|c| c.iter().any(|x| x.name.contains("Podman")));
        Ok(DockerInfo {
            product: if podman { "Podman" } else { "Docker" }.into(),
            version: version.version.unwrap_or_else(|| "?".into()),
            api_version: version.api_version.unwrap_or_else(|| "?".into()),
            runtimes,
            default_runtime: info.as_ref().and_then(|i| i.default_runtime.clone()),
            cdi_spec_dirs: info
                .as_ref()
                .and_then(|i| i.cdi_spec_dirs.clone())
                .unwrap_or_default(),
        })
    }
}

/// Asks the daemon at `endpoint` for its version and info (doctor's `docker.*` checks).
pub fn docker_status(endpoint: &Endpoint) -> DockerStatus {
    let shown = endpoint.to_string();
    match Engine::connect_to(endpoint).and_then(|e| e.info()) {
        Ok(info) => DockerStatus {
            endpoint: shown,
            result: Ok(info),
            fix: None,
            reason: None,
        },
        Err(e) => status_error(shown, e),
    }
}

/// The daemon this process's environment names (as `rocmenv run` and `build` resolve it), asked as `docker_status`.
pub fn docker_status_from_env() -> DockerStatus {
    match Endpoint::from_env() {
        Ok(ep) => docker_status(&ep),
        Err(e) => status_error(String::new(), e),
    }
}

fn status_error(shown: String, e: Error) -> DockerStatus {
    let reason = match &e {
        Error::DaemonUnreachable { reason, .. } => Some(*reason),
        _ => None,
    };
    let (endpoint, why, fix) = match e {
        Error::DaemonUnreachable {
            endpoint,
            why,
            reason,
        } => (endpoint, why, Some(reason.fix().to_string())),
        Error::DockerTls { endpoint, why } => (
            endpoint,
            format!("TLS failed: {why}"),
            Some(format!("fix the TLS files named above (DOCKER_CERT_PATH holds {}; a context keeps them under contexts/tls/ in the docker config directory)", tls::CERT_FILES)),
        ),
        Error::DockerContext { name, via, why } => (
            format!("docker context {name} (named by {via})"),
            why,
            Some("`docker context ls` lists the contexts; `docker context use default` (or DOCKER_CONTEXT=default) goes back to DOCKER_HOST and the local socket".into()),
        ),
        other => (shown, other.to_string(), None),
    };
    DockerStatus {
        endpoint,
        result: Err(why),
        fix,
        reason,
    }
}

/// Docker as the live check saw it.
#[derive(Debug, Clone, Serialize)]
pub struct DockerStatus {
    /// The endpoint tried (`unix:///var/run/docker.sock`).
    pub endpoint: String,
    /// What the daemon said, or why it could not be asked.
    pub result: Result<DockerInfo, String>,
    /// The one step that fixes the failure (start the daemon, join the docker group, fix the TLS files or context).
    pub fix: Option<String>,
    /// Which way a daemon could not be reached (no socket, permission denied, no answer); `None` for TLS and contexts.
    pub reason: Option<Unreachable>,
}

/// What the daemon's `/version` and `/info` say.
#[derive(Debug, Clone, Serialize)]
pub struct DockerInfo {
    /// `Docker` or `Podman`: Podman answers the same API with its own version numbers.
    pub product: String,
    /// Engine version.
    pub version: String,
    /// API version.
    pub api_version: String,
    /// Configured runtimes.
    pub runtimes: Vec<String>,
    /// The default runtime.
    pub default_runtime: Option<String>,
    /// CDI spec directories (API ≥ 1.46).
    pub cdi_spec_dirs: Vec<String>,
}
