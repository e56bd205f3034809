//! Which daemon to talk to, and with which TLS files, resolved as the docker CLI resolves it: `DOCKER_HOST` with
//! `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`, else a Docker context (`DOCKER_CONTEXT`, else `currentContext` in
//! `config.json`), else the local sockets.

use crate::error::Error;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The context that means "no context": `DOCKER_HOST`, the TLS variables and the default socket.
pub const DEFAULT_CONTEXT: &str = "default";
/// The daemon docker uses when TLS is on and no host is named (docker/cli@85390b4c:opts/hosts.go `DefaultTLSHost`).
const DEFAULT_TLS_HOST: &str = "tcp://localhost:2376";
/// Docker's default socket.
pub const DEFAULT_SOCKET: &str = "unix:///var/run/docker.sock";

/// The variables the docker CLI reads to find its daemon; an empty value counts as unset, as in the CLI.
#[derive(Debug, Clone, Default)]
pub struct DockerEnv {
    /// `DOCKER_HOST`.
    pub host: Option<String>,
    /// `DOCKER_TLS_VERIFY`: any non-empty value (even `0`) turns TLS with verification on.
    pub tls_verify: Option<String>,
    /// `DOCKER_TLS`: TLS without verification.
    pub tls: Option<String>,
    /// `DOCKER_CERT_PATH`: the directory with `ca.pem`, `cert.pem`, `key.pem` (default: the config directory).
    pub cert_path: Option<String>,
    /// `DOCKER_CONTEXT`.
    pub context: Option<String>,
    /// `DOCKER_CONFIG`: the config directory (default `~/.docker`).
    pub config: Option<String>,
    /// `HOME`, for `~/.docker`.
    pub home: Option<String>,
    /// `XDG_RUNTIME_DIR`, for Podman's rootless socket.
    pub xdg_runtime_dir: Option<String>,
}

impl DockerEnv {
    /// The variables of this process.
    pub fn from_process() -> DockerEnv {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        DockerEnv {
            host: var("DOCKER_HOST"),
            tls_verify: var("DOCKER_TLS_VERIFY"),
            tls: var("DOCKER_TLS"),
            cert_path: var("DOCKER_CERT_PATH"),
            context: var("DOCKER_CONTEXT"),
            config: var("DOCKER_CONFIG"),
            home: var("HOME"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
        }
    }

    /// `DOCKER_CONFIG`, else `~/.docker` (docker/cli@787aa698:cli/config/config.go `Dir`).
    pub fn config_dir(&self) -> PathBuf {
        match (&self.config, &self.home) {
            (Some(c), _) => PathBuf::from(c),
            (None, Some(h)) => Path::new(h).join(".docker"),
            (None, None) => PathBuf::from("/root/.docker"),
        }
    }
}

/// The TLS files of an endpoint (`ca.pem`, `cert.pem`, `key.pem`) and whether the daemon is verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA that signed the daemon's certificate; `None`: a context without one (the system's roots).
    pub ca: Option<PathBuf>,
    /// The client certificate.
    pub cert: PathBuf,
    /// The client key.
    pub key: PathBuf,
    /// False for `DOCKER_TLS` without `DOCKER_TLS_VERIFY`, or a context's `SkipTLSVerify`.
    pub verify: bool,
}

/// Why this endpoint was chosen, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointOrigin {
    /// `DOCKER_HOST`.
    DockerHost,
    /// A Docker context, and what named it (`DOCKER_CONTEXT` or `currentContext in PATH`).
    Context {
        /// The context's name.
        name: String,
        /// What named it.
        via: String,
    },
    /// No variable and no context: a local socket, or the TLS default host.
    Default,
}

/// A resolved daemon endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `unix:///var/run/docker.sock`, `tcp://HOST:PORT`, …
    pub host: String,
    /// TLS files when the endpoint is spoken to over TLS.
    pub tls: Option<TlsFiles>,
    /// Where it came from.
    pub origin: EndpointOrigin,
}

impl Endpoint {
    /// An endpoint given as a plain string (`unix://…`, `tcp://…` without TLS).
    pub fn plain(host: &str) -> Endpoint {
        Endpoint {
            host: host.to_string(),
            tls: None,
            origin: EndpointOrigin::Default,
        }
    }

