//! Static checks of a built image that need no GPU: the ROCm inside against the hosts' driver window, the CUDA
//! inside against the hosts' driver floor, the torch build's compiled arch list against the target GPUs, and the
//! `HSA_OVERRIDE_GFX_VERSION` baked into the image's env. The facts come from one short container run of
//! [`PROBE_SCRIPT`] (no device mapped), read by `parse::image_probe`, and the image's config; the checks are pure.

use super::{Finding, Status};
use crate::cc::ComputeCapability;
use crate::dockerfile::Stack;
use crate::envplan;
use crate::gfx::GfxTarget;
use crate::matrix::{CudaRelease, Matrices, RocmRelease};
pub use crate::parse::image_probe::{ImageFacts, TorchFacts};
use crate::version::DriverVersion;

/// The area image findings belong to.
const AREA: &str = "image";

/// The Python half of the probe: what torch was built for, read without a device. `torch.cuda.get_arch_list()`
/// answers `[]` when no GPU is visible, so the compiled list is read from `torch._C._cuda_getArchFlags()`, which
/// CUDA and ROCm builds have and CPU builds lack.
pub const PROBE_PY: &str = r#"import json, sys
try:
    import torch
except Exception as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
    sys.exit(0)
f = getattr(torch._C, "_cuda_getArchFlags", None)
try:
    flags = f() if f is not None else None
except Exception:
    flags = None
print(json.dumps({"version": torch.__version__, "cuda": getattr(torch.version, "cuda", None),
                  "hip": getattr(torch.version, "hip", None), "arch_flags": flags}))
"#;

/// The shell half: run as `sh -c PROBE_SCRIPT PROBE_PY`, it prints marked sections that [`ImageFacts::parse`]
/// (in parse/) reads.
/// A Core SDK install has its version file in `/opt/rocm/core/` (the update-alternatives link to `core-X.Y`); Core
/// SDK wheels (the rocm stack's image for those releases) have none, and `rocm-sdk version` (on PATH in the
/// image's virtual environment) prints the release.
pub const PROBE_SCRIPT: &str = r#"echo '@@rocm'; head -n 1 /opt/rocm/.info/version 2>/dev/null || head -n 1 /opt/rocm/core/.info/version 2>/dev/null || rocm-sdk version 2>/dev/null
echo '@@cuda'; cat /usr/local/cuda/version.json 2>/dev/null || cat /usr/local/cuda/version.txt 2>/dev/null
echo '@@torch'
if command -v python3 >/dev/null 2>&1; then python3 -c "$0" 2>&1 | tail -n 20; else echo '@@nopython'; fi
"#;

/// What the image must run on.
#[derive(Debug, Clone)]
pub struct ImageTarget<'m> {
    /// The stack it was built from.
    pub stack: Stack,
    /// The AMD gfx targets it must run on.
    pub gfx: Vec<GfxTarget>,
    /// The NVIDIA compute capabilities it must run on (`9.0`).
    pub cuda_arch: Vec<ComputeCapability>,
    /// The ROCm release the hosts run (`host.target: rocm-…`).
    pub host_rocm: Option<&'m RocmRelease>,
    /// The CUDA release the hosts run (`host.target: cuda-…` / `ngc-…`).
    pub host_cuda: Option<&'m CudaRelease>,
    /// The hosts' NVIDIA driver, when the config names it.
    pub nvidia_driver: Option<DriverVersion>,
    /// The ROCm release the stack asked for, when the image does not say.
    pub stack_rocm: Option<&'m RocmRelease>,
}

/// Every image check.
pub fn check(f: &ImageFacts, t: &ImageTarget, m: &Matrices) -> Vec<Finding> {
    vec![
        rocm_driver(f, t, m),
        cuda_driver(f, t, m),
        torch_arch(f, t, m),
        hsa_override(f, t, m),
    ]
}

