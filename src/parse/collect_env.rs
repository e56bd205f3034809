//! `python -m torch.utils.collect_env` output (also vLLM's extended `collect_env.py`).

use crate::parse::kernel::parse_kernel_release;
use crate::version::DriverVersion;
use serde::Serialize;

/// The facts collect_env reports about a PyTorch install and its host.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CollectEnv {
    /// `PyTorch version:`, e.g. `2.5.1+cu124`, `2.1.2+rocm6.1.3`.
    pub torch_version: Option<String>,
    /// `Is debug build:`.
    pub is_debug: Option<bool>,
    /// `CUDA used to build PyTorch:`; `None` for ROCm and CPU builds ("N/A").
    pub cuda_used_to_build: Option<String>,
    /// `ROCM used to build PyTorch:`, e.g. `6.2.41133-dd7f95766`.
    pub rocm_used_to_build: Option<String>,
    /// `HIP runtime version:`, e.g. `6.2.41133`.
    pub hip_runtime_version: Option<String>,
    /// `MIOpen runtime version:`.
    pub miopen_runtime_version: Option<String>,
    /// `CUDA runtime version:`.
    pub cuda_runtime_version: Option<String>,
    /// `OS:`, e.g. `Ubuntu 22.04.3 LTS (x86_64)`.
    pub os: Option<String>,
    /// `Python platform:`, e.g. `Linux-6.8.0-47-generic-x86_64-with-glibc2.35`.
    pub python_platform: Option<String>,
    /// The kernel release cut out of `python_platform`, when it parses as one.
    pub kernel_release: Option<String>,
    /// `Is CUDA available:` (true on working ROCm builds too).
    pub cuda_available: Option<bool>,
    /// GPU models: one per `GPU N:` line, or the single value ROCm builds print.
    pub gpu_models: Vec<String>,
    /// `Nvidia driver version:`.
    pub nvidia_driver_version: Option<DriverVersion>,
}

/// `None` for collect_env's placeholders.
fn real(v: &str) -> Option<String> {
    let v = v.trim();
    let placeholder = v.is_empty()
        || v == "N/A"
        || v == "No CUDA"
        || v == "Could not collect"
        || v.eq_ignore_ascii_case("none");
    (!placeholder).then(|| v.to_string())
}

