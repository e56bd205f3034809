//! Issue 25, item 8: each build left a `rocmenv/<stack>:<hash>` image and gc removed containers only. Against a
//! second dockerd of the test's own (never the shared one, whose images belong to others), `gc --images` removes the
//! older images of a stack, keeps the newest, one a container uses and one the user tagged, and `--all` takes the
//! newest too, and `--dry-run` lists the same and removes nothing; and `run -- nosuchcmd` in one exits 127 as `docker run` does. The images are built FROM scratch, so no base image or registry is needed. Without root, dockerd or
//! `ip` it prints SKIP, unless ROCMENV_ENGINE_TESTS=1 makes that a failure.

#[allow(dead_code)]
#[path = "common/dockerd.rs"]
mod dockerd;

use dockerd::{is_root, skip, stderr, Bridge, SecondDaemon};
use std::path::Path;
use std::process::{Command, Output};

fn rocmenv(host: &str, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("DOCKER_HOST", host)
        .env("DOCKER_CONFIG", config)
        .env_remove("DOCKER_TLS_VERIFY")
        .env_remove("DOCKER_CERT_PATH")
        .env_remove("DOCKER_CONTEXT")
        .output()
        .expect("rocmenv runs")
}

/// Builds a one-file context FROM scratch holding `text`; returns the `rocmenv/context:<hash>` tag.
fn build(host: &str, config: &Path, dir: &Path, text: &str, extra: &[&str]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("Dockerfile"), "FROM scratch\nCOPY x /x\n").unwrap();
    std::fs::write(dir.join("x"), text).unwrap();
    let mut args = vec!["build", "--context", dir.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let o = rocmenv(host, config, &args);
    assert_eq!(o.status.code(), Some(0), "build: {}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("build --json");
    doc["tag"].as_str().expect("a tag").to_string()
}

/// The daemon's images as `repository:tag` lines, sorted: `docker images` orders images made in the same second as
/// it finds them, so its order is not the same from one listing to the next.
fn images(d: &SecondDaemon) -> String {
    let o = d
        .docker()
        .args(["images", "--format", "{{.Repository}}:{{.Tag}}"])
        .output()
        .unwrap();
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn gc_images_removes_old_builds_and_keeps_the_newest_used_and_tagged() {
    const TEST: &str = "gc_images_removes_old_builds_and_keeps_the_newest_used_and_tagged";
    if !is_root() {
        return skip(TEST, "a second dockerd needs root");
    }
    for tool in ["dockerd", "docker", "ip"] {
        if which::which(tool).is_err() {
            return skip(TEST, &format!("{tool} is not installed"));
        }
    }
    let tmp = tempfile::Builder::new()
        .prefix("rocmenv-gcimg")
        .tempdir()
        .unwrap();
    let host = format!("unix://{}", tmp.path().join("docker.sock").display());
    let daemon = SecondDaemon::start(
        tmp.path(),
        &host,
        &[],
        Vec::new(),
        Bridge::create("rocmgci", 215),
    );
    let config = tmp.path().join("docker-config");
    std::fs::create_dir(&config).unwrap();
    let ctx = tmp.path().join("ctx");
    // Creation times have one-second resolution: a second apart, the order is the build order.
    let oldest = build(&host, &config, &ctx, "1", &[]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let used = build(&host, &config, &ctx, "2", &[]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let tagged = build(&host, &config, &ctx, "3", &["--tag", "mine/keep:1"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let newest = build(&host, &config, &ctx, "4", &[]);
    // A stopped container of the test's own keeps `used` in use.
    let o = daemon
        .docker()
        .args(["create", "--name", "user-container", &used, "/x"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "docker create: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Issue 25: a command the image does not have exits 127 like `docker run` (it was 125).
    let o = rocmenv(
        &host,
        &config,
        &[
            "run",
            "--vendor",
            "cpu",
            "--image",
            &newest,
            "--",
            "nosuchcmd",
        ],
    );
    assert_eq!(o.status.code(), Some(127), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rocmenv: the command did not start: "),
        "{}",
        stderr(&o)
    );

    // Issue 36: --dry-run says what gc would remove, in the same words, and removes nothing.
    let before = images(&daemon);
    let o = rocmenv(&host, &config, &["gc", "--images", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.starts_with("no rocmenv containers\nwould remove 1 image(s), up to ")
            && out.contains(&format!(
                "freed (layers kept images share stay): {oldest}\n"
            ))
            && out.contains(&format!(
                "would keep image {newest}: the newest context image"
            )),
        "{out}"
    );
    let o = rocmenv(
        &host,
        &config,
        &["gc", "--images", "--all", "--dry-run", "--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["dry_run"], true, "{doc}");
    let listed: Vec<&str> = doc["images"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["tags"][0].as_str().unwrap())
        .collect();
    assert_eq!(listed, [newest.as_str(), oldest.as_str()], "{doc}");
    assert_eq!(images(&daemon), before, "a dry run removed images");

    let o = rocmenv(&host, &config, &["gc", "--images"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.starts_with("no rocmenv containers\nremoved 1 image(s), "),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "freed (layers kept images share stay): {oldest}\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "kept image {used}: container user-container uses it"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "kept image {tagged}: it is also tagged mine/keep:1"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("kept image {newest}: the newest context image")),
        "{out}"
    );
    let left = images(&daemon);
    assert!(!left.contains(&oldest), "{left}");
    for t in [&used, &tagged, &newest] {
        assert!(left.contains(t.as_str()), "{t} went: {left}");
    }

    let o = rocmenv(&host, &config, &["gc", "--images", "--all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let removed: Vec<&str> = doc["images"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["tags"][0].as_str().unwrap())
        .collect();
    assert_eq!(removed, [newest.as_str()], "{doc}");
    let left = images(&daemon);
    assert!(
        !left.contains(&newest) && left.contains("mine/keep:1"),
        "{left}"
    );
}
