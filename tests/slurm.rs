//! `rocmenv slurm` (issue 24): the script of every runtime as a snapshot and as examples/slurm, shellcheck-clean
//! (the batch script as bash, the per-node step as POSIX sh), bad values one line and exit 2; and, on a real
//! three-node Slurm (.ci/slurm starts node1..node3, each a slurmd in a network namespace of its own; .ci/run sets
//! ROCMENV_SLURM_TESTS=1), a CPU-stack job through Docker that passes and a job whose node check fails, both on one
//! node, and a job on all three nodes whose six reports (doctor and smoke per node) merge into one (issue 36), all
//! submitted with `sbatch --wait`.

#[path = "common/engine.rs"]
#[allow(dead_code)]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

fn script(args: &[&str]) -> String {
    let mut all = vec!["slurm"];
    all.extend_from_slice(args);
    let o = rocmenv(&all);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// One variant per runtime (and validate), as examples/slurm names them.
const VARIANTS: [(&str, &[&str]); 7] = [
    (
        "docker-cpu",
        &[
            "--command",
            "doctor-smoke",
            "--runtime",
            "docker",
            "--vendor",
            "cpu",
            "--image",
            "registry.example.com/gpu/rocmenv-cpu:1.0",
            "--results",
            "/shared/rocmenv",
        ],
    ),
    (
        "podman-amd",
        &[
            "--runtime",
            "podman",
            "--vendor",
            "amd",
            "--image",
            "docker.io/rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0",
            "--nodes",
            "4",
            "--gpus-per-node",
            "8",
            "--partition",
            "mi300x",
            "--time",
            "01:00:00",
            "--results",
            "/shared/rocmenv results",
        ],
    ),
    (
        "apptainer-amd",
        &[
            "--runtime",
            "apptainer",
            "--vendor",
            "amd",
            "--image",
            "/shared/images/rocmenv-rocm.sif",
            "--nodes",
            "2",
            "--gres",
            "gpu:mi250:4",
            "--account",
            "proj-42",
            "--reservation",
            "gpu-check",
            "--results",
            "/shared/rocmenv",
        ],
    ),
    (
        "singularity-nvidia",
        &[
            "--runtime",
            "singularity",
            "--vendor",
            "nvidia",
            "--image",
            "docker://nvcr.io/nvidia/pytorch:24.05-py3",
            "--nodelist",
            "gpu[01-04],gpu07",
            "--nodes",
            "5",
            "--results",
            "/shared/rocmenv",
        ],
    ),
    (
        "enroot-nvidia",
        &[
            "--runtime",
            "enroot",
            "--vendor",
            "nvidia",
            "--image",
            "nvcr.io/nvidia/pytorch:24.05-py3",
            "--nodes",
            "2",
            "--level",
            "standard",
            "--time",
            "2-00:00",
            "--results",
            "/shared/rocmenv",
        ],
    ),
    (
        "none-amd-doctor",
        &[
            "--command",
            "doctor",
            "--runtime",
            "none",
            "--vendor",
            "amd",
            "--nodes",
            "16",
            "--results",
            "/shared/rocmenv",
        ],
    ),
    (
        "validate-docker",
        &[
            "--command",
            "validate",
            "--runtime",
            "docker",
            "--vendor",
            "amd",
            "--config",
            "/shared/ci/rocmenv.yaml",
            "--results",
            "/shared/rocmenv",
        ],
    ),
];

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slurm")
}

/// Every runtime's script, as a snapshot and as the committed example (ROCMENV_UPDATE_EXAMPLES=1 rewrites those).
#[test]
fn every_runtime_has_its_script() {
    for (name, args) in VARIANTS {
        let text = script(args);
        insta::assert_snapshot!(name, text);
        let path = examples().join(format!("{name}.sbatch"));
        if std::env::var_os("ROCMENV_UPDATE_EXAMPLES").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            text,
            "{} differs from `rocmenv slurm`; regenerate with ROCMENV_UPDATE_EXAMPLES=1 cargo test --test slurm",
            path.display()
        );
    }
}