fn rocm_driver(f: &ImageFacts, t: &ImageTarget, m: &Matrices) -> Finding {
    const ID: &str = "image.rocm-driver";
    let Some(v) = f.rocm_version() else {
        return if t.stack == Stack::Rocm || !t.gfx.is_empty() {
            Finding::new(ID, AREA, Status::Fail, "no ROCm in the image: neither /opt/rocm/.info/version nor (Core SDK) /opt/rocm/core/.info/version exists, and no `rocm-sdk` (Core SDK wheels) answers")
                .fix("build it with stack: rocm (a rocm/pytorch image, or a Core SDK release's wheels), or a --base that is a copy of one, or install ROCm in the image")
        } else {
            Finding::new(
                ID,
                AREA,
                Status::Skip,
                "no ROCm in the image, and the stack targets no AMD GPU",
            )
        };
    };
    let Some(release) = m.rocm_release(v) else {
        return Finding::new(ID, AREA, Status::Warn, format!("ROCm {v} in the image is not in the matrices, so its driver window is unknown"))
            .fix("add the release to rocm.yaml (--matrices DIR), or build from a listed release (`rocmenv matrix check`)");
    };
    let Some(host) = t.host_rocm else {
        return Finding::new(ID, AREA, Status::Skip, format!("ROCm {v} in the image; host.target names no ROCm release to compare the driver window with"))
            .fix("set host.target: rocm-X.Y in rocmenv.yaml");
    };
    let Some(driver) = &host.ships_driver else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!(
                "ROCm {v} in the image; the matrices name no driver that ships with ROCm {}",
                host.version
            ),
        );
    };
    let window: Vec<String> = release.kernel_drivers.iter().map(|k| k.short()).collect();
    if release.accepts_driver(driver) {
        Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "ROCm {v} in the image runs on the hosts' amdgpu driver {} (ROCm {})",
                driver.short(),
                host.version
            ),
        )
    } else {
        Finding::new(ID, AREA, Status::Fail, format!("ROCm {v} in the image does not support the hosts' amdgpu driver {} (ROCm {}); its window is {}", driver.short(), host.version, window.join(", ")))
            .detail(format!("user space and kernel driver must be in each other's window: `rocmenv matrix rocm {}`", release.version))
            .fix(format!("build from a ROCm release whose window holds driver {} (e.g. the hosts' own ROCm {}), or move the hosts to a driver in {}", driver.short(), host.version, window.join(", ")))
    }
}

fn cuda_driver(f: &ImageFacts, t: &ImageTarget, m: &Matrices) -> Finding {
    const ID: &str = "image.cuda-driver";
    let Some(v) = f.cuda_version() else {
        return if t.stack == Stack::Ngc || !t.cuda_arch.is_empty() {
            Finding::new(
                ID,
                AREA,
                Status::Fail,
                "no CUDA in the image: neither /usr/local/cuda nor torch names a CUDA version",
            )
            .fix("build from an NGC PyTorch image (stack: ngc), or install a CUDA build of torch")
        } else {
            Finding::new(
                ID,
                AREA,
                Status::Skip,
                "no CUDA in the image, and the stack targets no NVIDIA GPU",
            )
        };
    };
    let short = v.split('.').take(2).collect::<Vec<_>>().join(".");
    let Some(release) = m.cuda_release(v).or_else(|| m.cuda_release(&short)) else {
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!("CUDA {v} in the image is not in the matrices, so its driver floor is unknown"),
        )
        .fix("add the release to cuda.yaml (--matrices DIR)");
    };
    let (driver, whose) = match (&t.nvidia_driver, t.host_cuda) {
        (Some(d), _) => (d.clone(), format!("the hosts' driver {d}")),
        (None, Some(c)) => (
            c.min_driver_linux.clone(),
            format!(
                "driver {} (the floor of the hosts' CUDA {})",
                c.min_driver_linux, c.version
            ),
        ),
        (None, None) => {
            return Finding::new(ID, AREA, Status::Skip, format!("CUDA {v} in the image needs driver {}; host.target names no CUDA release and host.nvidia_driver is not set", release.min_driver_linux))
                .fix("set host.target: cuda-X.Y (or host.nvidia_driver) in rocmenv.yaml");
        }
    };
    if driver >= release.min_driver_linux {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "CUDA {v} in the image needs driver {}; {whose} meets it",
                release.min_driver_linux
            ),
        );
    }
    let family = m.cuda_family(release.version.major());
    match family.filter(|fam| driver >= fam.min_driver) {
        Some(fam) => Finding::new(ID, AREA, Status::Warn, format!("CUDA {v} in the image needs driver {} for full support; {whose} runs it only through minor-version compatibility (floor {})", release.min_driver_linux, fam.min_driver))
            .detail("minor-version compatibility has no PTX JIT: kernels shipped only as PTX for a newer CUDA fail to load")
            .fix(format!("move the hosts to driver {} or newer, or build from an image with an older CUDA", release.min_driver_linux)),
        None => Finding::new(ID, AREA, Status::Fail, format!("CUDA {v} in the image needs driver {}; {whose} is older", release.min_driver_linux))
            .fix(format!("move the hosts to driver {} or newer (or add the CUDA forward-compatibility package to the image), or build from an image whose CUDA the driver runs", release.min_driver_linux)),
    }
}

