//! `docker info` text, and the errors `docker run --gpus` prints when GPU support is broken.

use serde::Serialize;

/// The parts of `docker info` that decide whether GPU containers can run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DockerInfo {
    /// `Server Version:` (the daemon, not the client).
    pub server_version: Option<String>,
    /// `Runtimes:`, e.g. `["io.containerd.runc.v2", "nvidia", "runc"]`.
    pub runtimes: Vec<String>,
    /// `Default Runtime:`.
    pub default_runtime: Option<String>,
    /// `CDI spec directories:` (docker ≥ 25 with CDI enabled).
    pub cdi_spec_dirs: Vec<String>,
    /// `Kernel Version:` as the daemon sees it.
    pub kernel_version: Option<String>,
    /// `Operating System:` of the daemon host.
    pub operating_system: Option<String>,
    /// `ERROR:` lines (daemon unreachable, permission denied on the socket).
    pub errors: Vec<String>,
}

/// Why `docker run --gpus …` failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum DockerGpuError {
    /// `could not select device driver "" with capabilities: [[gpu]]`: no NVIDIA runtime hook is configured.
    NoGpuRuntime,
    /// `libnvidia-ml.so.1: cannot open shared object file`: the host driver's NVML is not visible.
    NvmlMissing,
    /// `unknown or invalid runtime name: nvidia`: `--runtime=nvidia` without the runtime registered.
    UnknownRuntime,
    /// `unresolvable CDI devices`: a CDI device name with no spec in the CDI directories.
    UnresolvableCdiDevice,
}

/// Parses `docker info` text; only the `Server:` section is read.
pub fn parse_docker_info(s: &str) -> DockerInfo {
    let mut out = DockerInfo::default();
    let mut in_server = false;
    let mut in_cdi = false;
    for line in s.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        // Docker prints daemon errors at column 0 under `Server:`, so check them first.
        if let Some(e) = t.strip_prefix("ERROR:") {
            out.errors.push(e.trim().to_string());
            continue;
        }
        if indent == 0 {
            in_server = t == "Server:";
            in_cdi = false;
            continue;
        }
        if !in_server || t.is_empty() {
            continue;
        }
        if in_cdi && indent >= 2 {
            out.cdi_spec_dirs.push(t.to_string());
            continue;
        }
        in_cdi = false;
        if indent != 1 {
            continue;
        }
        let Some((key, value)) = t.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let text = (!value.is_empty()).then(|| value.to_string());
        match key {
            "Server Version" => out.server_version = text,
            "Runtimes" => out.runtimes = value.split_whitespace().map(str::to_string).collect(),
            "Default Runtime" => out.default_runtime = text,
            "Kernel Version" => out.kernel_version = text,
            "Operating System" => out.operating_system = text,
            "CDI spec directories" => in_cdi = true,
            _ => {}
        }
    }
    out
}

/// Recognises a `docker run --gpus` failure in its stderr.
pub fn classify_docker_gpu_error(s: &str) -> Option<DockerGpuError> {
    if s.contains("could not select device driver") && s.contains("[[gpu]]") {
        Some(DockerGpuError::NoGpuRuntime)
    } else if s.contains("libnvidia-ml.so.1") {
        Some(DockerGpuError::NvmlMissing)
    } else if s.contains("unknown or invalid runtime name") {
        Some(DockerGpuError::UnknownRuntime)
    } else if s.contains("unresolvable CDI devices") {
        Some(DockerGpuError::UnresolvableCdiDevice)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
    }

    #[test]
    fn info_capture() {
        let i = parse_docker_info(capture!(
            "docker-info_nvidia-runtime_ubuntu22.04_docker24_ctk1.14_fake-gpus.txt"
        ));
        assert_eq!(i.server_version.as_deref(), Some("24.0.5"));
        assert_eq!(i.runtimes, ["io.containerd.runc.v2", "nvidia", "runc"]);
        assert_eq!(i.default_runtime.as_deref(), Some("runc"));
        assert!(i.cdi_spec_dirs.is_empty());
        assert_eq!(i.kernel_version.as_deref(), Some("5.15.0-151-generic"));
        assert_eq!(i.operating_system.as_deref(), Some("Ubuntu 22.04.5 LTS"));
        assert!(i.errors.is_empty());
    }

    #[test]
    fn cdi_and_errors() {
        let i = parse_docker_info(concat!(
            "Client:\n Version:    27.3.1\nServer:\n Server Version: 27.3.1\n",
            " Runtimes: io.containerd.runc.v2 runc\n Default Runtime: runc\n",
            " CDI spec directories:\n  /etc/cdi\n  /var/run/cdi\n Swarm: inactive\n",
        ));
        assert_eq!(i.cdi_spec_dirs, ["/etc/cdi", "/var/run/cdi"]);
        assert_eq!(i.server_version.as_deref(), Some("27.3.1"));
        let i = parse_docker_info("Server:\nERROR: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n");
        assert_eq!(i.errors.len(), 1);
        assert!(i.errors[0].starts_with("Cannot connect"));
        let i = parse_docker_info("Server:\n ERROR: permission denied while trying to connect to the Docker daemon socket\n");
        assert_eq!(i.errors.len(), 1);
        assert_eq!(parse_docker_info(""), DockerInfo::default());
        assert_eq!(
            parse_docker_info("\u{FFFD}\0\n Server Version: x"),
            DockerInfo::default()
        );
    }

    #[test]
    fn run_errors() {
        assert_eq!(
            classify_docker_gpu_error(capture!(
                "docker-run-gpus_err_could-not-select-device-driver.txt"
            )),
            Some(DockerGpuError::NoGpuRuntime)
        );
        assert_eq!(
            classify_docker_gpu_error(capture!(
                "docker-run-gpus_err_libnvidia-ml-not-found_wsl2.txt"
            )),
            Some(DockerGpuError::NvmlMissing)
        );
        assert_eq!(
            classify_docker_gpu_error(
                "docker: Error response from daemon: unknown or invalid runtime name: nvidia."
            ),
            Some(DockerGpuError::UnknownRuntime)
        );
        assert_eq!(classify_docker_gpu_error(""), None);
        assert_eq!(classify_docker_gpu_error("\u{FFFD}\0"), None);
    }
}
