//! A read-only look at the Docker daemon (`/version`, `/info`) with short timeouts, so doctor never hangs on a dead socket.

use crate::checks::{DockerInfo, DockerStatus};
use std::io::{Read, Write};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(3);

/// The endpoint `DOCKER_HOST` names, or the default socket.
pub fn endpoint_from_env(docker_host: Option<&str>) -> String {
    match docker_host {
        Some(h) if !h.is_empty() => h.to_string(),
        _ => "unix:///var/run/docker.sock".to_string(),
    }
}

/// Asks the daemon at `endpoint` for its version and info.
pub fn docker_status(endpoint: &str) -> DockerStatus {
    let result = (|| {
        let version: serde_json::Value = get(endpoint, "/version")?;
        let info: serde_json::Value = get(endpoint, "/info").unwrap_or(serde_json::Value::Null);
        let s =
            |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        Ok(DockerInfo {
            version: s(&version, "Version").unwrap_or_else(|| "?".into()),
            api_version: s(&version, "ApiVersion").unwrap_or_else(|| "?".into()),
            runtimes: info
                .get("Runtimes")
                .and_then(|r| r.as_object())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default(),
            default_runtime: s(&info, "DefaultRuntime"),
            cdi_spec_dirs: info
                .get("CDISpecDirs")
                .and_then(|r| r.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
    })();
    DockerStatus {
        endpoint: endpoint.to_string(),
        result,
    }
}

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

fn connect(endpoint: &str) -> Result<Box<dyn Stream>, String> {
    if let Some(path) = endpoint.strip_prefix("unix://") {
        let s = std::os::unix::net::UnixStream::connect(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{path} does not exist"),
            std::io::ErrorKind::PermissionDenied => {
                format!("permission denied on {path} (add the user to the docker group)")
            }
            std::io::ErrorKind::ConnectionRefused => {
                "connection refused (the daemon is not running)".to_string()
            }
            _ => e.to_string(),
        })?;
        s.set_read_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        return Ok(Box::new(s));
    }
    if let Some(addr) = endpoint.strip_prefix("tcp://") {
        use std::net::ToSocketAddrs;
        let sa = addr
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {addr}: {e}"))?
            .next()
            .ok_or_else(|| format!("cannot resolve {addr}"))?;
        let s = std::net::TcpStream::connect_timeout(&sa, TIMEOUT).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        return Ok(Box::new(s));
    }
    Err(format!("`{endpoint}` is not a unix:// or tcp:// endpoint"))
}

fn get(endpoint: &str, path: &str) -> Result<serde_json::Value, String> {
    let mut s = connect(endpoint)?;
    // HTTP/1.0 so the daemon closes the connection and no chunked decoding is needed.
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: docker\r\nUser-Agent: rocmenv\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    s.take(8 << 20)
        .read_to_end(&mut buf)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                format!("no answer within {} s", TIMEOUT.as_secs())
            }
            _ => e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or("the answer is not HTTP")?;
    let status = head.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        return Err(format!("{path} answered `{status}`"));
    }
    serde_json::from_str(body).map_err(|e| format!("{path} did not answer JSON: {e}"))
}