#[test]
fn the_runtimes_map_devices_their_own_way() {
    let apptainer = script(VARIANTS[2].1);
    assert!(apptainer.contains("exec --rocm --bind"));
    assert!(apptainer.contains("#SBATCH --gres=gpu:mi250:4\n"));
    assert!(apptainer.contains("#SBATCH --account=proj-42\n#SBATCH --reservation=gpu-check\n"));
    assert!(script(VARIANTS[3].1).contains("exec --nv --bind"));
    let enroot = script(VARIANTS[4].1);
    assert!(enroot.contains("srun --nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 --container-image=\"$ROCMENV_IMAGE\""));
    assert!(enroot.contains("#SBATCH --time=2-00:00\n"));
    let podman = script(VARIANTS[1].1);
    assert!(podman.contains("check smoke smoke --image \"$ROCMENV_IMAGE\""));
    assert!(podman.contains("podman/podman.sock"));
    assert!(podman.contains("#SBATCH --gpus-per-node=8\n#SBATCH --partition=mi300x\n"));
    assert!(podman.contains("results='/shared/rocmenv results'\n"));
    let none = script(VARIANTS[5].1);
    assert!(!none.contains("check smoke"), "doctor alone");
    assert!(
        script(VARIANTS[0].1)
            .lines()
            .all(|l| !l.starts_with("#SBATCH --gpus")),
        "no GPU for cpu"
    );
}