/// `gfx942:xnack-` → `gfx942`.
fn base_arch(a: &str) -> &str {
    a.split(':').next().unwrap_or(a)
}

/// The id of the torch arch check.
const TORCH_ARCH_ID: &str = "image.torch-arch";

/// Whether the image's torch has kernels for every GPU the image must run on.
fn torch_arch(f: &ImageFacts, t: &ImageTarget, m: &Matrices) -> Finding {
    if !f.python {
        return Finding::new(
            TORCH_ARCH_ID,
            AREA,
            Status::Fail,
            "no python3 in the image, so no torch",
        )
        .fix("build from a PyTorch image (rocm, ngc or cpu stack)");
    }
    let Some(torch) = &f.torch else {
        let why = f.torch_error.clone().unwrap_or_else(|| "no answer".into());
        return Finding::new(
            TORCH_ARCH_ID,
            AREA,
            Status::Fail,
            format!("torch does not import in the image: {why}"),
        )
        .fix("build from a PyTorch image (rocm, ngc or cpu stack), or add torch with pip");
    };
    let build = TorchBuild::new(torch);
    let TorchBuild { kind, shown, .. } = &build;
    if t.gfx.is_empty() && t.cuda_arch.is_empty() {
        return match t.stack {
            Stack::Cpu => Finding::new(TORCH_ARCH_ID, AREA, Status::Pass, format!("torch {} is a {kind} build; the cpu stack targets no GPU", torch.version)),
            s => Finding::new(TORCH_ARCH_ID, AREA, Status::Skip, format!("torch {} ({kind}) is built for: {shown}; stack {s} lists no gfx or cuda_arch to compare", torch.version))
                .fix("list the GPUs the image must run on (gfx: [gfx942] or cuda_arch: [sm_90]) in rocmenv.yaml"),
        };
    }
    let mut tally = ArchTally::default();
    if !t.gfx.is_empty() {
        tally_gfx(f, t, m, &build, &mut tally);
    }
    if !t.cuda_arch.is_empty() {
        tally_cuda(t, &build, &mut tally);
    }
    arch_verdict(&build, tally)
}

/// The image's torch build as the arch check describes it.
struct TorchBuild<'a> {
    /// What the probe read.
    torch: &'a TorchFacts,
    /// `ROCm (HIP 6.2)`, `CUDA 12.4` or `CPU-only`.
    kind: String,
    /// The compiled arch list (empty when torch reports none).
    list: Vec<String>,
    /// The list as the report shows it.
    shown: String,
}

impl<'a> TorchBuild<'a> {
    /// Describes `torch`.
    fn new(torch: &'a TorchFacts) -> Self {
        let list = torch.arch_flags.clone().unwrap_or_default();
        let shown = if list.is_empty() {
            "none".to_string()
        } else {
            list.join(" ")
        };
        TorchBuild {
            torch,
            kind: torch.kind(),
            list,
            shown,
        }
    }
}

/// What the arch check found, GPU by GPU.
#[derive(Default)]
struct ArchTally {
    /// GPUs torch has no kernels for.
    failures: Vec<String>,
    /// GPUs it covers only doubtfully.
    warnings: Vec<String>,
    /// What to do about the failures.
    fixes: Vec<String>,
    /// GPUs it has kernels for.
    ok: Vec<String>,
}

