//! The values of `rocmenv slurm`, checked: what runs, in which container runtime, on how many nodes, and the
//! scheduler options passed through to `#SBATCH` lines (which sbatch reads without a shell, so each value is held to
//! the characters its Slurm option takes).

use crate::error::Error;
use crate::suites::Level;
pub use crate::vendor::Vendor;

/// What every node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `rocmenv doctor --json`.
    Doctor,
    /// doctor, then the smoke suite.
    DoctorSmoke,
    /// The smoke suite alone (a CPU node, where doctor's GPU checks fail by design).
    Smoke,
    /// `rocmenv validate --config FILE` (it builds and runs images itself).
    Validate,
}

impl Check {
    /// `doctor`, `doctor-smoke`, `validate`.
    pub fn name(self) -> &'static str {
        match self {
            Check::Doctor => "doctor",
            Check::DoctorSmoke => "doctor-smoke",
            Check::Smoke => "smoke",
            Check::Validate => "validate",
        }
    }
}

/// The container runtime the site has (also clap's value enum for `--runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// `apptainer exec --rocm|--nv IMAGE` (a SIF file or a `docker://` reference).
    #[value(help = "`apptainer exec --rocm|--nv` (a SIF file or docker:// reference)")]
    Apptainer,
    /// The same, as `singularity`.
    #[value(help = "As apptainer, with `singularity`")]
    Singularity,
    /// rocmenv on the node drives Podman's Docker-compatible socket, mapping devices as `rocmenv run` does.
    #[value(help = "rocmenv on the node drives Podman's Docker-compatible socket")]
    Podman,
    /// rocmenv on the node drives Docker, mapping devices as `rocmenv run` does.
    #[value(help = "rocmenv on the node drives Docker")]
    Docker,
    /// enroot through the pyxis plugin: `srun --container-image`.
    #[value(help = "enroot through pyxis: `srun --container-image`")]
    Enroot,
    /// rocmenv on the node itself (`smoke --host`).
    #[value(help = "rocmenv on the node itself (`smoke --host`)")]
    None,
}

impl Runtime {
    /// As `--runtime` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Apptainer => "apptainer",
            Runtime::Singularity => "singularity",
            Runtime::Podman => "podman",
            Runtime::Docker => "docker",
            Runtime::Enroot => "enroot",
            Runtime::None => "none",
        }
    }

    /// True when rocmenv itself runs inside the image (so the image must have it on its PATH).
    pub fn inside(self) -> bool {
        matches!(
            self,
            Runtime::Apptainer | Runtime::Singularity | Runtime::Enroot
        )
    }
}

/// The values as given on the command line.
#[derive(Debug, Clone)]
pub struct Request {
    /// `--command`.
    pub check: Check,
    /// `--runtime`.
    pub runtime: Runtime,
    /// `--image`.
    pub image: Option<String>,
    /// `--vendor`.
    pub vendor: Vendor,
    /// `--level`.
    pub level: Level,
    /// `--config` (validate).
    pub config: Option<String>,
    /// `--nodes`.
    pub nodes: u32,
    /// `--gpus-per-node`.
    pub gpus_per_node: u32,
    /// `--gres`, instead of `--gpus-per-node`.
    pub gres: Option<String>,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time`.
    pub time: Option<String>,
    /// `--nodelist`.
    pub nodelist: Option<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// `--results`.
    pub results: String,
}

/// A script to write, its values checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What runs.
    pub check: Check,
    /// Where.
    pub runtime: Runtime,
    /// The image (every runtime but `none`).
    pub image: Option<String>,
    /// Whose GPUs.
    pub vendor: Vendor,
    /// The smoke level.
    pub level: Level,
    /// validate's config file.
    pub config: Option<String>,
    /// Nodes.
    pub nodes: u32,
    /// The GPU request, in Slurm's terms: `--gpus-per-node=N` or `--gres=SPEC`; none for the CPU.
    pub gpu_request: Option<String>,
    /// `#SBATCH` options passed through: (option, value).
    pub sbatch: Vec<(&'static str, String)>,
    /// The results directory (absolute, on a filesystem every node shares).
    pub results: String,
}

/// Checks `value` holds only ASCII letters, digits and `extra`.
fn word(flag: &str, value: &str, extra: &str, what: &str) -> Result<String, Error> {
    let ok = !value.is_empty()
        && value.len() <= 256
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c));
    if ok {
        Ok(value.to_string())
    } else {
        Err(Error::invalid(
            flag,
            format!("`{}` is not {what}", crate::text::one_line(value)),
        ))
    }
}

/// Slurm's time formats: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`.
fn time(value: &str) -> Result<String, Error> {
    let bad = || {
        Error::invalid(
            "time",
            format!(
                "`{}` is not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)",
                crate::text::one_line(value)
            ),
        )
    };
    let num = |s: &str| !s.is_empty() && s.len() <= 6 && s.chars().all(|c| c.is_ascii_digit());
    let (days, rest) = match value.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, value),
    };
    if days.is_some_and(|d| !num(d)) {
        return Err(bad());
    }
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() > 3 || !parts.iter().all(|p| num(p)) {
        return Err(bad());
    }
    Ok(value.to_string())
}

impl Plan {
    /// Checks every value and their combinations.
    pub fn new(r: Request) -> Result<Plan, Error> {
        let image = checked_image(&r)?;
        let config = checked_config(&r)?;
        if r.check == Check::Validate && r.runtime.inside() {
            return Err(Error::invalid(
                "runtime",
                format!(
                    "--command validate builds and runs images through a Docker-compatible engine, which --runtime {} is not: use docker, podman or none",
                    r.runtime.name()
                ),
            ));
        }
        if r.nodes == 0 || r.nodes > 100_000 {
            return Err(Error::invalid(
                "nodes",
                "give a node count from 1 (one task runs on each)",
            ));
        }
        let gpu_request = gpu_request(&r)?;
        let sbatch = sbatch_options(&r)?;
        let results = results_dir(&r.results)?;
        Ok(Plan {
            check: r.check,
            runtime: r.runtime,
            image,
            vendor: r.vendor,
            level: r.level,
            config,
            nodes: r.nodes,
            gpu_request,
            sbatch,
            results,
        })
    }
}

