//! The command line (clap derive). `--help` is meant to teach: each flag says what it is for.

use crate::dockerfile::Stack;
use crate::report::EnvFormat;
use crate::slurm::Runtime;
use crate::suites::{Level, Mode, Precision};
use crate::target::TargetSpec;
use crate::vendor::Vendor;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Tells you, before you deploy, whether a Linux GPU host and a container stack will run PyTorch on ROCm or CUDA.
#[derive(Debug, Parser)]
#[command(name = "rocmenv", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Read the compatibility matrices from this directory instead of the built-in ones
    /// (rocm.yaml, cuda.yaml, ngc.yaml, gpus.yaml).
    #[arg(long, global = true, env = "ROCMENV_MATRICES", value_name = "DIR")]
    pub matrices: Option<PathBuf>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses this process's command line. `doctor` and `env`, the commands run at every login or on every node,
    /// parse against their own flags only: building the whole command tree (every command's flags) took a tenth of
    /// doctor's time. Anything else, and any command line with help, a version flag or an error, goes through the
    /// whole tree, so every message is the one it always was (`quick_parse_agrees_with_the_whole_tree` checks the
    /// two agree).
    pub fn parse_args() -> Result<Cli, clap::Error> {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        match Self::quick(&args) {
            Some(cli) => Ok(cli),
            None => Cli::try_parse_from(args),
        }
    }

    /// `doctor ...` and `env ...` parsed against that command's flags and the global ones; `None` for anything the
    /// whole tree must answer.
    fn quick(args: &[std::ffi::OsString]) -> Option<Cli> {
        use clap::FromArgMatches;
        let sub = match args.get(1)?.to_str()? {
            "doctor" => DoctorArgs::augment_args(clap::Command::new("doctor")),
            "env" => EnvArgs::augment_args(clap::Command::new("env")),
            _ => return None,
        };
        let asks_for_text = args.iter().skip(2).any(|a| {
            matches!(
                a.to_str(),
                Some("-h" | "--help" | "-V" | "--version" | "help")
            )
        });
        if asks_for_text {
            return None;
        }
        let mut matches = clap::Command::new("rocmenv")
            .arg(matrices_arg())
            .subcommand(sub)
            .try_get_matches_from(args)
            .ok()?;
        Cli::from_arg_matches_mut(&mut matches).ok()
    }
}