/// Checks torch's kernels against the AMD targets, counting the override target a GPU runs as.
fn tally_gfx(
    f: &ImageFacts,
    t: &ImageTarget,
    m: &Matrices,
    build: &TorchBuild,
    tally: &mut ArchTally,
) {
    let TorchBuild {
        torch,
        kind,
        list,
        shown,
    } = build;
    let names: Vec<String> = t.gfx.iter().map(|g| g.to_string()).collect();
    if torch.hip.is_none() {
        tally.failures.push(format!(
            "torch {} is a {kind} build: it has no ROCm kernels for {}",
            torch.version,
            names.join(", ")
        ));
        tally.fixes.push(format!("use a ROCm build of torch: stack: rocm (a rocm/pytorch image), or pip install torch from https://download.pytorch.org/whl/rocm{}", t.stack_rocm.or(t.host_rocm).map_or("X.Y".into(), |r| r.version.short())));
        return;
    }
    if list.is_empty() {
        tally.warnings.push(format!(
            "torch {} ({kind}) does not report the gfx targets it was built for",
            torch.version
        ));
        return;
    }
    let release = f
        .rocm_version()
        .and_then(|v| m.rocm_release(v))
        .or(t.stack_rocm)
        .or(t.host_rocm);
    for g in &t.gfx {
        // A GPU the release runs through HSA_OVERRIDE_GFX_VERSION executes the override target's kernels.
        let runs_as = release
            .and_then(|r| m.gfx_on_release(r, *g).override_target())
            .unwrap_or(*g);
        let name = runs_as.to_string();
        if list.iter().any(|a| base_arch(a) == name) {
            tally.ok.push(if runs_as == *g {
                name
            } else {
                format!("{g} (as {runs_as})")
            });
        } else {
            tally.failures.push(format!(
                "torch {} ({kind}) has no kernels for {g}{}; it is built for {shown}",
                torch.version,
                if runs_as == *g {
                    String::new()
                } else {
                    format!(" (runs as {runs_as})")
                }
            ));
            tally.fixes.push(format!("pick an image whose torch is built for {runs_as} (`rocmenv matrix gfx {g}`), or build torch with PYTORCH_ROCM_ARCH={runs_as}"));
        }
    }
}

/// Checks torch's kernels against the NVIDIA compute capabilities: a cubin, PTX only, or nothing.
fn tally_cuda(t: &ImageTarget, build: &TorchBuild, tally: &mut ArchTally) {
    let TorchBuild {
        torch,
        kind,
        list,
        shown,
    } = build;
    let names: Vec<String> = t.cuda_arch.iter().map(|c| c.sm()).collect();
    if torch.cuda.is_none() {
        tally.failures.push(format!(
            "torch {} is a {kind} build: it has no CUDA kernels for {}",
            torch.version,
            names.join(", ")
        ));
        let index = t.host_cuda.map_or("cuXYZ".into(), |c| {
            format!("cu{}{}", c.version.major(), c.version.minor())
        });
        tally.fixes.push(format!("use a CUDA build of torch: stack: ngc (an NGC PyTorch image), or pip install torch from https://download.pytorch.org/whl/{index}"));
        return;
    }
    if list.is_empty() {
        tally.warnings.push(format!(
            "torch {} ({kind}) does not report the compute capabilities it was built for",
            torch.version
        ));
        return;
    }
    for (cc, sm) in t.cuda_arch.iter().zip(&names) {
        match cuda_fit(*cc, list) {
            CudaFit::Cubin(a) => tally.ok.push(if &a == sm { a } else { format!("{sm} (as {a})") }),
            CudaFit::Ptx(a) => tally.warnings.push(format!("torch {} ({kind}) has no {sm} kernels; the driver JIT-compiles {a} PTX at first use (slow start)", torch.version)),
            CudaFit::None => {
                tally.failures.push(format!("torch {} ({kind}) has no kernels for {sm}; it is built for {shown}", torch.version));
                tally.fixes.push(format!("use a torch built for {sm} (TORCH_CUDA_ARCH_LIST={cc}), e.g. a newer NGC release"));
            }
        }
    }
}

/// The finding from the tally: any failure fails, else any warning warns, else it passes naming what is covered.
fn arch_verdict(build: &TorchBuild, tally: ArchTally) -> Finding {
    if !tally.failures.is_empty() {
        Finding::new(TORCH_ARCH_ID, AREA, Status::Fail, tally.failures.join("; "))
            .fix(tally.fixes.join("; "))
    } else if !tally.warnings.is_empty() {
        Finding::new(TORCH_ARCH_ID, AREA, Status::Warn, tally.warnings.join("; "))
    } else {
        Finding::new(
            TORCH_ARCH_ID,
            AREA,
            Status::Pass,
            format!(
                "torch {} ({}) has kernels for {}",
                build.torch.version,
                build.kind,
                tally.ok.join(", ")
            ),
        )
    }
}