/// shellcheck on every script (bash) and its per-node step (sh); ROCMENV_REQUIRE_SHELLCHECK=1 makes a missing
/// shellcheck a failure.
#[test]
fn every_script_is_shellcheck_clean() {
    if which::which("shellcheck").is_err() {
        assert!(
            std::env::var_os("ROCMENV_REQUIRE_SHELLCHECK").is_none(),
            "ROCMENV_REQUIRE_SHELLCHECK is set but shellcheck is not on PATH (apt-get install shellcheck)"
        );
        eprintln!("SKIP every_script_is_shellcheck_clean: shellcheck is not on PATH (apt-get install shellcheck)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in VARIANTS {
        let text = script(args);
        let step = text
            .split("<<'STEP'\n")
            .nth(1)
            .and_then(|s| s.split("\nSTEP\n").next())
            .unwrap();
        for (file, body, shell) in [("script", text.as_str(), "bash"), ("step", step, "sh")] {
            let path = dir.path().join(format!("{name}-{file}"));
            std::fs::write(&path, body).unwrap();
            let o = Command::new("shellcheck")
                .args(["-s", shell, "-S", "style"])
                .arg(&path)
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{name} {file}:\n{}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
    }
    // shellcheck can fail: an unquoted expansion.
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "#!/bin/bash\nrm -rf $results/nodes\n").unwrap();
    let o = Command::new("shellcheck").arg(&bad).output().unwrap();
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn bad_values_are_one_line_and_exit_2() {
    let base = [
        "slurm",
        "--runtime",
        "docker",
        "--image",
        "img:1",
        "--results",
        "/r",
    ];
    for (extra, needle) in [
        (
            &["--partition", "gpu;rm -rf /"][..],
            "--partition: `gpu;rm -rf /` is not a partition name",
        ),
        (&["--time", "1h"], "--time: `1h` is not a Slurm time limit"),
        (
            &["--nodelist", "a b"],
            "--nodelist: `a b` is not a Slurm host list",
        ),
        (&["--account", "x\ny"], "--account: `x"),
        (
            &["--reservation", "$(id)"],
            "--reservation: `$(id)` is not a reservation name",
        ),
        (&["--gres", "gpu:1\n#SBATCH --x"], "--gres:"),
        (&["--nodes", "0"], "--nodes: give a node count"),
        (&["--gpus-per-node", "0"], "--gpus-per-node: give 1 to 64"),
        (
            &["--command", "validate"],
            "--config: --command validate reads rocmenv.yaml",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let o = rocmenv(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(
            err.starts_with("rocmenv: ") && err.contains(needle),
            "{extra:?}: {err}"
        );
        assert!(o.stdout.is_empty());
    }
    for (args, needle) in [
        (
            &["slurm", "--runtime", "docker", "--results", "/r"][..],
            "--image: --runtime docker needs --image",
        ),
        (
            &[
                "slurm",
                "--runtime",
                "none",
                "--image",
                "x:1",
                "--results",
                "/r",
            ],
            "--image: --runtime none",
        ),
        (
            &[
                "slurm",
                "--runtime",
                "docker",
                "--image",
                "x:1",
                "--results",
                "rel/dir",
            ],
            "--results: give an absolute path",
        ),
        (
            &[
                "slurm",
                "--runtime",
                "docker",
                "--image",
                "bad image",
                "--results",
                "/r",
            ],
            "--image",
        ),
        (
            &[
                "slurm",
                "--runtime",
                "enroot",
                "--command",
                "validate",
                "--config",
                "/c.yaml",
                "--image",
                "x:1",
                "--results",
                "/r",
            ],
            "--runtime: --command validate",
        ),
        (
            &[
                "slurm",
                "--runtime",
                "docker",
                "--vendor",
                "cpu",
                "--gres",
                "gpu:1",
                "--image",
                "x:1",
                "--results",
                "/r",
            ],
            "--gres: --vendor cpu",
        ),
    ] {
        let o = rocmenv(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// True when a real Slurm must be used (ROCMENV_SLURM_TESTS=1, set by .ci/run after it started one); otherwise
/// says SKIP.
fn slurm(test: &str) -> bool {
    if std::env::var("ROCMENV_SLURM_TESTS").as_deref() == Ok("1") {
        let o = Command::new("sinfo").args(["-h", "-o", "%T"]).output();
        assert!(
            o.as_ref().is_ok_and(|o| o.status.success()),
            "ROCMENV_SLURM_TESTS=1 but sinfo does not answer ({o:?}): .ci/slurm start"
        );
        return true;
    }
    eprintln!("SKIP {test}: no Slurm here (.ci/run starts a three-node Slurm and sets ROCMENV_SLURM_TESTS=1)");
    false
}

/// Submits `script` with `sbatch --wait`, this build's rocmenv first on the job's PATH; returns sbatch's output.
fn submit(dir: &Path, script: &str) -> Output {
    let path = dir.join("job.sbatch");
    std::fs::write(&path, script).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_rocmenv")).parent().unwrap();
    Command::new("timeout")
        .args(["600", "sbatch", "--wait", "--quiet"])
        .arg(format!("--output={}", dir.join("job.out").display()))
        .arg(&path)
        .current_dir(dir)
        .env(
            "PATH",
            format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", bin.display()),
        )
        .env_remove("ROCMENV_NODE_NAME")
        .output()
        .expect("sbatch runs")
}

fn merged(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap()
}

/// The nodes that answer (idle, running a job or ending one), as Slurm names them; .ci/slurm's are node1, node2 and
/// node3.
fn slurm_nodes() -> Vec<String> {
    let o = Command::new("sinfo")
        .args([
            "-h",
            "-N",
            "-r",
            "-t",
            "idle,mixed,allocated,completing",
            "-o",
            "%N",
        ])
        .output()
        .unwrap();
    let mut nodes: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// The node a one-node job is sent to (`--nodelist`), so the test knows which node Slurm gives it.
fn slurm_node() -> String {
    slurm_nodes()
        .into_iter()
        .next()
        .expect("ROCMENV_SLURM_TESTS=1 but no node is idle: .ci/slurm start")
}

/// The CPU stack through Docker: the smoke suite passes on the node and the merge names the node Slurm gave it.
#[test]
fn a_cpu_stack_job_passes_on_a_real_slurm() {
    if !slurm("cpu job") {
        return;
    }
    let Some(_d) = common::daemon("slurm cpu job") else {
        return;
    };
    let built = rocmenv(&["build", "--stack", "cpu", "--base", common::BASE, "--json"]);
    assert_eq!(
        built.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let image: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap();
    let image = image["tag"].as_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let node = slurm_node();
    let text = script(&[
        "--command",
        "smoke",
        "--runtime",
        "docker",
        "--vendor",
        "cpu",
        "--image",
        &image,
        "--nodelist",
        &node,
        "--results",
        results.to_str().unwrap(),
    ]);
    let o = submit(dir.path(), &text);
    let log = std::fs::read_to_string(dir.path().join("job.out")).unwrap_or_default();
    assert_eq!(
        o.status.code(),
        Some(0),
        "sbatch --wait: {}\n{log}",
        String::from_utf8_lossy(&o.stderr)
    );
    let m = merged(&results);
    let nodes = m["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{m}");
    assert_eq!(
        nodes[0]["name"],
        node.as_str(),
        "the node's name from Slurm"
    );
    assert_eq!(m["summary"]["fail"], 0, "{m}");
    let smoke: Vec<&serde_json::Value> = m["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["group"] == "smoke")
        .collect();
    assert!(smoke.len() >= 5, "{m}");
    assert!(smoke
        .iter()
        .any(|c| c["id"] == "gemm" && c["nodes"][&node]["status"] == "pass"));
    for f in ["merged.xml", "merged.html", "merged.txt"] {
        assert!(results.join(f).is_file(), "{f}");
    }
    assert!(
        log.contains("rocmenv report merge: 1 node from 1 report"),
        "{log}"
    );
}

/// doctor on a GPU-less node fails (no GPU on the PCI bus): the job exits 1 and the merge says which check.
#[test]
fn a_failing_node_check_fails_the_job() {
    if !slurm("failing job") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let node = slurm_node();
    let text = script(&[
        "--command",
        "doctor",
        "--runtime",
        "none",
        "--vendor",
        "cpu",
        "--nodelist",
        &node,
        "--results",
        results.to_str().unwrap(),
    ]);
    let o = submit(dir.path(), &text);
    let log = std::fs::read_to_string(dir.path().join("job.out")).unwrap_or_default();
    assert_eq!(
        o.status.code(),
        Some(1),
        "the job fails: {}\n{log}",
        String::from_utf8_lossy(&o.stderr)
    );
    let m = merged(&results);
    assert_eq!(m["nodes"][0]["name"], node.as_str());
    assert!(m["summary"]["fail"].as_u64().unwrap() >= 1, "{m}");
    let present = m["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "gpu.present")
        .unwrap();
    assert_eq!(present["nodes"][&node]["status"], "fail", "{present}");
    let xml = std::fs::read_to_string(results.join("merged.xml")).unwrap();
    assert!(xml.contains("<failure"), "{xml}");
}

/// True when Debian's Python on the nodes can import torch, which `smoke --host` needs; panics when it must
/// (ROCMENV_REQUIRE_TORCH=1, as .ci/run sets), prints SKIP otherwise.
fn node_torch(test: &str) -> bool {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
        );
        eprintln!(
            "SKIP {test}: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
        );
    }
    ok
}

/// Issue 36: one job on three nodes (.ci/slurm's node1..node3, one network namespace each, one machine). Every node
/// runs doctor and the smoke suite on its own Python and names its reports after the node Slurm gave it; the merge
/// holds the three nodes, each check with a cell per node, and the job's exit code is the merge's verdict.
#[test]
fn a_three_node_job_merges_one_report_per_node() {
    if !slurm("three-node job") || !node_torch("three-node job") {
        return;
    }
    let answering = slurm_nodes();
    assert!(
        answering.len() >= 3,
        "ROCMENV_SLURM_TESTS=1 but only {answering:?} answer; `.ci/slurm start` starts node1, node2 and node3"
    );
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let text = script(&[
        "--command",
        "doctor-smoke",
        "--runtime",
        "none",
        "--vendor",
        "cpu",
        "--nodes",
        "3",
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(text.contains("#SBATCH --nodes=3\n"));
    let o = submit(dir.path(), &text);
    let log = std::fs::read_to_string(dir.path().join("job.out")).unwrap_or_default();
    let m = merged(&results);
    let mut names: Vec<String> = m["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 3, "three distinct nodes: {m}");
    assert!(
        names.iter().all(|n| answering.contains(n)),
        "{names:?} are Slurm's nodes {answering:?}"
    );
    // The nodes share this machine's hostname; only SLURMD_NODENAME tells their reports apart.
    for node in &names {
        for kind in ["doctor", "smoke"] {
            let file = results.join(format!("nodes/{node}.{kind}.json"));
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            assert_eq!(report["node"], node.as_str(), "{}", file.display());
        }
    }
    let check = |id: &str| {
        m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {m}"))
            .clone()
    };
    // Every node's own results: the smoke suite's GEMM passes on each, doctor's GPU check fails on each (no GPU here).
    let (gemm, present) = (check("gemm"), check("gpu.present"));
    for node in &names {
        assert_eq!(gemm["nodes"][node]["status"], "pass", "{node}: {gemm}");
        assert_eq!(
            present["nodes"][node]["status"], "fail",
            "{node}: {present}"
        );
    }
    // The job's exit code is the merge's verdict: 1, a check failed.
    assert!(m["summary"]["fail"].as_u64().unwrap() >= 3, "{m}");
    assert_eq!(
        o.status.code(),
        Some(1),
        "sbatch --wait: {}\n{log}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        log.contains("rocmenv report merge: 3 nodes from 6 reports"),
        "{log}"
    );
    let xml = std::fs::read_to_string(results.join("merged.xml")).unwrap();
    let html = std::fs::read_to_string(results.join("merged.html")).unwrap();
    for node in &names {
        assert!(xml.contains(node.as_str()), "{node} in merged.xml");
        assert!(html.contains(node.as_str()), "{node} in merged.html");
        assert!(
            log.contains(node.as_str()),
            "{node} in the job's output: {log}"
        );
    }
}