/// `--matrices` as the derive above makes it (a test compares the two).
fn matrices_arg() -> clap::Arg {
    clap::Arg::new("matrices")
        .long("matrices")
        .global(true)
        .env("ROCMENV_MATRICES")
        .value_name("DIR")
        .value_parser(clap::value_parser!(PathBuf))
        .action(clap::ArgAction::Set)
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check this host for ROCm or CUDA PyTorch, with a fix for each problem.
    ///
    /// Check this host (or a captured host tree): kernel, distro, GPUs, drivers, device nodes,
    /// ROCm/CUDA, environment, topology and Docker, each with a fix.
    ///
    /// Exit codes: 0 all passed (warnings allowed), 1 a check failed (or warned, with --strict),
    /// 2 bad input (flags, matrices, sysroot), 3 the environment could not be used.
    Doctor(DoctorArgs),
    /// Repair what doctor finds: plan, --apply, --undo.
    ///
    /// Plan concrete changes from doctor's findings and the host plan: the render and video groups for the user who
    /// runs the GPU work, and the override and visible-device variables in their login files (a wrong value replaced
    /// in its line, the plan's values persisted in /etc/profile.d/rocmenv.sh), a udev rule for /dev/kfd and the
    /// render nodes, an amdgpu blacklist line, kernel parameters, NUMA balancing, Docker's runtime and CDI specs.
    /// Each action shows the finding it fixes, the exact change (a diff or a command), whether it needs root, a new
    /// login or a reboot, and its source. Without --apply nothing changes. With --apply each edit is atomic and
    /// journalled (a tree's .rocmenv/fix/, or /var/lib/rocmenv/fix/), a second --apply changes nothing, and --undo
    /// restores every file byte for byte. Install commands (ROCm, amdgpu-dkms, nvidia-container-toolkit) are printed
    /// for you to run, never run.
    ///
    /// Exit codes: 0 the plan was printed, applied or undone; 2 bad input (flags, a bundle to change, a file that
    /// is a link or changed since the plan); 3 a file, a command or the journal failed. An action that fails is not
    /// done; the ones before it are in the journal, and --undo reverts them.
    Fix(FixArgs),
    /// Check your Dockerfiles, env files, compose files and manifests.
    ///
    /// Read Dockerfiles, env files and shell profiles (`KEY=VALUE`, `export KEY=VALUE`), compose files and the `env:`
    /// of Kubernetes manifests, with no daemon, and report what would break on a GPU: unpinned rocm/ and nvcr.io
    /// bases, an HSA_OVERRIDE_GFX_VERSION that contradicts the build targets beside it or the GPUs (--gfx, --sysroot,
    /// or this host), variables that no component of the image's release reads (with "did you mean"), a PyTorch
    /// wheel index for another ROCm or CUDA than the image's, and device variables that mix vendors or name GPUs
    /// that do not exist. Each finding has an id, a status, FILE:LINE and a fix.
    ///
    /// Exit codes: 0 nothing failed (warnings allowed), 1 a finding failed (or warned, with --strict), 2 bad input
    /// (a file that cannot be read or is not valid as its kind, an unknown --gfx or --rocm).
    Lint(LintArgs),
    /// Write a support bundle that `doctor --sysroot` reads back.
    ///
    /// Write a support bundle: exactly the files doctor reads (in the --sysroot layout), the facts no file shows
    /// (.rocmenv/recorded.yaml: user, groups, environment, device-node owners; with --deep the tools' output) and
    /// doctor's JSON report, as one .tar.zst. Read it back with `rocmenv doctor --sysroot FILE.tar.zst`.
    ///
    /// Exit codes: 0 written, 2 bad input (the output file exists without --force, a bad --sysroot),
    /// 3 the bundle could not be written.
    Collect(CollectArgs),
    /// Print the GPU variables a framework needs here (eval "$(rocmenv env)").
    ///
    /// Print the variables a framework needs for this host's GPUs (or `--gfx`): HSA_OVERRIDE_GFX_VERSION when
    /// the ROCm release lacks the GPU's target, PYTORCH_ROCM_ARCH and friends, TORCH_CUDA_ARCH_LIST, and
    /// HIP_VISIBLE_DEVICES to hide an iGPU next to a discrete card. Use: eval "$(rocmenv env)".
    ///
    /// Exit codes: 0 printed, 1 a GPU cannot run the release (or no GPU), 2 bad input.
    Env(EnvArgs),
    /// Render a Dockerfile and build context for the rocm, ngc or cpu stack.
    ///
    /// Render a Dockerfile (and with -o, a complete build context) for the rocm/pytorch, NGC PyTorch or
    /// Debian CPU stack: base image pinned from the matrices, the computed GPU variables baked in, a
    /// non-root user in video and render, OCI labels.
    ///
    /// Exit codes: 0 written, 2 bad input (a value that would change the Dockerfile's meaning, an unknown
    /// version combination with the nearest ones listed, a file -o would replace without --force), 3 the files
    /// could not be written.
    Dockerfile(Box<DockerfileArgs>),
    /// Ask the HIP and CUDA runtimes what they see, with a memory round trip.
    ///
    /// Ask the GPU runtimes themselves (CUDA through cudarc, HIP through libamdhip64) what they see: versions,
    /// devices, and a real memory round trip (plus an NVRTC vectorAdd kernel on CUDA). Needs no Python.
    ///
    /// Exit codes: 0 a runtime works, 1 a runtime failed or sees no device, 3 no runtime library could be loaded.
    Probe {
        /// Print one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Build a stack's image through the Docker Engine API.
    ///
    /// Build an image through the Docker Engine API and tag it `rocmenv/<stack>:<hash>`, the hash of the context and of
    /// the base images' ids; an unchanged context on unchanged bases is a cache hit that does not run the builder.
    /// Progress goes to stderr.
    ///
    /// Exit codes: 0 built (or cached), 1 a build step failed, 2 bad input, 3 the daemon or a base image is unavailable.
    Build(BuildArgs),
    /// Run a command in an image with this host's GPUs mapped.
    ///
    /// Run a command in an image with this host's GPUs mapped (AMD: /dev/kfd, render nodes, video/render groups, or
    /// under WSL2 /dev/dxg and the host's ROCm-on-WSL libraries; NVIDIA: a GPU device request) and the variables
    /// `rocmenv env` computes, like a long `docker run` line.
    ///
    /// Exit codes, like `docker run`: the command's own code, 124 it outlived --timeout, 125 rocmenv itself failed
    /// (bad flags, daemon unreachable, image missing), 130 Ctrl-C, 143 SIGTERM. The container is removed in every case.
    Run(RunArgs),
    /// Run the PyTorch smoke suite on this host's GPUs, in a container or not.
    ///
    /// Run the smoke suite (smoke-tests/) in a container with this host's GPUs, or on the host: environment, no
    /// silent CPU fallback, arch fit, numerics, memory, GEMM and bandwidth against the datasheet peak, and at higher
    /// levels ResNet-50 / ViT-B/16, ONNX Runtime, INT8, a profile, the batch limit, a diffusion UNet, multi-GPU
    /// copies. Works on any image: rocmenv copies the suite in. A row per test as it finishes, then the figures.
    ///
    /// Exit codes: 0 every test passed (skips allowed), 1 a test failed (a crashed, hung or silent suite is a
    /// failed test), 2 bad usage, 3 the suite could not run (no engine, image missing), 130/143 Ctrl-C/SIGTERM.
    Smoke(SmokeArgs),
    /// Run one benchmark, or tune, against the datasheet peak and a baseline.
    ///
    /// Run one benchmark with more iterations (median, p99, coefficient of variation, peak memory), or `--tune` to
    /// measure the tuning knobs one at a time; compare with the datasheet peak and a baseline.
    ///
    /// Exit codes as `rocmenv smoke`; a regression past --threshold fails only with --fail-on-regression.
    Bench(BenchArgs),
    /// Query the compatibility matrices (ROCm, gfx, kernel, CUDA, NGC, GPU).
    ///
    /// Query the compatibility matrices (the built-in ones, or --matrices DIR): a ROCm release, how a gfx
    /// target runs on every release, the releases that list a kernel, a CUDA or NGC release, or check a directory.
    ///
    /// Exit codes: 0 answered, 2 bad input (a value not in the matrices, with the nearest ones listed, or a
    /// matrix file that does not validate, with its file and line).
    Matrix(MatrixArgs),
    /// Write a commented rocmenv.yaml for this host.
    ///
    /// Write a commented rocmenv.yaml for `rocmenv validate`, filled in from this host: the stack its GPUs call for,
    /// the target doctor would pick, the GPUs' gfx targets or compute capabilities. An existing file is never replaced.
    ///
    /// Exit codes: 0 written, 2 the file exists (or bad flags), 3 it could not be written.
    Init(InitArgs),
    /// The CI gate: check, build and test each stack of rocmenv.yaml.
    ///
    /// The CI gate: for each stack in rocmenv.yaml, in order, doctor, the Dockerfile (and hadolint when it is on
    /// PATH), the build, static image checks that need no GPU (ROCm against the hosts' driver window, CUDA against
    /// their driver floor, torch's compiled arch list against the target GPUs, HSA_OVERRIDE_GFX_VERSION), then the
    /// smoke suite and benchmarks where a GPU is present. Each step is a test case; skips say why. Progress on
    /// stdout; reports to files (--junit, --json, --markdown, and GITHUB_STEP_SUMMARY when set).
    ///
    /// Exit codes: 0 every case passed (warnings and skips allowed), 1 a case failed, 2 bad config or flags,
    /// 3 the environment could not be used (daemon unreachable).
    Validate(ValidateArgs),
    /// Remove containers (and with --images, images) rocmenv left behind.
    ///
    /// Remove containers that crashed rocmenv runs left behind (those labelled rocmenv.managed=true). A container
    /// whose rocmenv run is still alive on this host (its owner's host, pid and start time are in its labels) is
    /// kept, as is a running one whose owner cannot be checked (another host, or no owner labels); the others
    /// (stopped ones, running ones whose owner is gone) are removed. --dry-run lists what would go and removes nothing.
    ///
    /// Exit codes: 0 done, 2 bad usage (--force without --all), 3 the daemon is unreachable.
    Gc {
        /// Print the removed containers as JSON (an object with "dry_run", "containers" and "images" under
        /// --images or --dry-run).
        #[arg(long)]
        json: bool,
        /// Remove every labelled container except those of runs still alive on this host: also running ones whose
        /// owner cannot be checked; with --images, the newest image of each stack too.
        #[arg(long)]
        all: bool,
        /// With --all: also the containers of live runs (running ones are killed, and their `rocmenv run` then
        /// fails with 125).
        #[arg(long, requires = "all")]
        force: bool,
        /// Also remove the images rocmenv built that no container uses, keeping the newest of each stack.
        #[arg(long)]
        images: bool,
        /// List what would be removed, and remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print a Kubernetes Job or DaemonSet that checks GPU nodes.
    ///
    /// Print a Kubernetes manifest that checks GPU nodes where they run: a Job (one node) or a DaemonSet (every GPU
    /// node) that asks for `amd.com/gpu` / `nvidia.com/gpu`, lands only on nodes the GPU operators label, reads the node
    /// through read-only host paths (`doctor --sysroot /host`), runs unprivileged, and prints one JSON document in the
    /// pod's log for `rocmenv report merge`.
    ///
    /// Exit codes: 0 printed, 2 bad input (a name that is not DNS-1123, an image that is not a reference).
    K8s(K8sArgs),
    /// Print an sbatch script that checks every node of a Slurm allocation.
    ///
    /// Print an sbatch script that checks every node of a Slurm allocation: one task per node, a GPU request in
    /// Slurm's terms, each node's JSON report named after it in --results, then one merge there (merged.json,
    /// merged.xml, merged.html). The container runtime is the site's: apptainer, podman, docker, enroot, or none.
    ///
    /// Exit codes: 0 printed, 2 bad input (one line naming the flag).
    Slurm(SlurmArgs),
    /// Merge many nodes' reports into one table, or one HTML page.
    ///
    /// Work with many reports at once: `rocmenv report merge node-*.json` puts doctor, smoke, bench and validate
    /// reports from many nodes into one table of checks by node.
    ///
    /// Exit codes: 0 no report has a failure, 1 one does, 2 a file is not a rocmenv report (or flags are wrong).
    Report(ReportArgs),
    /// Print a shell completion script.
    ///
    /// Print a shell completion script: `rocmenv completions bash > /etc/bash_completion.d/rocmenv`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// Stack and version options shared by `dockerfile` and `build`.
#[derive(Debug, Args)]
pub struct StackArgs {
    /// Which stack.
    #[arg(long, value_enum)]
    pub stack: Option<Stack>,
    /// rocm: the ROCm release (X.Y or X.Y.Z). Default: the newest whose image supports the GPUs.
    #[arg(long, value_name = "X.Y")]
    pub rocm: Option<String>,
    /// rocm: the PyTorch version (prefix: 2.3 matches 2.3.0).
    #[arg(long, value_name = "X.Y")]
    pub pytorch: Option<String>,
    /// rocm: the image's Ubuntu version.
    #[arg(long, value_name = "YY.MM")]
    pub ubuntu: Option<String>,
    /// rocm: the image's Python version.
    #[arg(long, value_name = "3.N")]
    pub python: Option<String>,
    /// The GPU's gfx target instead of detecting it (repeatable).
    #[arg(long, value_name = "gfxNNNN", conflicts_with = "sysroot")]
    pub gfx: Vec<String>,
    /// Detect GPUs and the NVIDIA driver from this host tree instead of `/`.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
    /// ngc: the release (YY.MM). Default: the newest whose CUDA the driver runs.
    #[arg(long, value_name = "YY.MM")]
    pub ngc: Option<String>,
    /// ngc: the host's NVIDIA driver version, instead of detecting it.
    #[arg(long, value_name = "VERSION")]
    pub driver: Option<String>,
    /// Start from this image: cpu, any Debian-based image with python3-torch in its apt sources (default
    /// debian:bookworm-slim); rocm and ngc, your copy (a mirror or a `docker load`ed image) of the one the
    /// matrices pick, which the variables and checks still assume. Pinned: a tag other than `latest`, or a digest.
    #[arg(long, value_name = "IMAGE")]
    pub base: Option<String>,
    /// Add a pip package (name with an optional version specifier; repeatable).
    #[arg(long, value_name = "PKG")]
    pub pip: Vec<String>,
    /// Add a Debian/Ubuntu package (repeatable).
    #[arg(long, value_name = "PKG")]
    pub apt: Vec<String>,
    /// Add ONNX Runtime with the execution provider that fits the stack.
    #[arg(long)]
    pub onnxruntime: bool,
    /// Copy rocmenv's smoke-test suites into the image.
    #[arg(long)]
    pub with_smoke_tests: bool,
    /// URL for the org.opencontainers.image.source label.
    #[arg(long, value_name = "URL")]
    pub source: Option<String>,
}

/// Flags of `rocmenv dockerfile`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["stack"])))]
pub struct DockerfileArgs {
    /// Stack and versions.
    #[command(flatten)]
    pub stack: StackArgs,
    /// Write Dockerfile, .dockerignore and the copied files into this directory instead of printing the Dockerfile.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// With -o: replace files already in DIR that rocmenv writes (Dockerfile, .dockerignore, smoke-tests/…);
    /// without it, an existing one is an error and nothing is written.
    #[arg(long, requires = "output")]
    pub force: bool,
}

/// Flags of `rocmenv env`.
#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Read the GPUs from this host tree instead of `/`.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,

    /// Compute for this gfx target instead of the detected GPUs (repeatable: one per GPU, in device order).
    #[arg(long, value_name = "gfxNNNN", conflicts_with = "sysroot")]
    pub gfx: Vec<String>,

    /// The ROCm release the framework is built for (X.Y or X.Y.Z). Default: the newest that builds the GPUs' targets.
    #[arg(long, value_name = "X.Y")]
    pub rocm: Option<String>,

    /// Use only this GPU: its number in doctor's `#` column (AMD: HIP_VISIBLE_DEVICES order; NVIDIA on an
    /// NVIDIA-only host: nvidia-smi's PCI bus order, exported with CUDA_DEVICE_ORDER=PCI_BUS_ID).
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,

    /// Output format.
    #[arg(long, value_enum, default_value = "sh")]
    pub format: EnvFormat,

    /// Add a comment per variable saying why it is set (sh, fish, dotenv).
    #[arg(long)]
    pub explain: bool,
}

/// Flags of `rocmenv collect`.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Write the bundle here. Default: rocmenv-collect-<host>-<YYYY-MM-DD>.tar.zst in the current directory
    /// (rocmenv-collect-redacted-<date>.tar.zst with --redact).
    #[arg(short = 'o', long = "output", value_name = "FILE.tar.zst")]
    pub output: Option<PathBuf>,

    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,

    /// Replace host names and user names with placeholders (host1, user1) everywhere in the bundle, and
    /// environment values that look like secrets (names with TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL, AUTH;
    /// long hex or base64 values; passwords in URLs) with [redacted]; REDACTED.txt in the bundle says what was.
    #[arg(long)]
    pub redact: bool,

    /// Also run rocminfo, rocm-smi and nvidia-smi (each with --tool-timeout) and keep their output.
    #[arg(long)]
    pub deep: bool,

    /// Seconds an external tool may run with --deep.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub tool_timeout: u64,

    /// Collect from this host tree (or bundle) instead of `/`.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
}

/// Flags of `rocmenv fix`.
#[derive(Debug, Args)]
pub struct FixArgs {
    /// Plan (and with --apply, change) this host tree instead of `/`; a bundle can be planned, not changed.
    #[arg(long, value_name = "DIR|FILE.tar.zst")]
    pub sysroot: Option<PathBuf>,

    /// Only the actions for one action id (fix.groups), finding id (devices.kfd) or area (devices, env).
    #[arg(long, value_name = "ID|AREA")]
    pub only: Option<String>,

    /// Whose access and login files to fix; default: $SUDO_USER under sudo, else who runs rocmenv (on a tree, the
    /// user it recorded).
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,

    /// Plan for this release (rocm-X.Y[.Z], cuda-X.Y, ngc-YY.MM), as doctor --target does: its variables, and the
    /// install commands for what the host lacks. Default: the host's own (its installed ROCm, its driver).
    #[arg(long, value_name = "TARGET")]
    pub target: Option<TargetSpec>,

    /// Perform the plan (root for files under /etc and for group changes on a live host).
    #[arg(long, conflicts_with = "undo")]
    pub apply: bool,

    /// Revert everything --apply did, newest first, from the journal.
    #[arg(long)]
    pub undo: bool,

    /// Print one JSON document instead of the plan.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rocmenv lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// The files: Dockerfiles, env files and shell profiles, compose files, Kubernetes manifests (the kind is taken
    /// from the name, else from the content).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Judge overrides and device numbers against these gfx targets (repeatable, in device order) instead of the
    /// host's GPUs.
    #[arg(long, value_name = "gfxNNNN", conflicts_with = "sysroot")]
    pub gfx: Vec<String>,

    /// Judge against the GPUs of this host tree or bundle instead of this host's.
    #[arg(long, value_name = "DIR|FILE.tar.zst")]
    pub sysroot: Option<PathBuf>,

    /// The ROCm release (X.Y or X.Y.Z) for files whose base image names none (env files, scripts).
    #[arg(long, value_name = "X.Y")]
    pub rocm: Option<String>,

    /// Print one JSON document instead of the report.
    #[arg(long)]
    pub json: bool,

    /// Treat warnings as failures (exit 1).
    #[arg(long)]
    pub strict: bool,
}

/// Flags of `rocmenv doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Read the host from this directory instead of `/`: a tree that mirrors /proc, /sys, /dev, /etc and /opt,
    /// such as tests/fixtures/hosts/<name>, or from a bundle `rocmenv collect` wrote (FILE.tar.zst, unpacked to a
    /// temporary directory). It needs proc/version (or proc/sys/kernel/osrelease), an os-release and
    /// sys/bus/pci; the environment, user and tool output come from its .rocmenv/recorded.yaml. Docker is not asked;
    /// tools are not run.
    #[arg(long, value_name = "DIR|FILE.tar.zst")]
    pub sysroot: Option<PathBuf>,

    /// Check against this release: rocm-X.Y[.Z], cuda-X.Y or ngc-YY.MM; a series is its newest release (cuda-12 is
    /// the newest 12.x). Without it: the ROCm installed under /opt/rocm* (when the matrices know it), else the newest
    /// release whose driver window holds the loaded amdgpu-dkms, else the newest that builds the AMD GPUs' targets;
    /// and the newest CUDA the NVIDIA driver runs. The first line of the report says which and why.
    #[arg(long, value_name = "TARGET")]
    pub target: Option<TargetSpec>,

    /// Print one JSON document (schema_version 1) instead of the report.
    #[arg(long)]
    pub json: bool,

    /// Treat warnings as failures (exit 1).
    #[arg(long)]
    pub strict: bool,

    /// Also run rocminfo and nvidia-smi (they can hang on broken drivers, so each gets --tool-timeout);
    /// under --sysroot, read their recorded output from the tree.
    #[arg(long)]
    pub deep: bool,

    /// Seconds an external tool may run with --deep.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub tool_timeout: u64,

    /// Check one area (system, gpu, driver, devices, userspace, runtime, environment, topology, health, containers,
    /// boot, tools)
    /// or one check by id (docker.daemon) or id prefix (docker).
    #[arg(long, value_name = "ID|AREA")]
    pub only: Option<String>,

    /// Fail (exit 1) when the node shows fewer than N GPUs: one that fell off the bus fails no other check.
    #[arg(long, value_name = "N")]
    pub expect_gpus: Option<usize>,
}