    /// The endpoint of this process's environment, resolved as the docker CLI does.
    pub fn from_env() -> Result<Endpoint, Error> {
        resolve(&DockerEnv::from_process(), &|p| p.exists())
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.host)?;
        match (&self.tls, &self.origin) {
            (Some(_), EndpointOrigin::Context { name, .. }) => {
                write!(f, " (TLS, docker context {name})")
            }
            (None, EndpointOrigin::Context { name, .. }) => write!(f, " (docker context {name})"),
            (Some(t), _) => write!(
                f,
                " (TLS, certificates in {})",
                t.cert.parent().unwrap_or(Path::new("")).display()
            ),
            (None, _) => Ok(()),
        }
    }
}

/// The Docker context directory name: the hex SHA-256 of the context's name
/// (docker/cli@03c7ccf1:cli/context/store/store.go `contextdirOf`).
pub fn context_dir_name(name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(rename = "currentContext", default)]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct ContextMeta {
    #[serde(rename = "Endpoints", default)]
    endpoints: BTreeMap<String, ContextEndpoint>,
}

#[derive(Deserialize)]
struct ContextEndpoint {
    #[serde(rename = "Host", default)]
    host: Option<String>,
    #[serde(rename = "SkipTLSVerify", default)]
    skip_tls_verify: bool,
}

/// Resolves the endpoint as the docker CLI does (docker/cli@0155c264:cli/command/cli.go `resolveContextName`):
/// `DOCKER_HOST` wins and means the default context; then `DOCKER_CONTEXT`; then `currentContext` in
/// `<config>/config.json`; context `default` means `DOCKER_HOST`/TLS variables/local sockets.
pub fn resolve(env: &DockerEnv, exists: &dyn Fn(&Path) -> bool) -> Result<Endpoint, Error> {
    if env.host.is_some() {
        return Ok(default_endpoint(env, exists));
    }
    let config_dir = env.config_dir();
    let (name, via) = if let Some(c) = &env.context {
        (c.clone(), "DOCKER_CONTEXT".to_string())
    } else {
        let path = config_dir.join("config.json");
        match read_config(&path)? {
            Some(c) => (c, format!("currentContext in {}", path.display())),
            None => return Ok(default_endpoint(env, exists)),
        }
    };
    if name == DEFAULT_CONTEXT {
        return Ok(default_endpoint(env, exists));
    }
    context_endpoint(&config_dir, &name, &via, env, exists)
}

fn read_config(path: &Path) -> Result<Option<String>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let cfg: ConfigFile = serde_json::from_str(&text).map_err(|e| {
        Error::Environment(format!(
            "docker config {} is not valid JSON: {e} (fix it, or set DOCKER_CONFIG to another directory)",
            path.display()
        ))
    })?;
    Ok(cfg.current_context.filter(|c| !c.is_empty()))
}

/// The default context: `DOCKER_HOST` (or the TLS default host, or a local socket) with the TLS variables
/// (docker/cli@187a942a:cli/flags/options.go `SetDefaultOptions`; cli/command/cli.go `resolveDefaultDockerEndpoint`).
fn default_endpoint(env: &DockerEnv, exists: &dyn Fn(&Path) -> bool) -> Endpoint {
    let tls_on = env.tls_verify.is_some() || env.tls.is_some();
    let host = match &env.host {
        Some(h) => h.clone(),
        None if tls_on => DEFAULT_TLS_HOST.to_string(),
        None => resolve_endpoint(None, env.xdg_runtime_dir.as_deref(), exists),
    };
    let https = host.starts_with("https://");
    let tls = (is_tcp(&host) && (tls_on || https)).then(|| {
        let dir = env
            .cert_path
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| env.config_dir());
        TlsFiles {
            ca: Some(dir.join("ca.pem")),
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
            verify: env.tls_verify.is_some() || (https && env.tls.is_none()),
        }
    });
    Endpoint {
        host: with_default_port(&host),
        tls,
        origin: if env.host.is_some() {
            EndpointOrigin::DockerHost
        } else {
            EndpointOrigin::Default
        },
    }
}