/// How a torch arch list covers one compute capability.
#[derive(Debug, PartialEq, Eq)]
enum CudaFit {
    /// A cubin for it, or for a lower minor of the same major (binary compatible).
    Cubin(String),
    /// Only PTX of an older capability, which the driver compiles at first use.
    Ptx(String),
    /// Nothing runs.
    None,
}

/// `9.0` against `sm_80 sm_90 compute_90`.
fn cuda_fit(cc: ComputeCapability, list: &[String]) -> CudaFit {
    /// `sm_90a` (with `prefix` `sm_`) and its compute capability.
    fn arch<'a>(a: &'a String, prefix: &str) -> Option<(&'a String, ComputeCapability)> {
        Some((
            a,
            ComputeCapability::from_arch_number(a.strip_prefix(prefix)?)?,
        ))
    }
    let cubins = list.iter().filter_map(|a| arch(a, "sm_"));
    if let Some((a, _)) = cubins
        .filter(|(_, v)| v.major == cc.major && v.minor <= cc.minor)
        .max_by_key(|(_, v)| *v)
    {
        return CudaFit::Cubin(a.clone());
    }
    list.iter()
        .filter_map(|a| arch(a, "compute_"))
        .filter(|(_, v)| *v <= cc)
        .max_by_key(|(_, v)| *v)
        .map_or(CudaFit::None, |(a, _)| CudaFit::Ptx(a.clone()))
}