/// Flags of `rocmenv build`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["context", "stack"])))]
pub struct BuildArgs {
    /// Build this directory (it holds the Dockerfile); the image is tagged `rocmenv/context:<hash>`.
    #[arg(long, value_name = "DIR", conflicts_with = "stack")]
    pub context: Option<PathBuf>,

    /// Or render a stack as `rocmenv dockerfile` does and build it; the image is tagged `rocmenv/<stack>:<hash>`.
    #[command(flatten)]
    pub stack: StackArgs,

    /// Also tag the image with this name (repeatable), e.g. `--tag myteam/torch:dev`.
    #[arg(long, value_name = "NAME[:TAG]")]
    pub tag: Vec<String>,

    /// Pull the base images (FROM) even when the daemon has them, as `docker build --pull` does, so a newer image
    /// under the same tag is built on.
    #[arg(long)]
    pub pull: bool,

    /// Build from scratch: take neither an existing image for the tag nor the builder's layer cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Print one JSON document (tag, image id, cached, seconds) and no progress.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rocmenv init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The stack to write. Default: rocm with AMD GPUs, ngc with NVIDIA GPUs, else cpu.
    #[arg(long, value_enum)]
    pub stack: Option<Stack>,
    /// Where to write (`-` for stdout).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "rocmenv.yaml"
    )]
    pub output: PathBuf,
    /// Detect the GPUs from this host tree instead of `/`.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
}