/// `True` / `False`.
fn boolean(v: &str) -> Option<bool> {
    match v.trim() {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

/// `Linux-<release>-<arch>-with-<libc>` → `<release>`.
fn kernel_from_platform(p: &str) -> Option<String> {
    let rest = p.strip_prefix("Linux-")?;
    let rest = rest.split_once("-with-").map_or(rest, |(a, _)| a);
    let release = ["-x86_64", "-aarch64", "-ppc64le", "-s390x"]
        .iter()
        .find_map(|a| rest.strip_suffix(a))
        .unwrap_or(rest);
    parse_kernel_release(release).ok().map(|k| k.release)
}

/// Parses collect_env text; the first occurrence of each field wins.
pub fn parse_collect_env(s: &str) -> CollectEnv {
    let mut out = CollectEnv::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut in_gpus = false;
    for line in s.lines() {
        let t = line.trim();
        if in_gpus {
            // Multi-GPU CUDA hosts list `GPU N: name` lines under the header.
            if let Some((head, name)) = t.split_once(':') {
                let idx = head.strip_prefix("GPU ");
                if idx.is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())) {
                    if let Some(n) = real(name) {
                        out.gpu_models.push(n);
                    }
                    continue;
                }
            }
            in_gpus = false;
        }
        let Some((key, value)) = t.split_once(':') else {
            continue;
        };
        let key = key.trim();
        if seen.contains(&key) {
            continue;
        }
        let known = match key {
            "PyTorch version" => {
                out.torch_version = real(value);
                true
            }
            "Is debug build" => {
                out.is_debug = boolean(value);
                true
            }
            "CUDA used to build PyTorch" => {
                out.cuda_used_to_build = real(value);
                true
            }
            "ROCM used to build PyTorch" => {
                out.rocm_used_to_build = real(value);
                true
            }
            "HIP runtime version" => {
                out.hip_runtime_version = real(value);
                true
            }
            "MIOpen runtime version" => {
                out.miopen_runtime_version = real(value);
                true
            }
            "CUDA runtime version" => {
                out.cuda_runtime_version = real(value);
                true
            }
            "OS" => {
                out.os = real(value);
                true
            }
            "Python platform" => {
                out.python_platform = real(value);
                out.kernel_release = out
                    .python_platform
                    .as_deref()
                    .and_then(kernel_from_platform);
                true
            }
            "Is CUDA available" => {
                out.cuda_available = boolean(value);
                true
            }
            "GPU models and configuration" => {
                out.gpu_models.extend(real(value));
                in_gpus = true;
                true
            }
            "Nvidia driver version" => {
                out.nvidia_driver_version = real(value).and_then(|v| v.parse().ok());
                true
            }
            _ => false,
        };
        if known {
            seen.push(key);
        }
    }
    out
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
    fn h100_cuda() {
        let c = parse_collect_env(capture!("collect_env_vllm_h100sxm5_x8_cuda12.4_nvlink.txt"));
        assert_eq!(c.torch_version.as_deref(), Some("2.5.1+cu124"));
        assert_eq!(c.is_debug, Some(false));
        assert_eq!(c.cuda_used_to_build.as_deref(), Some("12.4"));
        assert_eq!(c.rocm_used_to_build, None);
        assert_eq!(c.hip_runtime_version, None);
        assert_eq!(c.cuda_runtime_version.as_deref(), Some("12.2.140"));
        assert_eq!(c.os.as_deref(), Some("Ubuntu 22.04.3 LTS (x86_64)"));
        assert_eq!(c.kernel_release.as_deref(), Some("6.8.0-47-generic"));
        assert_eq!(c.cuda_available, Some(true));
        assert_eq!(c.gpu_models, vec!["NVIDIA H100 80GB HBM3"; 8]);
        assert_eq!(
            c.nvidia_driver_version.map(|d| d.to_string()).as_deref(),
            Some("550.90.12")
        );
    }

    #[test]
    fn rocm_builds() {
        let c = parse_collect_env(capture!("collect_env_rocm6.1.3_wsl2_rx6800xt.txt"));
        assert_eq!(c.torch_version.as_deref(), Some("2.1.2+rocm6.1.3"));
        assert_eq!(c.cuda_used_to_build, None);
        assert_eq!(c.rocm_used_to_build.as_deref(), Some("6.1.40093-bd86f1708"));
        assert_eq!(c.hip_runtime_version.as_deref(), Some("6.1.40093"));
        assert_eq!(c.miopen_runtime_version.as_deref(), Some("3.1.0"));
        assert_eq!(
            c.kernel_release.as_deref(),
            Some("5.15.153.1-microsoft-standard-WSL2")
        );
        assert_eq!(c.gpu_models, ["AMD Radeon RX 6800 XT"]);
        assert_eq!(c.nvidia_driver_version, None);
        assert_eq!(c.cuda_available, Some(true));
        for text in [
            capture!("collect_env_vllm_mi300x_x8_rocm6.2_torch2.5.0a0.txt"),
            capture!("collect_env_vllm_mi300x_x8_rocm6.2_ubuntu20.04-container_showtopo.txt"),
        ] {
            let c = parse_collect_env(text);
            assert_eq!(c.rocm_used_to_build.as_deref(), Some("6.2.41133-dd7f95766"));
            assert_eq!(c.hip_runtime_version.as_deref(), Some("6.2.41133"));
            assert_eq!(c.os.as_deref(), Some("Ubuntu 20.04.6 LTS (x86_64)"));
            assert_eq!(c.kernel_release.as_deref(), Some("6.8.0-48-generic"));
            assert_eq!(
                c.gpu_models,
                ["AMD Instinct MI300X (gfx942:sramecc+:xnack-)"]
            );
            assert!(c.torch_version.is_some_and(|v| v.starts_with("2.")));
        }
    }

    #[test]
    fn cuda_wheel_without_gpu() {
        let c = parse_collect_env(capture!(
            "collect_env_cuda-wheel-on-amd-rx6700xt_no-gpu_spanish-lscpu.txt"
        ));
        // The poster cut the header lines, so the torch fields are unknown, not guessed.
        assert_eq!(
            (c.torch_version, c.is_debug, c.cuda_used_to_build),
            (None, None, None)
        );
        assert_eq!(c.cuda_available, Some(false));
        assert!(c.gpu_models.is_empty());
        assert_eq!(c.nvidia_driver_version, None);
        assert_eq!(c.kernel_release.as_deref(), Some("6.8.0-49-generic"));
        assert_eq!(c.os.as_deref(), Some("Ubuntu 22.04.5 LTS (x86_64)"));
    }

    #[test]
    fn garbage() {
        assert_eq!(parse_collect_env(""), CollectEnv::default());
        let c = parse_collect_env("Is CUDA available: maybe\nPython platform: Linux-\u{FFFD}\nNvidia driver version: 99999999999.1\nGPU models and configuration:\nGPU 0: \nGPU x: y\n");
        assert_eq!(c.cuda_available, None);
        assert_eq!(c.kernel_release, None);
        assert_eq!(c.nvidia_driver_version, None);
        assert!(c.gpu_models.is_empty());
    }
}