/// A stored context: `<config>/contexts/meta/<sha256>/meta.json` and `<config>/contexts/tls/<sha256>/docker/*.pem`
/// (docker/cli@03c7ccf1:cli/context/store/store.go; docker/cli@03ff54b8:cli/context/docker/load.go `tlsConfig`).
fn context_endpoint(
    config_dir: &Path,
    name: &str,
    via: &str,
    env: &DockerEnv,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<Endpoint, Error> {
    let id = context_dir_name(name);
    let contexts = config_dir.join("contexts");
    let meta_dir = contexts.join("meta").join(&id);
    let meta_path = meta_dir.join("meta.json");
    let bad = |why: String| Error::DockerContext {
        name: name.to_string(),
        via: via.to_string(),
        why,
    };
    let text = match std::fs::read_to_string(&meta_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(if exists(&meta_dir) {
                format!("{} has no meta.json", meta_dir.display())
            } else {
                format!(
                    "no such context in {} (list them with `docker context ls`)",
                    contexts.display()
                )
            }));
        }
        Err(e) => return Err(bad(format!("cannot read {}: {e}", meta_path.display()))),
    };
    let meta: ContextMeta = serde_json::from_str(&text)
        .map_err(|e| bad(format!("{} is not valid JSON: {e}", meta_path.display())))?;
    let ep = meta
        .endpoints
        .get("docker")
        .ok_or_else(|| bad(format!("{} has no docker endpoint", meta_path.display())))?;
    // An empty host in a context means the platform default socket, as in the CLI.
    let host = ep
        .host
        .clone()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| resolve_endpoint(None, env.xdg_runtime_dir.as_deref(), exists));
    let tls_dir = contexts.join("tls").join(&id).join("docker");
    let file = |f: &str| Some(tls_dir.join(f)).filter(|p| exists(p));
    let has_tls_data = ["ca.pem", "cert.pem", "key.pem"]
        .iter()
        .any(|f| file(f).is_some());
    let tls = (is_tcp(&host) && (has_tls_data || ep.skip_tls_verify)).then(|| TlsFiles {
        ca: file("ca.pem"),
        cert: tls_dir.join("cert.pem"),
        key: tls_dir.join("key.pem"),
        verify: !ep.skip_tls_verify,
    });
    Ok(Endpoint {
        host: with_default_port(&host),
        tls,
        origin: EndpointOrigin::Context {
            name: name.to_string(),
            via: via.to_string(),
        },
    })
}

fn is_tcp(host: &str) -> bool {
    ["tcp://", "http://", "https://"]
        .iter()
        .any(|p| host.starts_with(p))
}

/// `tcp://HOST` without a port gets 2375, TLS or not, as the CLI's `ParseTCPAddr` gives it `DefaultTCPHost`'s port
/// (docker/cli@85390b4c:opts/hosts.go).
fn with_default_port(host: &str) -> String {
    let Some(rest) = host.strip_prefix("tcp://") else {
        return host.to_string();
    };
    let authority = rest.split('/').next().unwrap_or("");
    let has_port = match authority.rfind(']') {
        Some(i) => authority[i..].contains(':'),
        None => authority.contains(':'),
    };
    if has_port || authority.is_empty() {
        return host.to_string();
    }
    format!("tcp://{authority}:2375{}", &rest[authority.len()..])
}