/// Flags of `rocmenv validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The config file.
    #[arg(long, value_name = "FILE", default_value = "rocmenv.yaml")]
    pub config: PathBuf,
    /// Build every stack from this image instead of its own base, as `build --base` does (a mirror, or a local copy).
    #[arg(long, value_name = "IMAGE")]
    pub base: Option<String>,
    /// Validate only this stack (its name in the config; repeatable).
    #[arg(long, value_name = "NAME")]
    pub stack: Vec<String>,
    /// Write JUnit XML here: one suite per stack, one case per step or check.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the results as one JSON document (schema_version 1) here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results as a self-contained HTML page (as `rocmenv report html`) here, e.g. beside the JUnit.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write a Markdown summary here.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Fail (exit 1) when the runner shows fewer than N GPUs (doctor's `gpu.count` case).
    #[arg(long, value_name = "N")]
    pub expect_gpus: Option<usize>,
}

/// Flags of `rocmenv run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The image to run.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,

    /// Whose GPUs to map. Default: AMD when the host has AMD GPUs, else NVIDIA, else none.
    #[arg(long, value_enum)]
    pub vendor: Option<Vendor>,

    /// Map only this GPU: its number in doctor's `#` column (AMD: HIP_VISIBLE_DEVICES order; NVIDIA: nvidia-smi's).
    #[arg(long, value_name = "N")]
    pub gpu: Option<usize>,

    /// Kill the container after this many seconds (exit 124).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Memory limit, e.g. 512m or 16g (swap is disabled with it).
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,

    /// Set a variable in the container (repeatable); it wins over the computed ones.
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,

    /// Mount a host path or a named volume (repeatable), as `docker run -v`: /ABS/HOST/PATH:CONTAINER[:ro] binds an
    /// existing host path (a missing one is an error, never created); NAME:CONTAINER[:ro] mounts the named volume.
    /// A relative host path (./x, ~/x) is refused.
    #[arg(short = 'v', long = "volume", value_name = "HOST:CONTAINER[:ro]")]
    pub volume: Vec<String>,

    /// After the command exits, copy this file out of the container (to --result-to).
    #[arg(long, value_name = "PATH")]
    pub result: Option<String>,

    /// Where --result is written. Default: its file name in the current directory.
    #[arg(long, value_name = "FILE", requires = "result")]
    pub result_to: Option<PathBuf>,

    /// How confined the container is: `default` uses what the vendors document (AMD: seccomp=unconfined and
    /// --ipc=host; NVIDIA: --ipc=host); `strict` uses Docker's default seccomp profile plus only the NUMA calls
    /// (get_mempolicy, mbind, set_mempolicy) and a sized /dev/shm instead of --ipc=host. See docs/engine.md.
    #[arg(long, value_enum, default_value = "default", value_name = "LEVEL")]
    pub security: crate::engine::Security,

    /// Refuse `-e` variables that disagree with the host plan (a wrong HSA_OVERRIDE_GFX_VERSION, a visible-devices
    /// list naming a GPU the container does not have) instead of warning and passing them on.
    #[arg(long)]
    pub strict: bool,

    /// Print the equivalent `docker run` line instead of running.
    #[arg(long)]
    pub print: bool,

    /// Instead of a command: copy this rocmenv into the container and run `rocmenv probe` there, so a container
    /// that cannot see the GPU is reported before any Python runs. Exit codes as `rocmenv probe`.
    #[arg(long, conflicts_with_all = ["print", "result"])]
    pub probe: bool,

    /// With --probe: the rocmenv binary to copy in instead of this one, e.g. the portable build (glibc ≥ 2.17) for
    /// images older than the glibc this binary was linked against, or a build for the image's architecture.
    #[arg(long, value_name = "FILE", env = "ROCMENV_PROBE_BINARY")]
    pub probe_binary: Option<PathBuf>,

    /// Take the GPUs from this host tree (only with --print: the line another host would need).
    #[arg(long, value_name = "DIR", requires = "print")]
    pub sysroot: Option<PathBuf>,

    /// The command and its arguments (after `--`). Empty: the image's default command.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Where a suite runs, and where its results go (shared by `smoke` and `bench`).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["image", "host"])))]
