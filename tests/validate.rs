//! `rocmenv init` and `rocmenv validate` end to end (issue 12): init writes a config that loads; validate runs the CPU
//! stack against the real daemon (the base image is the tests' local Debian, the image the one tests/suites.rs builds,
//! so a machine builds it once) and passes with JUnit, JSON and Markdown that read back; a GPU target with Debian's
//! CPU-only torch fails the static arch check; broken configs exit 2 naming file and line; a dead DOCKER_HOST exits 3.
//! Without a daemon the engine tests print SKIP, unless ROCMENV_ENGINE_TESTS=1.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

#[path = "common/schema.rs"]
mod schema;

use common::{assert_no_leftovers, daemon, BASE};
use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary in `dir` with `args`, outside any CI (no GitHub variables), with `env` added.
fn rocmenv_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.current_dir(dir)
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// True when hadolint must lint (CI); otherwise its step may be a skip.
fn hadolint_required() -> bool {
    std::env::var("ROCMENV_REQUIRE_HADOLINT").as_deref() == Ok("1")
}

/// The `(suite, classname, name, outcome)` of every JUnit case: outcome `pass`, `failure: …` or `skipped`.
fn junit_cases(xml: &str) -> Vec<(String, String, String, String)> {
    let doc = roxmltree::Document::parse(xml).expect("the JUnit parses");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let mut out = Vec::new();
    for suite in root.children().filter(|n| n.has_tag_name("testsuite")) {
        let sname = suite.attribute("name").unwrap().to_string();
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            let outcome = match case.children().find(|n| n.is_element()) {
                Some(n) if n.has_tag_name("failure") => {
                    format!("failure: {}", n.text().unwrap_or_default())
                }
                Some(n) if n.has_tag_name("skipped") => "skipped".into(),
                _ => "pass".into(),
            };
            out.push((
                sname.clone(),
                case.attribute("classname").unwrap().to_string(),
                case.attribute("name").unwrap().to_string(),
                outcome,
            ));
        }
    }
    out
}

fn case<'a>(
    cases: &'a [(String, String, String, String)],
    suite: &str,
    name: &str,
) -> &'a (String, String, String, String) {
    cases
        .iter()
        .find(|c| c.0 == suite && c.2 == name)
        .unwrap_or_else(|| panic!("no case {name} in suite {suite}: {cases:?}"))
}