/// The endpoint to use: `DOCKER_HOST`, else Docker's socket, else Podman's (rootless, then system), else Docker's.
pub fn resolve_endpoint(
    docker_host: Option<&str>,
    xdg_runtime_dir: Option<&str>,
    exists: &dyn Fn(&Path) -> bool,
) -> String {
    if let Some(h) = docker_host.filter(|h| !h.is_empty()) {
        return h.to_string();
    }
    let mut candidates = vec!["/var/run/docker.sock".to_string()];
    if let Some(x) = xdg_runtime_dir.filter(|x| !x.is_empty()) {
        candidates.push(format!("{x}/podman/podman.sock"));
    }
    candidates.push("/run/podman/podman.sock".to_string());
    candidates
        .into_iter()
        .find(|c| exists(Path::new(c)))
        .map(|c| format!("unix://{c}"))
        .unwrap_or_else(|| DEFAULT_SOCKET.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> DockerEnv {
        DockerEnv {
            home: Some("/home/u".into()),
            ..DockerEnv::default()
        }
    }

    fn write_context(dir: &Path, name: &str, meta: &str, tls: &[&str]) {
        let id = context_dir_name(name);
        let m = dir.join("contexts/meta").join(&id);
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("meta.json"), meta).unwrap();
        let t = dir.join("contexts/tls").join(&id).join("docker");
        std::fs::create_dir_all(&t).unwrap();
        for f in tls {
            std::fs::write(t.join(f), "x").unwrap();
        }
    }

    #[test]
    fn context_dir_is_the_sha256_of_the_name() {
        // `docker context create ci` makes contexts/meta/<this>/ (`printf ci | sha256sum`).
        assert_eq!(
            context_dir_name("ci"),
            "1b158839f8aa339e89bb50b1603e90ec68e0fd5565fe10a7cb32729fddf7070a"
        );
    }

    #[test]
    fn docker_host_with_tls_verify_uses_the_cert_path() {
        let mut e = env();
        e.host = Some("tcp://docker:2376".into());
        e.tls_verify = Some("1".into());
        e.cert_path = Some("/certs/client".into());
        let ep = resolve(&e, &|_| true).unwrap();
        assert_eq!(ep.host, "tcp://docker:2376");
        assert_eq!(ep.origin, EndpointOrigin::DockerHost);
        let t = ep.tls.unwrap();
        assert_eq!(t.ca, Some(PathBuf::from("/certs/client/ca.pem")));
        assert_eq!(t.cert, PathBuf::from("/certs/client/cert.pem"));
        assert_eq!(t.key, PathBuf::from("/certs/client/key.pem"));
        assert!(t.verify);
    }

    #[test]
    fn cert_path_defaults_to_the_config_dir_and_ports_are_filled_in() {
        let mut e = env();
        e.host = Some("tcp://docker".into());
        e.tls_verify = Some("0".into());
        let ep = resolve(&e, &|_| true).unwrap();
        assert_eq!(ep.host, "tcp://docker:2375");
        assert_eq!(
            ep.tls.unwrap().ca,
            Some(PathBuf::from("/home/u/.docker/ca.pem"))
        );
        e.config = Some("/cfg".into());
        assert_eq!(
            resolve(&e, &|_| true).unwrap().tls.unwrap().cert,
            PathBuf::from("/cfg/cert.pem")
        );
        e.tls_verify = None;
        let ep = resolve(&e, &|_| true).unwrap();
        assert_eq!((ep.host.as_str(), ep.tls), ("tcp://docker:2375", None));
    }

    #[test]
    fn tls_without_a_host_means_localhost_2376_and_docker_tls_alone_does_not_verify() {
        let mut e = env();
        e.tls = Some("1".into());
        let ep = resolve(&e, &|_| false).unwrap();
        assert_eq!(ep.host, "tcp://localhost:2376");
        assert!(!ep.tls.unwrap().verify);
    }

    #[test]
    fn unix_sockets_never_get_tls() {
        let mut e = env();
        e.host = Some("unix:///var/run/docker.sock".into());
        e.tls_verify = Some("1".into());
        assert_eq!(resolve(&e, &|_| true).unwrap().tls, None);
    }

    #[test]
    fn docker_host_wins_over_docker_context() {
        let mut e = env();
        e.host = Some("unix:///x.sock".into());
        e.context = Some("nowhere".into());
        let ep = resolve(&e, &|_| false).unwrap();
        assert_eq!(ep.host, "unix:///x.sock");
    }

    #[test]
    fn a_context_from_docker_context_or_config_json() {
        let dir = tempfile::tempdir().unwrap();
        write_context(
            dir.path(),
            "ci",
            r#"{"Name":"ci","Metadata":{},"Endpoints":{"docker":{"Host":"tcp://10.0.0.5:2376","SkipTLSVerify":false}}}"#,
            &["ca.pem", "cert.pem", "key.pem"],
        );
        let mut e = env();
        e.config = Some(dir.path().display().to_string());
        e.context = Some("ci".into());
        let ep = resolve(&e, &|p| p.exists()).unwrap();
        assert_eq!(ep.host, "tcp://10.0.0.5:2376");
        let tls_dir = dir
            .path()
            .join("contexts/tls")
            .join(context_dir_name("ci"))
            .join("docker");
        assert_eq!(
            ep.tls,
            Some(TlsFiles {
                ca: Some(tls_dir.join("ca.pem")),
                cert: tls_dir.join("cert.pem"),
                key: tls_dir.join("key.pem"),
                verify: true
            })
        );
        assert_eq!(
            ep.to_string(),
            "tcp://10.0.0.5:2376 (TLS, docker context ci)"
        );
        // The same context through config.json's currentContext.
        e.context = None;
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"auths":{},"currentContext":"ci"}"#,
        )
        .unwrap();
        let ep2 = resolve(&e, &|p| p.exists()).unwrap();
        assert_eq!(ep2.host, ep.host);
        assert!(
            matches!(ep2.origin, EndpointOrigin::Context { ref via, .. } if via.starts_with("currentContext in"))
        );
        // `default` is the normal resolution, not a stored context.
        e.context = Some("default".into());
        assert_eq!(resolve(&e, &|_| false).unwrap().host, super::DEFAULT_SOCKET);
    }

    #[test]
    fn a_context_without_tls_files_is_plain_and_skip_verify_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        write_context(
            dir.path(),
            "plain",
            r#"{"Endpoints":{"docker":{"Host":"tcp://h:2375"}}}"#,
            &[],
        );
        write_context(
            dir.path(),
            "skip",
            r#"{"Endpoints":{"docker":{"Host":"tcp://h:2376","SkipTLSVerify":true}}}"#,
            &[],
        );
        let mut e = env();
        e.config = Some(dir.path().display().to_string());
        e.context = Some("plain".into());
        assert_eq!(resolve(&e, &|p| p.exists()).unwrap().tls, None);
        e.context = Some("skip".into());
        let t = resolve(&e, &|p| p.exists()).unwrap().tls.unwrap();
        assert!(!t.verify && t.ca.is_none());
    }

    #[test]
    fn unknown_contexts_and_contexts_without_meta_name_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = env();
        e.config = Some(dir.path().display().to_string());
        e.context = Some("nope".into());
        let msg = resolve(&e, &|p| p.exists()).unwrap_err().to_string();
        assert!(
            msg.starts_with("docker context nope (named by DOCKER_CONTEXT): no such context in"),
            "{msg}"
        );
        std::fs::create_dir_all(
            dir.path()
                .join("contexts/meta")
                .join(context_dir_name("nope")),
        )
        .unwrap();
        let msg = resolve(&e, &|p| p.exists()).unwrap_err().to_string();
        assert!(msg.ends_with("has no meta.json"), "{msg}");
        std::fs::write(dir.path().join("config.json"), "{not json").unwrap();
        e.context = None;
        let msg = resolve(&e, &|p| p.exists()).unwrap_err().to_string();
        assert!(msg.contains("config.json is not valid JSON"), "{msg}");
    }

    #[test]
    fn docker_host_wins() {
        let e = resolve_endpoint(Some("tcp://10.0.0.1:2375"), None, &|_| true);
        assert_eq!(e, "tcp://10.0.0.1:2375");
    }

    #[test]
    fn docker_socket_before_podman() {
        let e = resolve_endpoint(None, Some("/run/user/1000"), &|_| true);
        assert_eq!(e, "unix:///var/run/docker.sock");
    }

    #[test]
    fn podman_rootless_when_no_docker_socket() {
        let e = resolve_endpoint(Some(""), Some("/run/user/1000"), &|p| {
            p.starts_with("/run/user")
        });
        assert_eq!(e, "unix:///run/user/1000/podman/podman.sock");
        let e = resolve_endpoint(None, None, &|p| p.starts_with("/run/podman"));
        assert_eq!(e, "unix:///run/podman/podman.sock");
    }

    #[test]
    fn nothing_exists_means_docker_default() {
        assert_eq!(resolve_endpoint(None, None, &|_| false), DEFAULT_SOCKET);
    }
}