fn hsa_override(f: &ImageFacts, t: &ImageTarget, m: &Matrices) -> Finding {
    const ID: &str = "image.hsa-override";
    const VAR: &str = "HSA_OVERRIDE_GFX_VERSION";
    let baked = f.env(VAR);
    if t.gfx.is_empty() {
        return match baked {
            Some(v) => Finding::new(ID, AREA, Status::Warn, format!("{VAR}={v} is baked into the image, but the stack names no gfx target: every AMD GPU it meets runs {v} kernels"))
                .fix("remove the ENV line, or list the gfx targets in rocmenv.yaml so it can be checked"),
            None => Finding::new(ID, AREA, Status::Skip, "the stack names no AMD gfx target"),
        };
    }
    let release = f
        .rocm_version()
        .and_then(|v| m.rocm_release(v))
        .or(t.stack_rocm)
        .or(t.host_rocm);
    let Some(release) = release else {
        return Finding::new(ID, AREA, Status::Skip, "no ROCm release to compute the override for (none in the image, in the stack or in host.target)");
    };
    let names: Vec<String> = t.gfx.iter().map(|g| g.to_string()).collect();
    let plan = envplan::inputs_from_gfx(m, &names)
        .and_then(|gpus| envplan::plan(m, &gpus, Some(release), None));
    let plan = match plan {
        Ok(p) => p,
        Err(e) => {
            return Finding::new(
                ID,
                AREA,
                Status::Fail,
                format!("cannot compute the variables for {}: {e}", names.join(", ")),
            )
        }
    };
    let targets = names.join(", ");
    if plan.unusable {
        return Finding::new(
            ID,
            AREA,
            Status::Fail,
            format!(
                "{targets} cannot run ROCm {}: {}",
                release.version,
                plan.warnings.join("; ")
            ),
        )
        .fix(format!(
            "pick a ROCm release that runs {targets} (`rocmenv matrix gfx {}`)",
            names[0]
        ));
    }
    let want = plan.get(VAR);
    match (want, baked) {
        (None, None) => Finding::new(ID, AREA, Status::Pass, format!("{VAR} is not set, and {targets} needs none on ROCm {}", release.version)),
        (Some(w), Some(b)) if w == b => Finding::new(ID, AREA, Status::Pass, format!("{VAR}={b}, as {targets} needs on ROCm {}", release.version)),
        (Some(w), None) => Finding::new(ID, AREA, Status::Fail, format!("{VAR} is not set, but {targets} runs ROCm {} only as {w}", release.version))
            .fix(format!("ENV {VAR}={w} (rocmenv build --stack rocm --gfx {} bakes it in)", names[0])),
        (Some(w), Some(b)) => Finding::new(ID, AREA, Status::Fail, format!("{VAR}={b} is baked in, but {targets} needs {w} on ROCm {}", release.version))
            .fix(format!("ENV {VAR}={w}")),
        (None, Some(b)) => Finding::new(ID, AREA, Status::Fail, format!("{VAR}={b} is baked in, but {targets} runs ROCm {} natively: the override makes it run another target's kernels", release.version))
            .fix("remove the ENV line"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = "@@rocm\n@@cuda\n@@torch\n{\"version\": \"1.13.0a0\", \"cuda\": null, \"hip\": null, \"arch_flags\": null}\n";

    fn m() -> Matrices {
        Matrices::load(None).unwrap()
    }

    fn target<'m>(m: &'m Matrices, stack: Stack, gfx: &[&str], cc: &[&str]) -> ImageTarget<'m> {
        ImageTarget {
            stack,
            gfx: gfx.iter().map(|g| g.parse().unwrap()).collect(),
            cuda_arch: cc.iter().map(|c| c.parse().unwrap()).collect(),
            host_rocm: m.rocm_release("6.2"),
            host_cuda: m.cuda_release("12.4"),
            nvidia_driver: None,
            stack_rocm: None,
        }
    }

    fn find<'a>(v: &'a [Finding], id: &str) -> &'a Finding {
        v.iter().find(|f| f.id == id).unwrap()
    }

    /// Issue 22: an image of Core SDK wheels has no version file; the real probe script asks `rocm-sdk version`
    /// (here a stand-in on PATH that answers as the wheel's does), and the driver check judges that release.
    #[test]
    fn the_probe_reads_core_sdk_wheels_through_rocm_sdk() {
        if std::path::Path::new("/opt/rocm/.info/version").exists()
            || std::path::Path::new("/opt/rocm/core/.info/version").exists()
        {
            println!("SKIP: this machine has /opt/rocm version files, which the probe reads first");
            return;
        }
        let bin = tempfile::tempdir().unwrap();
        let fake = bin.path().join("rocm-sdk");
        std::fs::write(&fake, "#!/bin/sh\n[ \"$1\" = version ] && echo 10.0.0\n").unwrap();
        let mut perms = std::fs::metadata(&fake).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&fake, perms).unwrap();
        // PATH without python3: the probe says so and still reads the ROCm section.
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", PROBE_SCRIPT, PROBE_PY])
            .env("PATH", format!("{}:/nonexistent", bin.path().display()))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let f = ImageFacts::parse(&text, vec![]);
        assert_eq!(f.rocm_version(), Some("10.0.0"), "{text}");
        let m = m();
        let mut t = target(&m, Stack::Rocm, &["gfx942"], &[]);
        t.host_rocm = m.rocm_release("7.14.0");
        let v = check(&f, &t, &m);
        let d = find(&v, "image.rocm-driver");
        assert_eq!(d.status, Status::Pass, "{d:?}");
        assert!(
            d.summary
                .contains("ROCm 10.0.0 in the image runs on the hosts' amdgpu driver 31.40"),
            "{d:?}"
        );
        // A host on ROCm 6.2's driver is outside 10.0.0's window.
        t.host_rocm = m.rocm_release("6.2");
        let v = check(&f, &t, &m);
        assert_eq!(find(&v, "image.rocm-driver").status, Status::Fail);
    }

    #[test]
    fn hostile_probe_output_is_read_as_facts_never_a_panic() {
        let m = m();
        let junk = [
            String::new(),
            "@@torch\n".into(),
            "@@rocm\n\u{0}\u{7f}garbage-\n@@cuda\n{not json\n@@torch\n{\"version\": 3}\n".into(),
            "@@rocm\n@@cuda\nCUDA Version \n@@torch\n{\"version\": \"x\", \"arch_flags\": \";;; ,\"}\n".into(),
            format!("@@torch\n{}\n", "{".repeat(100_000)),
            "@@rocm\n-66\n@@cuda\n{\"cuda\": {\"version\": 12}}\n@@torch\nTraceback (most recent call last):\n".into(),
        ];
        for out in &junk {
            let f = ImageFacts::parse(out, vec![]);
            let v = check(&f, &target(&m, Stack::Rocm, &["gfx942"], &["9.0"]), &m);
            assert_eq!(v.len(), 4);
            // Nothing readable in the image is never a pass for the arch check.
            let arch = find(&v, "image.torch-arch");
            assert_ne!(arch.status, Status::Pass, "{out:.80}: {arch:?}");
        }
        let f = ImageFacts::parse(&junk[3], vec![]);
        assert_eq!(
            f.torch.unwrap().arch_flags,
            None,
            "separators alone are no arch list"
        );
        assert_eq!(ImageFacts::parse(&junk[5], vec![]).rocm_version(), None);
    }

    #[test]
    fn a_cpu_torch_for_a_gpu_target_fails_with_the_fix() {
        let m = m();
        let f = ImageFacts::parse(DEBIAN, vec![]);
        let v = check(&f, &target(&m, Stack::Rocm, &["gfx942"], &[]), &m);
        let a = find(&v, "image.torch-arch");
        assert_eq!(a.status, Status::Fail);
        assert!(
            a.summary
                .contains("CPU-only build: it has no ROCm kernels for gfx942"),
            "{}",
            a.summary
        );
        assert!(a
            .fix
            .as_ref()
            .unwrap()
            .contains("download.pytorch.org/whl/rocm6.2"));
        assert_eq!(find(&v, "image.rocm-driver").status, Status::Fail);
        let v = check(&f, &target(&m, Stack::Cpu, &[], &["9.0"]), &m);
        assert!(find(&v, "image.torch-arch")
            .summary
            .contains("no CUDA kernels for sm_90"));
        assert_eq!(find(&v, "image.cuda-driver").status, Status::Fail);
        // The cpu stack with no GPU target: everything GPU-side skips, the torch passes.
        let v = check(&f, &target(&m, Stack::Cpu, &[], &[]), &m);
        let statuses: Vec<Status> = v.iter().map(|f| f.status).collect();
        assert_eq!(
            statuses,
            [Status::Skip, Status::Skip, Status::Pass, Status::Skip]
        );
    }

    #[test]
    fn rocm_images_are_judged_by_window_arch_list_and_override() {
        let m = m();
        let out = "@@rocm\n6.2.0-66\n@@cuda\n@@torch\n{\"version\": \"2.3.0\", \"hip\": \"6.2.41133\", \"arch_flags\": \"gfx900 gfx906 gfx908 gfx90a gfx942 gfx1030 gfx1100\"}\n";
        let f = ImageFacts::parse(out, vec![]);
        let v = check(&f, &target(&m, Stack::Rocm, &["gfx942"], &[]), &m);
        assert_eq!(find(&v, "image.rocm-driver").status, Status::Pass, "{v:?}");
        assert_eq!(find(&v, "image.torch-arch").status, Status::Pass, "{v:?}");
        assert_eq!(find(&v, "image.hsa-override").status, Status::Pass, "{v:?}");
        // gfx1031 runs ROCm 6.2 as gfx1030 through the override: missing, then baked in right, then wrong.
        let t = target(&m, Stack::Rocm, &["gfx1031"], &[]);
        assert_eq!(
            find(&check(&f, &t, &m), "image.hsa-override").status,
            Status::Fail
        );
        assert_eq!(
            find(&check(&f, &t, &m), "image.torch-arch").status,
            Status::Pass
        );
        let env = vec![("HSA_OVERRIDE_GFX_VERSION".to_string(), "10.3.0".to_string())];
        let good = ImageFacts::parse(out, env);
        assert_eq!(
            find(&check(&good, &t, &m), "image.hsa-override").status,
            Status::Pass
        );
        let native = check(&good, &target(&m, Stack::Rocm, &["gfx942"], &[]), &m);
        assert!(find(&native, "image.hsa-override")
            .summary
            .contains("natively"));
        // A torch without the target's kernels.
        let t = target(&m, Stack::Rocm, &["gfx1100"], &[]);
        let narrow = ImageFacts::parse(&out.replace(" gfx1100", ""), vec![]);
        let a = check(&narrow, &t, &m);
        assert!(
            find(&a, "image.torch-arch")
                .summary
                .contains("no kernels for gfx1100"),
            "{a:?}"
        );
    }

    #[test]
    fn cuda_arch_lists_follow_binary_and_ptx_compatibility() {
        let list: Vec<String> = "sm_70 sm_80 sm_86 compute_86"
            .split(' ')
            .map(String::from)
            .collect();
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        assert_eq!(cuda_fit(cc("8.0"), &list), CudaFit::Cubin("sm_80".into()));
        assert_eq!(cuda_fit(cc("8.9"), &list), CudaFit::Cubin("sm_86".into()));
        assert_eq!(
            cuda_fit(cc("9.0"), &list),
            CudaFit::Ptx("compute_86".into())
        );
        assert_eq!(cuda_fit(cc("6.1"), &list), CudaFit::None);
    }
}