/// Issue 12: `init --stack cpu` then `validate --base <local Debian>` passes, and the JUnit has a suite for the stack
/// with a case per step and check.
#[test]
fn init_then_validate_the_cpu_stack_passes_with_junit_json_and_markdown() {
    let Some(d) = daemon("init_then_validate") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = rocmenv_in(dir.path(), &["init", "--stack", "cpu"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        text(&o.stdout).starts_with("wrote rocmenv.yaml (stack cpu"),
        "{}",
        show(&o)
    );
    let cfg =
        rocmenv::config::Config::load(&dir.path().join("rocmenv.yaml")).expect("init's file loads");
    assert_eq!(cfg.file.stacks[0].name, "cpu");
    let validate = [
        "validate",
        "--base",
        BASE,
        "--junit",
        "out/v.xml",
        "--json",
        "v.json",
        "--markdown",
        "v.md",
    ];
    let o = rocmenv_in(dir.path(), &validate, &[("ROCMENV_NODE_NAME", "ci-node")]);
    // `out/` does not exist: reports go where asked, so the run fails to write there and says so.
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    assert!(text(&o.stderr).contains("out/"), "{}", show(&o));
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let o = rocmenv_in(dir.path(), &validate, &[("ROCMENV_NODE_NAME", "ci-node")]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with(
            "rocmenv validate: stack cpu (cpu stack, FROM rocmenv-test/bookworm:base)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("wrote JUnit to out/v.xml"), "{stdout}");
    let cases = junit_cases(&std::fs::read_to_string(dir.path().join("out/v.xml")).unwrap());
    assert!(
        cases.iter().all(|c| c.0 == "cpu"),
        "one suite, the stack's: {cases:?}"
    );
    for (name, class) in [
        ("dockerfile.render", "cpu.dockerfile"),
        ("build.image", "cpu.build"),
        ("image.torch-arch", "cpu.image"),
    ] {
        let c = case(&cases, "cpu", name);
        assert_eq!((c.1.as_str(), c.3.as_str()), (class, "pass"), "{c:?}");
    }
    for name in [
        "image.rocm-driver",
        "image.cuda-driver",
        "image.hsa-override",
    ] {
        assert_eq!(case(&cases, "cpu", name).3, "skipped");
    }
    let lint = &case(&cases, "cpu", "dockerfile.hadolint").3;
    if hadolint_required() {
        assert_eq!(lint, "pass");
    }
    assert!(
        cases.iter().any(|c| c.1 == "cpu.doctor"),
        "doctor's checks are cases: {cases:?}"
    );
    assert!(
        cases.iter().all(|c| !c.3.starts_with("failure")),
        "{cases:?}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("v.json")).unwrap()).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["kind"], "validate");
    // The report a real validate wrote holds to the schema CI systems read it by (issue 24).
    schema::valid(
        "init_then_validate_the_cpu_stack",
        "validate",
        &[dir.path().join("v.json")],
    );
    assert_eq!(json["node"], "ci-node");
    assert_eq!(json["config"], "rocmenv.yaml");
    assert_eq!(json["rocmenv_version"], env!("CARGO_PKG_VERSION"));
    let stack = &json["stacks"][0];
    assert_eq!(
        (stack["name"].as_str(), stack["stack"].as_str()),
        (Some("cpu"), Some("cpu"))
    );
    assert!(
        stack["image"].as_str().unwrap().starts_with("rocmenv/cpu:"),
        "{stack}"
    );
    let jcases = stack["cases"].as_array().unwrap();
    assert_eq!(
        jcases.len(),
        cases.len(),
        "JSON and JUnit hold the same cases"
    );
    let count = |s: &str| jcases.iter().filter(|c| c["status"] == s).count();
    assert_eq!(
        json["summary"],
        serde_json::json!({"pass": count("pass"), "warn": count("warn"), "fail": count("fail"), "skip": count("skip")})
    );
    let steps: Vec<&str> = jcases.iter().map(|c| c["step"].as_str().unwrap()).collect();
    let mut order = steps.clone();
    order.dedup();
    let want: Vec<&str> = ["doctor", "dockerfile", "hadolint", "lint", "build", "image"]
        .into_iter()
        .chain(std::iter::once("smoke"))
        .collect();
    assert_eq!(order, want, "steps run in order");
    // Issue 35: lint reads the rendered Dockerfile, and finds nothing in what rocmenv wrote.
    let lint: Vec<&serde_json::Value> = jcases.iter().filter(|c| c["step"] == "lint").collect();
    assert_eq!(lint.len(), 1, "{jcases:?}");
    assert_eq!(lint[0]["status"], "pass", "{jcases:?}");
    let md = std::fs::read_to_string(dir.path().join("v.md")).unwrap();
    assert!(md.starts_with("## rocmenv validate: ✅ passed"), "{md}");
    // Issue 25: the cpu stack's smoke was skipped ("no GPU on this runner") though it runs on the CPU.
    let smoke: Vec<&serde_json::Value> = jcases.iter().filter(|c| c["step"] == "smoke").collect();
    assert!(!smoke.is_empty(), "{jcases:?}");
    assert!(
        smoke.iter().any(|c| c["status"] == "pass")
            && smoke.iter().all(|c| !c["summary"]
                .as_str()
                .unwrap_or("")
                .contains("no GPU on this runner")),
        "{smoke:?}"
    );
    // Issue 25: --expect-gpus fails a runner that shows fewer GPUs, here none; doctor's other cases stay softened.
    let o = rocmenv_in(
        dir.path(),
        &[
            "validate",
            "--base",
            BASE,
            "--expect-gpus",
            "1",
            "--json",
            "e.json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("e.json")).unwrap()).unwrap();
    let cases = json["stacks"][0]["cases"].as_array().unwrap();
    let count = cases
        .iter()
        .find(|c| c["id"] == "gpu.count")
        .expect("a gpu.count case");
    assert_eq!(count["status"], "fail", "{count}");
    assert_eq!(
        cases.iter().filter(|c| c["status"] == "fail").count(),
        1,
        "only the GPU count fails: {cases:?}"
    );
    assert_no_leftovers(&d.engine);
}

const GPU_CONFIG: &str = "schema_version: 1
host:
  target: rocm-6.2
stacks:
  - name: mi300
    stack: cpu
    gfx: [gfx942]
  - name: h100
    stack: cpu
    cuda_arch: [sm_90]
    target: cuda-12.4
";

/// Issue 12: a stack that must run on gfx942 or sm_90 but carries Debian's CPU-only torch fails the static arch
/// check (exit 1) with the message and fix, in the progress, the JUnit, the annotations and the step summary.
#[test]
fn a_gpu_target_with_a_cpu_only_torch_fails_the_static_arch_check() {
    let Some(d) = daemon("gpu_target_cpu_torch") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gpu.yaml"), GPU_CONFIG).unwrap();
    let summary = dir.path().join("summary.md");
    let o = rocmenv_in(
        dir.path(),
        &[
            "validate", "--config", "gpu.yaml", "--base", BASE, "--junit", "v.xml",
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("✗ image      image.torch-arch: torch 1.13.0a0 is a CPU-only build: it has no ROCm kernels for gfx942"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: use a ROCm build of torch"),
        "{stdout}"
    );
    assert!(
        stdout.contains("::error title=rocmenv validate mi300 image.torch-arch::torch 1.13.0a0 is a CPU-only build: it has no ROCm kernels for gfx942%0Afix: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("::error title=rocmenv validate h100 image.torch-arch::torch 1.13.0a0 is a CPU-only build: it has no CUDA kernels for sm_90"),
        "{stdout}"
    );
    let cases = junit_cases(&std::fs::read_to_string(dir.path().join("v.xml")).unwrap());
    let arch = &case(&cases, "mi300", "image.torch-arch").3;
    assert!(
        arch.starts_with("failure: torch 1.13.0a0 is a CPU-only build"),
        "{arch}"
    );
    assert!(arch.contains("\nfix: use a ROCm build of torch"), "{arch}");
    assert!(case(&cases, "h100", "image.torch-arch")
        .3
        .contains("whl/cu124"));
    assert!(case(&cases, "mi300", "image.rocm-driver")
        .3
        .starts_with("failure: no ROCm in the image"));
    assert!(case(&cases, "h100", "image.cuda-driver")
        .3
        .starts_with("failure: no CUDA in the image"));
    // gfx942 runs ROCm 6.2 natively: nothing to override, and nothing is baked in.
    assert_eq!(case(&cases, "mi300", "image.hsa-override").3, "pass");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("## rocmenv validate: ❌ failed"), "{md}");
    assert!(md.contains("### h100 (cpu stack)"), "{md}");
    // allow_warn turns exactly the named failures into warnings.
    let lenient = format!(
        "{GPU_CONFIG}allow_warn: [image.torch-arch, image.rocm-driver, image.cuda-driver]\n"
    );
    std::fs::write(dir.path().join("gpu.yaml"), lenient).unwrap();
    let o = rocmenv_in(
        dir.path(),
        &["validate", "--config", "gpu.yaml", "--base", BASE],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        text(&o.stdout)
            .contains("! image      image.torch-arch: torch 1.13.0a0 is a CPU-only build"),
        "{}",
        show(&o)
    );
    assert_no_leftovers(&d.engine);
}

/// Issue 12: the Markdown summary of a real run, with what differs between machines and runs redacted: durations,
/// the image hash, doctor's host-specific rows and the counts they change.
#[test]
fn the_markdown_summary_snapshot() {
    let Some(_d) = daemon("markdown_snapshot") else {
        return;
    };
    if which_hadolint().is_none() {
        assert!(
            !hadolint_required(),
            "ROCMENV_REQUIRE_HADOLINT=1 but hadolint is not on PATH"
        );
        eprintln!("SKIP markdown snapshot: hadolint is not on PATH, so its row would differ");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gpu.yaml"), GPU_CONFIG).unwrap();
    let o = rocmenv_in(
        dir.path(),
        &[
            "validate",
            "--config",
            "gpu.yaml",
            "--base",
            BASE,
            "--stack",
            "mi300",
            "--markdown",
            "v.md",
        ],
        &[("ROCMENV_NODE_NAME", "ci-node")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let md = std::fs::read_to_string(dir.path().join("v.md")).unwrap();
    insta::assert_snapshot!("validate-markdown-gpu-target-cpu-torch", redact(&md));
}

fn which_hadolint() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("hadolint"))
            .find(|f| f.is_file())
    })
}

/// Durations → `[time]`, `rocmenv/cpu:<hash>` → `rocmenv/cpu:[hash]`, doctor rows → one `[doctor rows]` line, the
/// counts line → `[counts]`, the build row's cached/built wording → `[built or cached]`.
fn redact(md: &str) -> String {
    let mut out = Vec::new();
    let mut doctor_seen = false;
    for line in md.lines() {
        let mut l = line.to_string();
        if l.starts_with("| doctor |") {
            if !doctor_seen {
                out.push("| doctor | [doctor rows] |".to_string());
                doctor_seen = true;
            }
            continue;
        }
        if let Some(i) = l.find(" passed, ") {
            if l[..i].chars().all(|c| c.is_ascii_digit()) {
                let rest = l
                    .find(" · ")
                    .map(|j| l[j..].to_string())
                    .unwrap_or_default();
                l = format!("[counts]{rest}");
            }
        }
        if let Some(i) = l.find("rocmenv/cpu:") {
            let start = i + "rocmenv/cpu:".len();
            let end = l[start..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .map_or(l.len(), |e| start + e);
            l.replace_range(start..end, "[hash]");
        }
        if l.starts_with("| ") && l.ends_with(" s |") {
            let cut = l[..l.len() - 2].rfind("| ").unwrap();
            l = format!("{}| [time] |", &l[..cut]);
        }
        if l.starts_with("| build |") {
            l = "| build | `build.image` | ✅ pass | [built or cached] rocmenv/cpu:[hash] | [time] |".into();
        }
        out.push(l);
    }
    out.join("\n") + "\n"
}

/// Issue 12: unknown keys, wrong types and values that would reach a Dockerfile exit 2 with one line naming the file,
/// line and column; nothing is built (no daemon is asked: DOCKER_HOST points nowhere).
#[test]
fn broken_configs_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n    colour: blue\n",
            "bad.yaml:5:5: stacks[0]: unknown field `colour`, expected one of",
        ),
        (
            "schema_version: 1\nsmoke:\n  timeout: soon\nstacks:\n  - name: cpu\n    stack: cpu\n",
            "bad.yaml:3:12: smoke.timeout: invalid type: string \"soon\", expected u64",
        ),
        (
            "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n    pip: [numpy, \"torch; rm -rf /\"]\n",
            "bad.yaml:5:19: stack cpu: pip: `torch; rm -rf /` contains `;`",
        ),
        (
            "schema_version: 1\nstacks:\n  - name: mi300\n    stack: rocm\n    rocm: \"9.9\"\n    gfx: [gfx942]\n",
            "bad.yaml:5:5: stack mi300: rocm/gfx: no rocm/pytorch image or ROCm wheels for ROCm 9.9",
        ),
        (
            "schema_version: 1\nhost:\n  target: rocm-6.2\n  driver: 550\nstacks: []\n",
            "bad.yaml:4:3: host: unknown field `driver`",
        ),
        // Issue 35: a file for lint that cannot be read is refused before anything is built, at its config line.
        (
            "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n    lint: [deploy/missing.env]\n",
            "bad.yaml:5:5: stack cpu: lint: ",
        ),
        // Issue 25: an unclosed `[` at the end was reported on line 6 of a 5-line file.
        (
            "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n    pip: [numpy\n",
            "bad.yaml:5:16: did not find expected ',' or ']'",
        ),
    ];
    for (yaml, want) in cases {
        std::fs::write(dir.path().join("bad.yaml"), yaml).unwrap();
        let o = rocmenv_in(
            dir.path(),
            &["validate", "--config", "bad.yaml"],
            &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
        );
        assert_eq!(o.status.code(), Some(2), "{yaml}\n{}", show(&o));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("rocmenv: {want}")),
            "want {want}\n got {err}"
        );
    }
    let o = rocmenv_in(dir.path(), &["validate", "--config", "missing.yaml"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("missing.yaml: no such file; write one with `rocmenv init`"));
}

/// Issue 12: init never replaces a file (exit 2, naming it, contents kept); `-o -` prints a file that loads.
#[test]
fn init_refuses_to_overwrite_and_prints_with_dash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocmenv.yaml");
    std::fs::write(&path, "mine\n").unwrap();
    let o = rocmenv_in(dir.path(), &["init", "--stack", "cpu"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert_eq!(
        text(&o.stderr),
        "rocmenv: rocmenv.yaml: already exists; rocmenv init does not replace it (edit it, remove it, or write elsewhere with -o FILE)\n"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left: {leftovers:?}"
    );
    for stack in ["rocm", "ngc", "cpu"] {
        let o = rocmenv_in(dir.path(), &["init", "--stack", stack, "-o", "-"], &[]);
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        let c = rocmenv::config::Config::parse(Path::new("stdout.yaml"), &text(&o.stdout))
            .unwrap_or_else(|e| panic!("{e}\n{}", text(&o.stdout)));
        assert_eq!(c.file.stacks[0].name, stack);
    }
}

/// Issue 12: a DOCKER_HOST where nothing answers is "could not run": exit 3, one line naming the endpoint.
#[test]
fn a_dead_docker_host_exits_3_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rocmenv.yaml"),
        "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n",
    )
    .unwrap();
    let o = rocmenv_in(
        dir.path(),
        &["validate", "--base", BASE],
        &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
    );
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("rocmenv: no container engine answers at unix:///nonexistent/docker.sock"),
        "{err}"
    );
}

/// Issue 12: init fills the file in from the host it reads: a captured MI300X host gets the rocm stack with gfx942 and
/// its installed ROCm as the target; a captured H100 host the ngc stack with sm_90 and its driver.
#[test]
fn init_matches_the_detected_host() {
    let hosts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    let dir = tempfile::tempdir().unwrap();
    for (host, want) in [
        (
            "mi300x-x4-ubuntu2204",
            &[
                "target: rocm-6.2.0",
                "stack: rocm",
                "rocm: \"6.2\"",
                "gfx: [gfx942]",
            ][..],
        ),
        (
            "h100-x8-ubuntu2204",
            &[
                "target: cuda-12.6",
                "nvidia_driver: \"565.57.01\"",
                "stack: ngc",
                "cuda_arch: [sm_90]",
            ][..],
        ),
    ] {
        let tree = hosts.join(host);
        let o = rocmenv_in(
            dir.path(),
            &["init", "--sysroot", tree.to_str().unwrap(), "-o", "-"],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        let yaml = text(&o.stdout);
        for w in want {
            assert!(
                yaml.lines().any(|l| l.trim_start().starts_with(w)),
                "{host}: no `{w}` in\n{yaml}"
            );
        }
        rocmenv::config::Config::parse(Path::new("x.yaml"), &yaml).unwrap();
    }
}

/// `rocmenv validate --base BASE --json` on `yaml` in a fresh directory: checks the exit code, returns the report.
fn validate_on_base(yaml: &str, code: i32) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rocmenv.yaml"), yaml).unwrap();
    let o = rocmenv_in(
        dir.path(),
        &["validate", "--base", BASE, "--json", "v.json"],
        &[],
    );
    assert_eq!(o.status.code(), Some(code), "{}", show(&o));
    serde_json::from_str(&std::fs::read_to_string(dir.path().join("v.json")).unwrap()).unwrap()
}

/// Issue 12: a build step that fails is a failed case with the step named (exit 1), and the image and smoke steps
/// are skips that say there is no image; no container is left.
#[test]
fn a_failed_build_is_a_failed_case_and_skips_the_image_steps() {
    let Some(d) = daemon("failed_build") else {
        return;
    };
    let json = validate_on_base(
        "schema_version: 1\nstacks:\n  - name: cpu\n    stack: cpu\n    apt: [rocmenv-no-such-package]\n",
        1,
    );
    let stack = &json["stacks"][0];
    assert_eq!(stack["image"], serde_json::Value::Null);
    let cases = stack["cases"].as_array().unwrap();
    let build = cases.iter().find(|c| c["id"] == "build.image").unwrap();
    assert_eq!(build["status"], "fail");
    let summary = build["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("the build failed at Step "),
        "{summary}"
    );
    assert!(
        summary.contains("returned a non-zero code: 100"),
        "{summary}"
    );
    assert!(build["fix"].as_str().unwrap().contains("pip/apt"));
    let after: Vec<(&str, &str)> = cases
        .iter()
        .skip_while(|c| c["id"] != "build.image")
        .skip(1)
        .map(|c| (c["id"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(after, [("image", "skip"), ("smoke", "skip")]);
    assert_no_leftovers(&d.engine);
}

/// Issue 12: a rocm stack for gfx1031 built on a bare Debian (no ROCm, no Python): the build bakes the override in,
/// and the image checks read it back from the image's env (right for gfx1031 on ROCm 6.2), and find neither ROCm nor
/// torch inside.
#[test]
fn a_rocm_stack_on_a_bare_base_has_the_override_but_no_rocm_or_torch() {
    let Some(d) = daemon("rocm_stack_bare_base") else {
        return;
    };
    let json = validate_on_base(
        "schema_version: 1\nhost:\n  target: rocm-6.2\nstacks:\n  - name: rx6700\n    stack: rocm\n    rocm: \"6.2\"\n    gfx: [gfx1031]\n",
        1,
    );
    let cases = json["stacks"][0]["cases"].as_array().unwrap();
    let get = |id: &str| {
        let c = cases
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}"));
        (
            c["status"].as_str().unwrap().to_string(),
            c["summary"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        get("image.hsa-override"),
        (
            "pass".into(),
            "HSA_OVERRIDE_GFX_VERSION=10.3.0, as gfx1031 needs on ROCm 6.2.4".into()
        )
    );
    assert_eq!(
        get("image.torch-arch"),
        ("fail".into(), "no python3 in the image, so no torch".into())
    );
    assert_eq!(get("image.rocm-driver").0, "fail");
    assert_eq!(get("build.image").0, "pass");
    assert_no_leftovers(&d.engine);
}