/// The image to run, held to what the runtime reads: none for `--runtime none`, a SIF path or an image reference.
fn checked_image(r: &Request) -> Result<Option<String>, Error> {
    match (r.runtime, &r.image) {
        (Runtime::None, Some(_)) => Err(Error::invalid(
            "image",
            "--runtime none runs rocmenv on the node itself; drop --image, or name a --runtime",
        )),
        (Runtime::None, None) => Ok(None),
        (_, None) if r.check == Check::Validate => Ok(None),
        (rt, None) => Err(Error::invalid(
            "image",
            format!(
                "--runtime {} needs --image (an image with Python and torch{})",
                rt.name(),
                if rt.inside() {
                    ", and rocmenv on its PATH"
                } else {
                    ""
                }
            ),
        )),
        (rt, Some(i)) => {
            match (rt, i.strip_prefix("docker://")) {
                (Runtime::Apptainer | Runtime::Singularity, Some(reference)) => {
                    crate::sanitize::image_reference("image", reference)?;
                }
                // A SIF file on a shared filesystem.
                (Runtime::Apptainer | Runtime::Singularity, None) if i.ends_with(".sif") => {
                    path("image", i, "a SIF file")?;
                }
                _ => {
                    crate::sanitize::image_reference("image", i)?;
                }
            }
            Ok(Some(i.clone()))
        }
    }
}

/// validate's config path, which validate needs and no other check takes.
fn checked_config(r: &Request) -> Result<Option<String>, Error> {
    match (r.check, &r.config) {
        (Check::Validate, Some(c)) => Ok(Some(path("config", c, "a rocmenv.yaml path")?)),
        (Check::Validate, None) => Err(Error::invalid(
            "config",
            "--command validate reads rocmenv.yaml: name it with --config (a path every node can read)",
        )),
        (_, Some(_)) => Err(Error::invalid(
            "config",
            "only --command validate reads a config; drop --config, or add --command validate",
        )),
        (_, None) => Ok(None),
    }
}

/// The GPU request in Slurm's terms: `--gres=SPEC`, else `--gpus-per-node=N`; none for the CPU.
fn gpu_request(r: &Request) -> Result<Option<String>, Error> {
    match (r.vendor, &r.gres) {
        (Vendor::Cpu, Some(_)) => Err(Error::invalid(
            "gres",
            "--vendor cpu asks for no GPU; drop --gres",
        )),
        (Vendor::Cpu, None) => Ok(None),
        (_, Some(g)) => Ok(Some(format!(
            "--gres={}",
            word(
                "gres",
                g,
                ":,_.-",
                "a generic resource (gpu:N or gpu:TYPE:N)"
            )?
        ))),
        (_, None) if r.gpus_per_node == 0 || r.gpus_per_node > 64 => Err(Error::invalid(
            "gpus-per-node",
            "give 1 to 64 GPUs per node (or --vendor cpu for none)",
        )),
        (_, None) => Ok(Some(format!("--gpus-per-node={}", r.gpus_per_node))),
    }
}

/// The `#SBATCH` options passed through, each held to the characters its Slurm option takes.
fn sbatch_options(r: &Request) -> Result<Vec<(&'static str, String)>, Error> {
    let mut sbatch = Vec::new();
    if let Some(p) = &r.partition {
        sbatch.push((
            "partition",
            word("partition", p, "_.,-", "a partition name")?,
        ));
    }
    if let Some(t) = &r.time {
        sbatch.push(("time", time(t)?));
    }
    if let Some(n) = &r.nodelist {
        sbatch.push((
            "nodelist",
            word(
                "nodelist",
                n,
                "_.,-[]",
                "a Slurm host list (node[01-04],gpu7)",
            )?,
        ));
    }
    if let Some(a) = &r.account {
        sbatch.push(("account", word("account", a, "_.-", "an account name")?));
    }
    if let Some(v) = &r.reservation {
        sbatch.push((
            "reservation",
            word("reservation", v, "_.,-", "a reservation name")?,
        ));
    }
    Ok(sbatch)
}

/// The results directory: an absolute path, without a trailing slash (bar `/` itself).
fn results_dir(results: &str) -> Result<String, Error> {
    let results = path("results", results, "a directory path")?;
    if !results.starts_with('/') {
        return Err(Error::invalid(
            "results",
            "give an absolute path on a filesystem every node shares (each node writes its report there)",
        ));
    }
    Ok(match results.trim_end_matches('/') {
        "" => "/".to_string(),
        r => r.to_string(),
    })
}

/// A path: printable, no line breaks or control characters (the script quotes it; a line break would still end a
/// `#SBATCH` header or confuse a reader).
fn path(flag: &str, value: &str, what: &str) -> Result<String, Error> {
    if value.is_empty() || value.len() > 4096 || value.chars().any(char::is_control) {
        return Err(Error::invalid(
            flag,
            format!("`{}` is not {what}", crate::text::one_line(value)),
        ));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::Runtime;

    #[test]
    fn runtime_names_match_clap() {
        use Runtime::*;
        for r in [Apptainer, Singularity, Podman, Docker, Enroot, None] {
            let clap = clap::ValueEnum::to_possible_value(&r).unwrap();
            assert_eq!(clap.get_name(), r.name());
        }
    }
}