pub struct SuiteArgs {
    /// Run in a container of this image (any image with Python and torch; the suite is copied in).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Run on this host instead of in a container (bare metal, or inside a container you are already in).
    #[arg(long, conflicts_with = "image")]
    pub host: bool,

    /// The Python interpreter that has torch. Default: `python3` in an image; on the host, the first python on PATH
    /// (python3, python, python3.N) that imports torch, named when the run starts.
    #[arg(long, value_name = "PATH")]
    pub python: Option<String>,

    /// Whose GPUs to use. Default: AMD when the host has AMD GPUs, else NVIDIA, else the CPU.
    #[arg(long, value_enum)]
    pub vendor: Option<Vendor>,

    /// Test only these GPUs (comma-separated or repeated): their numbers in doctor's `#` column (AMD: KFD order;
    /// NVIDIA: nvidia-smi's). Default: every GPU of the vendor. One GPU is the only one mapped into a container.
    #[arg(long, value_name = "N[,M]", value_delimiter = ',')]
    pub gpu: Vec<usize>,

    /// How confined the container is (with --image): `default` uses what the vendors document (AMD: seccomp=unconfined and
    /// --ipc=host; NVIDIA: --ipc=host); `strict` uses Docker's default seccomp profile plus only the NUMA calls
    /// (get_mempolicy, mbind, set_mempolicy) and a sized /dev/shm instead of --ipc=host. See docs/engine.md.
    #[arg(long, value_enum, default_value = "default", value_name = "LEVEL")]
    pub security: crate::engine::Security,

    /// Stop the suite after this many seconds; it then counts as a failed test named `timeout`.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Write the result document (JSON, schema_version 2: one test entry per device) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write JUnit XML to this file: one test case per test and device, failures with the reason and the fix.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write the result as a self-contained HTML page (as `rocmenv report html`) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Flags of `rocmenv smoke`.
#[derive(Debug, Args)]
pub struct SmokeArgs {
    /// Where it runs and where results go.
    #[command(flatten)]
    pub suite: SuiteArgs,

    /// How much to run; each level includes the ones below.
    #[arg(long, value_enum, default_value = "quick")]
    pub level: Level,

    /// Run only these tests (comma-separated or repeated), e.g. `--only numerics,gemm`.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,

    /// Fail (exit 1) when the host, or torch in the run, shows fewer than N GPUs: a node that lost one is not healthy.
    #[arg(long, value_name = "N")]
    pub expect_gpus: Option<usize>,

    /// After the level's tests, run checked matmuls and copies on every GPU at once for SECONDS (the burn-in test).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=604800))]
    pub duration: Option<u64>,
}

/// Flags of `rocmenv bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Where it runs and where results go.
    #[command(flatten)]
    pub suite: SuiteArgs,

    /// The benchmark: resnet50, vit_b_16, gemm, bandwidth, onnx or sd15_unet.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "resnet50",
        conflicts_with = "tune"
    )]
    pub model: String,

    /// Measure the tuning knobs (cudnn.benchmark / MIOpen find, TunableOp, MIOPEN_FIND_MODE, channels-last, AMP)
    /// one at a time against the default, and print those that help as variables.
    #[arg(long)]
    pub tune: bool,

    /// Batch size.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch: Option<u64>,

    /// Precision.
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,

    /// Train or infer.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,

    /// Timed iterations.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: Option<u64>,

    /// Warm-up iterations before timing.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,

    /// Compare with the figures in this baselines file (repeatable; see --save-baseline).
    #[arg(long, value_name = "FILE")]
    pub baseline: Vec<PathBuf>,

    /// Add this run's figures to a baselines file (created when missing; a figure with the same device, test, metric
    /// and parameters is replaced, the others kept), for later --baseline.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,

    /// How far below its baseline (in percent) a figure may fall before it counts as a regression.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    pub threshold: f64,

    /// Exit 1 when a figure regressed past --threshold, or when a --baseline matched no figure (otherwise a warning).
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[cfg(test)]
mod tests {
    /// clap checks the whole command tree (group names, conflicts) only when asked; ask once here.
    #[test]
    fn the_command_tree_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    /// The quick parse of `doctor` and `env` gives what the whole tree gives, or leaves the line to it.
    #[test]
    fn quick_parse_agrees_with_the_whole_tree() {
        use super::Cli;
        use clap::{CommandFactory, Parser};
        let lines: &[&[&str]] = &[
            &["doctor"],
            &["doctor", "--json"],
            &["doctor", "--json", "--sysroot", "/tmp/x", "--strict"],
            &[
                "doctor",
                "--matrices",
                "/m",
                "--deep",
                "--tool-timeout",
                "3",
            ],
            &["doctor", "--only", "gpus", "--expect-gpus", "8"],
            &["doctor", "--target", "rocm-6.2"],
            &["env"],
            &["env", "--format", "json", "--gfx", "gfx1100"],
            &[
                "env",
                "--sysroot",
                "/tmp/x",
                "--explain",
                "--matrices",
                "/m",
            ],
        ];
        for line in lines {
            let args: Vec<std::ffi::OsString> = std::iter::once("rocmenv")
                .chain(line.iter().copied())
                .map(Into::into)
                .collect();
            let whole = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            let quick = Cli::quick(&args).unwrap_or_else(|| panic!("{line:?}: not parsed quickly"));
            assert_eq!(format!("{whole:?}"), format!("{quick:?}"), "{line:?}");
        }
        // Errors, help and versions are the whole tree's.
        for line in [
            &["doctor", "--bogus"][..],
            &["doctor", "--help"],
            &["env", "-h"],
            &["doctor", "-V"],
            &["env", "--format", "nope"],
            &["doctr"],
            &["doctor", "--only", "gpus", "--only", "kernel"],
            &["--matrices", "/m", "doctor"],
        ] {
            let args: Vec<std::ffi::OsString> = std::iter::once("rocmenv")
                .chain(line.iter().copied())
                .map(Into::into)
                .collect();
            assert!(Cli::quick(&args).is_none(), "{line:?}");
        }
        let derived = Cli::command();
        let derived = derived
            .get_arguments()
            .find(|a| a.get_id() == "matrices")
            .expect("the derive has --matrices");
        // The help text is the derive's alone (the quick parse never prints help).
        let shown =
            |a: &clap::Arg| format!("{:?}", a.clone().help(None::<&str>).long_help(None::<&str>));
        let quick = clap::Command::new("rocmenv").arg(super::matrices_arg());
        let quick = quick.get_arguments().next().expect("one argument");
        assert_eq!(shown(derived), shown(quick));
    }
}

/// Which Kubernetes workload `rocmenv k8s` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum K8sKindArg {
    /// A Job: one pod on one GPU node (the scheduler's pick, or --node), its result in the Job's log.
    Job,
    /// A DaemonSet: a pod on every GPU node; the check is its init container, whose log holds the result.
    Daemonset,
}

/// `rocmenv k8s --vendor`: the GPU vendors only (a Kubernetes device plugin serves GPUs, not the CPU), each with what
/// marks its nodes.
fn gpu_vendor() -> impl clap::builder::TypedValueParser<Value = Vendor> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("amd").help("AMD: `amd.com/gpu`, nodes labelled by the AMD GPU Operator or the device plugin's labeller"),
        PossibleValue::new("nvidia").help("NVIDIA: `nvidia.com/gpu`, nodes labelled `nvidia.com/gpu.present=true` by the NVIDIA GPU Operator"),
    ])
    .try_map(|s| <Vendor as clap::ValueEnum>::from_str(&s, false))
}

/// What the pod runs (`rocmenv k8s --command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum K8sCheckArg {
    /// `rocmenv doctor --sysroot /host --json` and `rocmenv smoke --host`, merged into one document.
    DoctorSmoke,
    /// `rocmenv validate` with the rocmenv.yaml of a ConfigMap (--config-map).
    Validate,
}

/// Flags of `rocmenv k8s`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    /// job or daemonset.
    #[arg(value_enum)]
    pub kind: K8sKindArg,
    /// Whose GPU nodes.
    #[arg(long, default_value = "amd", value_parser = gpu_vendor())]
    pub vendor: Vendor,
    /// The image the pod runs: rocmenv on its PATH, and Python with torch for the smoke suite (e.g. an image
    /// `rocmenv build` made, with the rocmenv binary copied in).
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The namespace.
    #[arg(long, value_name = "NS", default_value = "default")]
    pub namespace: String,
    /// What the pod runs.
    #[arg(long = "command", value_enum, default_value = "doctor-smoke")]
    pub check: K8sCheckArg,
    /// With --command validate: the ConfigMap that holds rocmenv.yaml, mounted at /etc/rocmenv.
    #[arg(long, value_name = "NAME")]
    pub config_map: Option<String>,
    /// The smoke level (--command doctor-smoke).
    #[arg(long, value_enum, default_value = "quick")]
    pub level: Level,
    /// GPUs the pod asks for.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub gpus: u32,
    /// Run with this extra group id (repeatable): the node's `render` and `video` GIDs, which own AMD's device
    /// nodes (`getent group render video` on the node).
    #[arg(long, value_name = "GID")]
    pub group_add: Vec<u32>,
    /// job: run on this node (its kubernetes.io/hostname label).
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
}

/// What every node of a Slurm job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SlurmCheckArg {
    /// `rocmenv doctor --json`.
    Doctor,
    /// doctor, then the smoke suite.
    DoctorSmoke,
    /// The smoke suite alone (a CPU node, where doctor's GPU checks fail).
    Smoke,
    /// `rocmenv validate --config FILE` (docker, podman or none).
    Validate,
}

/// Flags of `rocmenv slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// What every node runs.
    #[arg(long = "command", value_enum, default_value = "doctor-smoke")]
    pub check: SlurmCheckArg,
    /// The container runtime the nodes have.
    #[arg(long, value_enum, default_value = "docker")]
    pub runtime: Runtime,
    /// The image: Python with torch (and rocmenv on its PATH for apptainer, singularity and enroot).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Whose GPUs.
    #[arg(long, value_enum, default_value = "amd")]
    pub vendor: Vendor,
    /// The smoke level.
    #[arg(long, value_enum, default_value = "quick")]
    pub level: Level,
    /// With --command validate: rocmenv.yaml, at a path every node reads.
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// Nodes (one task on each).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub nodes: u32,
    /// GPUs each node asks for (`#SBATCH --gpus-per-node`).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub gpus_per_node: u32,
    /// A generic resource instead (`#SBATCH --gres`, e.g. gpu:mi300x:8).
    #[arg(long, value_name = "SPEC")]
    pub gres: Option<String>,
    /// `#SBATCH --partition`.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// `#SBATCH --time` (minutes, HH:MM:SS, D-HH:MM, …).
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// `#SBATCH --nodelist` (node[01-04],gpu7).
    #[arg(long, value_name = "LIST")]
    pub nodelist: Option<String>,
    /// `#SBATCH --account`.
    #[arg(long, value_name = "A")]
    pub account: Option<String>,
    /// `#SBATCH --reservation`.
    #[arg(long, value_name = "R")]
    pub reservation: Option<String>,
    /// Where every node writes its report and the merge goes: an absolute path on a shared filesystem.
    #[arg(long, value_name = "DIR")]
    pub results: String,
    /// Write the script to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `rocmenv report`: what to do with reports.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The action.
    #[command(subcommand)]
    pub action: ReportCommand,
}

/// The actions of `rocmenv report`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge many nodes' JSON reports into one table of checks by node.
    ///
    /// Merge JSON reports (doctor --json, smoke/bench --json, validate --json, or a merge's own --format json) from
    /// many nodes into one table: a row per check or test, a column per node.
    ///
    /// Exit codes: 0 no merged check failed (warnings and skips allowed), 1 one did, 2 a file is not a rocmenv
    /// report (one line naming it) or bad flags.
    Merge(MergeArgs),
    /// Render any reports as one self-contained HTML page with charts.
    ///
    /// Any reports (doctor, smoke, bench, validate, merge) as one self-contained HTML page: a node × check grid,
    /// each node's environment, bar charts of the benchmark figures. No script, nothing loaded: it works offline.
    ///
    /// Exit codes: 0 written and no check failed, 1 written and one did, 2 a file is not a rocmenv report.
    Html(HtmlArgs),
    /// Compare bench results: a row per model, batch, precision and mode, each result against the first.
    ///
    /// Bench results (`rocmenv bench --json`) side by side: for each the node, device and image or release, and per
    /// row throughput, p50/p99 latency, peak memory and cv, with the difference against the first in percent, which
    /// is faster, and whether the difference is beyond the two runs' spread (more than their cvs added). Works across
    /// vendors and across images on one host. With --fail-on-regression it is the CI check for an image upgrade.
    ///
    /// Exit codes: 0 compared (and, with --fail-on-regression, nothing regressed), 1 a row is more than PCT percent
    /// slower than in the first result, or a later result did not measure a row the first did, 2 a file is not a
    /// bench result or bad flags.
    Compare(CompareArgs),
}

/// An output format of `rocmenv report compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormatArg {
    /// A line per result under each benchmark.
    Text,
    /// A Markdown table (for a CI step summary or a pull request).
    Markdown,
    /// One JSON document (kind "compare").
    Json,
    /// A self-contained HTML page with bars (no script).
    Html,
}

/// Flags of `rocmenv report compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The bench results; the first is the reference the others are compared with.
    #[arg(value_name = "FILE", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormatArg,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a row is more than PCT percent slower (throughput) than in the first result, or a later result
    /// did not measure a row the first did.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub fail_on_regression: Option<f64>,
}

/// A percentage from 0 to 100.
fn percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a percentage from 0 to 100 (e.g. 5)")),
    }
}

/// Flags of `rocmenv report html`.
#[derive(Debug, Args)]
pub struct HtmlArgs {
    /// The reports.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// The page to write.
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    pub output: PathBuf,
    /// The page's title.
    #[arg(long, value_name = "TEXT", default_value = "rocmenv report")]
    pub title: String,
}

/// An output format of `rocmenv report merge`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MergeFormatArg {
    /// A table for people: checks by node, then each failure with its fix.
    Text,
    /// One JSON document (kind "merge"), which merge reads back.
    Json,
    /// JUnit XML: a suite per node, a case per check or test.
    Junit,
    /// A Markdown table (for a CI step summary or a pull request).
    Markdown,
}

/// Flags of `rocmenv report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The reports to merge.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: MergeFormatArg,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the merge as a self-contained HTML page (as `rocmenv report html`).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `rocmenv matrix`: what to look up.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// The question.
    #[command(subcommand)]
    pub query: MatrixCommand,
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The questions `rocmenv matrix` answers.
#[derive(Debug, Subcommand)]
pub enum MatrixCommand {
    /// One ROCm release: stream and status, distros and kernels, gfx targets, driver window, PyTorch, images,
    /// notes, source and unconfirmed fields. `7.2` means the newest 7.2.x, `10` the newest 10.x. Without a
    /// release: every release with its stream (legacy, core-sdk) and status (production, preview).
    Rocm {
        /// The release, e.g. 10.1.0, 7.2.4 or 6.2.
        #[arg(value_name = "X.Y[.Z]")]
        release: Option<String>,
    },
    /// How a gfx target runs on each ROCm release: native, through HSA_OVERRIDE_GFX_VERSION, or not;
    /// and the GPUs that have it.
    Gfx {
        /// The target, e.g. gfx1031.
        #[arg(value_name = "gfxNNNN")]
        target: String,
    },
    /// The ROCm releases that list a kernel series, on every distro or on one (--os ubuntu:24.04).
    Kernel {
        /// The series, e.g. 6.8 (a full release such as 6.8.0-45-generic is cut to its series).
        #[arg(value_name = "X.Y")]
        series: String,
        /// Only this distro version, as os-release ID:VERSION_ID (ubuntu:24.04, rhel:9.6, sles:15.5).
        #[arg(long, value_name = "ID:VERSION")]
        os: Option<String>,
    },
    /// One CUDA release (12.4.1) or series (12.4): driver floors, minor-version compatibility, NGC images.
    Cuda {
        /// The release or series.
        #[arg(value_name = "X.Y[.Z]")]
        release: String,
    },
    /// One NGC PyTorch release: image, PyTorch, CUDA, driver floor and forward-compatibility branches.
    Ngc {
        /// The release, YY.MM.
        #[arg(value_name = "YY.MM")]
        release: String,
    },
    /// Validate the matrices (--matrices DIR, or the built-in set) and print what they hold.
    Check,
    /// Look up a GPU by name (MI300X, "RX 7900 XTX", H100) or PCI device id (0x744c, 1002:744c): its target,
    /// architecture, VRAM and peaks, and for AMD how its gfx target runs on each ROCm release.
    Gpu {
        /// A name or part of one (any case), or a PCI device id.
        #[arg(value_name = "NAME|PCI-ID")]
        query: String,
    },
}

/// The exit code for arguments clap refused: `run` exits like `docker run` (125 when its own flags are wrong),
/// every other command 2. `args` are the process arguments without the program name.
pub fn usage_exit_code<S: AsRef<str>>(args: &[S]) -> i32 {
    let mut it = args.iter().map(AsRef::as_ref);
    while let Some(a) = it.next() {
        if a == "--matrices" {
            it.next();
        } else if !a.starts_with('-') {
            return if a == "run" {
                crate::error::EXIT_RUN_FAILED
            } else {
                crate::error::EXIT_USAGE
            };
        }
    }
    crate::error::EXIT_USAGE
}

#[cfg(test)]
mod usage_tests {
    use super::usage_exit_code;

    #[test]
    fn run_refuses_flags_like_docker_run() {
        assert_eq!(usage_exit_code(&["run", "--bogus"]), 125);
        assert_eq!(usage_exit_code(&["--matrices", "run", "doctor", "--x"]), 2);
        assert_eq!(usage_exit_code(&["--matrices=m", "run", "--x"]), 125);
        assert_eq!(usage_exit_code(&["doctor", "--bogus"]), 2);
        assert_eq!(usage_exit_code(&["--bogus"]), 2);
    }
}

/// clap's usage error (`error: …`, tips, a usage block, a pointer to --help) as one line, `rocmenv: …`, as every
/// other error is: the message, its indented items and tips, and the command whose --help to read.
/// `args` (without the program name) name the subcommand when clap's message has no usage line.
pub fn one_line_usage_error<S: AsRef<str>>(rendered: &str, args: &[S]) -> String {
    use clap::CommandFactory;
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default();
    let mut msg = first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .trim()
        .to_string();
    let mut it = args.iter().map(AsRef::as_ref);
    let mut sub = None;
    while let Some(a) = it.next() {
        if a == "--matrices" {
            it.next();
        } else if !a.starts_with('-') {
            sub = Cli::command()
                .get_subcommands()
                .any(|c| c.get_name() == a)
                .then(|| a.to_string());
            break;
        }
    }
    let mut command = sub.map_or("rocmenv".to_string(), |s| format!("rocmenv {s}"));
    let (mut items, mut tips) = (Vec::new(), Vec::new());
    for l in lines {
        let t = l.trim();
        if let Some(usage) = t.strip_prefix("Usage: ") {
            let words: Vec<&str> = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            command = words.join(" ");
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            tips.push(tip.to_string());
        } else if !t.is_empty() && !t.starts_with("For more information") && l.starts_with(' ') {
            items.push(t.to_string());
        }
    }
    if !items.is_empty() {
        msg = format!("{}: {}", msg.trim_end_matches(':'), items.join(", "));
    }
    for t in tips {
        msg.push_str(&format!("; tip: {t}"));
    }
    format!("rocmenv: {msg} (see `{command} --help`)")
}
