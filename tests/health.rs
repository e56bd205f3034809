//! Issue 37, items 1–3: node health. Each fault is a healthy fixture copied to a temporary directory with one fault
//! file added (in the kernel's documented format, or a real `nvidia-smi -q -x` capture edited in one value); the fault
//! turns the right check to fail or warn, naming the GPU by doctor's number and the file it read, and the healthy
//! trees show none of it. `collect` then `doctor --sysroot` on the bundle gives the same findings.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

/// A copy of fixture `name` that a test may change.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join(name);
    let ok = Command::new("cp")
        .args([
            "-a",
            fixture(name).to_str().unwrap(),
            tree.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    (d, tree)
}

fn write(tree: &Path, rel: &str, text: &str) {
    let p = tree.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// `doctor --json` on `tree` (`--deep` when asked): its exit code and document.
fn doctor(tree: &Path, deep: bool) -> (i32, Value) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(["doctor", "--json", "--sysroot", tree.to_str().unwrap()]);
    if deep {
        c.arg("--deep");
    }
    let o = c.output().unwrap();
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    (o.status.code().unwrap(), doc)
}

/// The finding `id` about `subject` (a PCI address), or the only one with that id.
fn finding<'a>(doc: &'a Value, id: &str, subject: Option<&str>) -> &'a Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id && subject.is_none_or(|s| c["subject"] == s))
        .unwrap_or_else(|| panic!("no {id} {subject:?} in {}", doc["checks"]))
}

/// Asserts the finding's status and that its summary holds each of `words`.
fn says(doc: &Value, id: &str, subject: Option<&str>, status: &str, words: &[&str]) {
    let f = finding(doc, id, subject);
    assert_eq!(f["status"], status, "{f}");
    let summary = f["summary"].as_str().unwrap();
    for w in words {
        assert!(summary.contains(w), "`{w}` not in `{summary}`");
    }
}

/// The new checks' findings that warn or fail.
fn health_problems(doc: &Value) -> Vec<Value> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let id = c["id"].as_str().unwrap();
            (id.starts_with("health.") || id == "pcie.aer")
                && c["status"] != "pass"
                && c["status"] != "skip"
        })
        .cloned()
        .collect()
}

/// The h100 tree's GPUs, in doctor's order (PCI bus order).
const H100_BUSES: [&str; 8] = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"];

/// A recorded `nvidia-smi -q -x` for the h100 tree: the real A10G capture's `<gpu>` element once per GPU, each with
/// that GPU's bus id, and `edit` applied to GPU `n`'s copy.
fn record_nvidia_xml(tree: &Path, n: usize, edit: impl Fn(&str) -> String) {
    let capture = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/captures/nvidia-smi_-q-x_a10g.txt"),
    )
    .unwrap();
    let xml = capture.split_once('\n').unwrap().1; // its `# source:` line
    let (start, end) = (
        xml.find("    <gpu id=").unwrap(),
        xml.rfind("</gpu>").unwrap() + "</gpu>\n".len(),
    );
    let gpu = &xml[start..end];
    let mut gpus = String::new();
    for (i, bus) in H100_BUSES.iter().enumerate() {
        let one = gpu.replace(
            "00000000:00:1E.0",
            &format!("00000000:{}:00.0", bus.to_uppercase()),
        );
        gpus.push_str(&if i == n { edit(&one) } else { one });
    }
    write(
        tree,
        ".rocmenv/nvidia-smi-q-x.txt",
        &format!("{}{gpus}{}", &xml[..start], &xml[end..]),
    );
    let mut rec = fs::read_to_string(tree.join(".rocmenv/recorded.yaml")).unwrap();
    rec.push_str("  \"nvidia-smi -q -x\": nvidia-smi-q-x.txt\n");
    fs::write(tree.join(".rocmenv/recorded.yaml"), rec).unwrap();
}

#[test]
fn healthy_trees_show_no_health_problem() {
    for name in [
        "mi300x-x4-ubuntu2204",
        "h100-x8-ubuntu2204",
        "rtx4090-driver-535",
        "no-gpu-debian12",
    ] {
        let (code, doc) = doctor(&fixture(name), true);
        assert_eq!(health_problems(&doc), Vec::<Value>::new(), "{name}");
        // rtx4090-driver-535 and no-gpu-debian12 fail on purpose (a driver too old, no GPU), not on health.
        assert!(
            code == 0 || name == "rtx4090-driver-535" || name == "no-gpu-debian12",
            "{name}: exit {code}"
        );
    }
    // The h100 tree with a healthy recorded `nvidia-smi -q -x`: every GPU passes.
    let (_d, tree) = copy("h100-x8-ubuntu2204");
    record_nvidia_xml(&tree, 0, str::to_string);
    let (code, doc) = doctor(&tree, true);
    assert_eq!(code, 0);
    for (i, bus) in H100_BUSES.iter().enumerate() {
        let sub = format!("0000:{bus}:00.0");
        says(
            &doc,
            "health.nvidia-memory",
            Some(&sub),
            "pass",
            &[&format!("GPU {i} (")],
        );
    }
    // Without --deep it is a skip that says why.
    let (_, doc) = doctor(&tree, false);
    says(&doc, "health.nvidia-memory", None, "skip", &["--deep"]);
}

#[test]
fn amd_uncorrectable_ecc_fails_naming_the_gpu_and_the_file() {
    // The committed fault fixture: mi300x-x4-ubuntu2204 plus GPU 1's ras/umc_err_count with `ue: 2`.
    let (code, doc) = doctor(&fixture("mi300x-x4-ras-uncorrectable"), false);
    assert_eq!(code, 1);
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:46:00.0"),
        "fail",
        &[
            "GPU 1 (AMD Instinct MI300X, 0000:46:00.0)",
            "2 uncorrectable ECC errors",
            "/sys/bus/pci/devices/0000:46:00.0/ras/umc_err_count",
        ],
    );
    assert_eq!(
        health_problems(&doc).len(),
        1,
        "{:?}",
        health_problems(&doc)
    );
    // Correctable errors alone pass when there is no uptime to rate them, and warn above 10 an hour since boot.
    let (_d, tree) = copy("mi300x-x4-ubuntu2204");
    write(
        &tree,
        "sys/bus/pci/devices/0000:26:00.0/ras/umc_err_count",
        "ue: 0\nce: 50\n",
    );
    write(
        &tree,
        "sys/bus/pci/devices/0000:26:00.0/ras/gfx_err_count",
        "ue: 0\nce: 0\n",
    );
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:26:00.0"),
        "pass",
        &["GPU 0 (", "50 correctable errors (no uptime"],
    );
    write(&tree, "proc/uptime", "3600.00 7000.00\n");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:26:00.0"),
        "warn",
        &["GPU 0 (", "50 correctable ECC errors since boot"],
    );
    // What the driver prints when it cannot query, and junk, are "cannot read" skips.
    write(
        &tree,
        "sys/bus/pci/devices/0000:46:00.0/ras/umc_err_count",
        "Query currently inaccessible\n",
    );
    write(
        &tree,
        "sys/bus/pci/devices/0000:65:00.0/ras/umc_err_count",
        "\u{0}\u{1}ue: lots\n",
    );
    let (code, doc) = doctor(&tree, false);
    assert_eq!(code, 0);
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:46:00.0"),
        "skip",
        &["GPU 1 (", "cannot read", "Query currently inaccessible"],
    );
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:65:00.0"),
        "skip",
        &["GPU 2 (", "cannot read", "has no `ue:` and `ce:` lines"],
    );
}

/// `n` lines of `gpu_vram_bad_pages`, as amdgpu prints them.
fn bad_pages(n: usize, flag: char) -> String {
    (0..n)
        .map(|i| format!("0x{:08x} : 0x00001000 : {flag}\n", i + 1))
        .collect()
}

#[test]
fn amd_retired_pages_warn_and_fail_at_the_drivers_threshold() {
    let (_d, tree) = copy("mi300x-x4-ubuntu2204");
    let file = "sys/bus/pci/devices/0000:26:00.0/ras/gpu_vram_bad_pages";
    write(&tree, file, "");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "health.amd-bad-pages",
        Some("0000:26:00.0"),
        "pass",
        &["GPU 0 (", "no retired VRAM pages"],
    );
    // 192 GiB of VRAM / 100 MiB: amdgpu's default threshold is 1965 pages.
    write(
        &tree,
        file,
        &format!("{}{}", bad_pages(2, 'R'), bad_pages(1, 'P')),
    );
    let (code, doc) = doctor(&tree, false);
    assert_eq!(code, 0);
    says(
        &doc,
        "health.amd-bad-pages",
        Some("0000:26:00.0"),
        "warn",
        &[
            "GPU 0 (AMD Instinct MI300X, 0000:26:00.0)",
            "3 retired VRAM pages (2 reserved, 1 pending, 0 not reservable)",
            "/sys/bus/pci/devices/0000:26:00.0/ras/gpu_vram_bad_pages",
            "threshold is 1965",
        ],
    );
    write(&tree, file, &bad_pages(1965, 'R'));
    let (code, doc) = doctor(&tree, false);
    assert_eq!(code, 1);
    says(
        &doc,
        "health.amd-bad-pages",
        Some("0000:26:00.0"),
        "fail",
        &["1965 retired VRAM pages", "threshold of 1965"],
    );
    // The module parameter, when set, is the threshold.
    write(
        &tree,
        "sys/module/amdgpu/parameters/bad_page_threshold",
        "3\n",
    );
    write(&tree, file, &bad_pages(3, 'R'));
    let (_, doc) = doctor(&tree, false);
    let f = finding(&doc, "health.amd-bad-pages", Some("0000:26:00.0"));
    assert_eq!(f["status"], "fail", "{f}");
    assert!(
        f["detail"]
            .as_str()
            .unwrap()
            .contains("bad_page_threshold=3"),
        "{f}"
    );
    // A file that is not the driver's format is named, never guessed at.
    write(&tree, file, "0x00000001 : 0x00001000 : R\nnot a page\n");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "health.amd-bad-pages",
        Some("0000:26:00.0"),
        "skip",
        &["GPU 0 (", "cannot read", "line 2 is `not a page`"],
    );
}

#[test]
fn amd_xgmi_errors_fail_and_warn() {
    let (_d, tree) = copy("mi300x-x4-ubuntu2204");
    write(
        &tree,
        "sys/bus/pci/devices/0000:26:00.0/ras/xgmi_wafl_err_count",
        "ue: 0\nce: 0\n",
    );
    write(&tree, "sys/bus/pci/devices/0000:26:00.0/xgmi_error", "0\n");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "health.amd-xgmi",
        Some("0000:26:00.0"),
        "pass",
        &["GPU 0 (", "no uncorrectable XGMI errors"],
    );
    write(
        &tree,
        "sys/bus/pci/devices/0000:65:00.0/ras/xgmi_wafl_err_count",
        "ue: 4\nce: 0\n",
    );
    write(&tree, "sys/bus/pci/devices/0000:85:00.0/xgmi_error", "1\n");
    let (code, doc) = doctor(&tree, false);
    assert_eq!(code, 1);
    says(
        &doc,
        "health.amd-xgmi",
        Some("0000:65:00.0"),
        "fail",
        &[
            "GPU 2 (AMD Instinct MI300X, 0000:65:00.0)",
            "4 uncorrectable errors on its XGMI links",
            "/sys/bus/pci/devices/0000:65:00.0/ras/xgmi_wafl_err_count",
        ],
    );
    says(
        &doc,
        "health.amd-xgmi",
        Some("0000:85:00.0"),
        "warn",
        &[
            "GPU 3 (",
            "1 XGMI link error in /sys/bus/pci/devices/0000:85:00.0/xgmi_error",
        ],
    );
    // XGMI counts are not memory ECC: health.amd-ecc leaves them to health.amd-xgmi.
    says(
        &doc,
        "health.amd-ecc",
        Some("0000:65:00.0"),
        "skip",
        &["no *_err_count"],
    );
}

#[test]
fn nvidia_ecc_retirement_and_remapping_from_a_recorded_xml() {
    type Edit = fn(&str) -> String;
    let cases: [(Edit, &str, &str); 4] = [
        (
            |g| {
                g.replacen(
                    "<dram_uncorrectable>0</dram_uncorrectable>",
                    "<dram_uncorrectable>3</dram_uncorrectable>",
                    1,
                )
            },
            "fail",
            "3 uncorrectable ECC errors since the driver loaded",
        ),
        (
            |g| g.replace("<remapped_row_failure>No", "<remapped_row_failure>Yes"),
            "fail",
            "a row remapping failed",
        ),
        (
            |g| g.replace("<remapped_row_pending>No", "<remapped_row_pending>Yes"),
            "warn",
            "a row remapping is pending",
        ),
        (
            |g| g.replace("<pending_retirement>N/A", "<pending_retirement>Yes"),
            "warn",
            "a page retirement is pending",
        ),
    ];
    for (edit, status, words) in cases {
        let (_d, tree) = copy("h100-x8-ubuntu2204");
        record_nvidia_xml(&tree, 3, edit);
        let (code, doc) = doctor(&tree, true);
        assert_eq!(code, if status == "fail" { 1 } else { 0 }, "{words}");
        says(
            &doc,
            "health.nvidia-memory",
            Some("0000:5d:00.0"),
            status,
            &["GPU 3 (", words],
        );
        let f = finding(&doc, "health.nvidia-memory", Some("0000:5d:00.0"));
        assert!(
            f["detail"]
                .as_str()
                .unwrap()
                .contains("nvidia-smi -q -x (recorded)"),
            "{f}"
        );
        assert_eq!(
            health_problems(&doc).len(),
            1,
            "{words}: {:?}",
            health_problems(&doc)
        );
    }
    // A GPU the XML does not list is a skip that says so; the others are still judged.
    let (_d, tree) = copy("h100-x8-ubuntu2204");
    record_nvidia_xml(&tree, 7, |g| {
        g.replace("00000000:DB:00.0", "00000000:DC:00.0")
    });
    let (_, doc) = doctor(&tree, true);
    says(
        &doc,
        "health.nvidia-memory",
        Some("0000:db:00.0"),
        "skip",
        &["GPU 7 (", "does not list it"],
    );
    says(
        &doc,
        "health.nvidia-memory",
        Some("0000:18:00.0"),
        "pass",
        &["GPU 0 ("],
    );
    // Output that is not XML is named; the check skips with the reason.
    let (_d, tree) = copy("h100-x8-ubuntu2204");
    record_nvidia_xml(&tree, 0, str::to_string);
    write(
        &tree,
        ".rocmenv/nvidia-smi-q-x.txt",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    );
    let (_, doc) = doctor(&tree, true);
    says(
        &doc,
        "health.nvidia-memory",
        None,
        "skip",
        &["is not XML", "NVIDIA-SMI has failed"],
    );
}

/// An `aer_dev_*` file in the kernel's documented format (Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats)
/// with `name` counted `n` times.
fn aer(kind: &str, name: &str, n: u64) -> String {
    let (names, total): (&[&str], &str) = match kind {
        "correctable" => (
            &[
                "Receiver Error",
                "Bad TLP",
                "Bad DLLP",
                "RELAY_NUM Rollover",
                "Replay Timer Timeout",
                "Advisory Non-Fatal",
                "Corrected Internal Error",
                "Header Log Overflow",
            ],
            "TOTAL_ERR_COR",
        ),
        "fatal" => (
            &[
                "Undefined",
                "Data Link Protocol",
                "Surprise Down Error",
                "Poisoned TLP",
                "Completion Timeout",
            ],
            "TOTAL_ERR_FATAL",
        ),
        _ => (
            &[
                "Undefined",
                "Data Link Protocol",
                "Surprise Down Error",
                "Poisoned TLP",
                "Completion Timeout",
            ],
            "TOTAL_ERR_NONFATAL",
        ),
    };
    let mut t: String = names
        .iter()
        .map(|k| format!("{k} {}\n", if *k == name { n } else { 0 }))
        .collect();
    t.push_str(&format!("{total} {n}\n"));
    t
}

/// Moves GPU `bdf` of `tree` under two bridges, `root_port` and `switch`, as the kernel lays sysfs out
/// (`sys/bus/pci/devices/<BDF>` links to `../../../devices/pci<dom>:<bus>/<root port>/<switch>/<BDF>`), and gives
/// each bridge its class and clean AER files.
fn under_bridges(tree: &Path, bdf: &str, root_port: &str, switch: &str) {
    use std::os::unix::fs::symlink;
    let devices = tree.join("sys/bus/pci/devices");
    let top = format!("pci{}", &root_port[..7]);
    let real = tree
        .join("sys/devices")
        .join(&top)
        .join(root_port)
        .join(switch)
        .join(bdf);
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::rename(devices.join(bdf), &real).unwrap();
    symlink(
        format!("../../../devices/{top}/{root_port}/{switch}/{bdf}"),
        devices.join(bdf),
    )
    .unwrap();
    for (b, at) in [
        (root_port, format!("{top}/{root_port}")),
        (switch, format!("{top}/{root_port}/{switch}")),
    ] {
        let dir = tree.join("sys/devices").join(&at);
        fs::write(dir.join("class"), "0x060400\n").unwrap();
        for kind in ["fatal", "nonfatal", "correctable"] {
            fs::write(dir.join(format!("aer_dev_{kind}")), aer(kind, "", 0)).unwrap();
        }
        symlink(format!("../../../devices/{at}"), devices.join(b)).unwrap();
    }
}

#[test]
fn pcie_aer_errors_on_a_gpu_and_on_a_bridge_above_it() {
    let (_d, tree) = copy("mi300x-x4-ubuntu2204");
    let gpu = |n: &str, kind: &str| format!("sys/bus/pci/devices/{n}/aer_dev_{kind}");
    for bdf in [
        "0000:26:00.0",
        "0000:46:00.0",
        "0000:65:00.0",
        "0000:85:00.0",
    ] {
        for kind in ["fatal", "nonfatal", "correctable"] {
            write(&tree, &gpu(bdf, kind), &aer(kind, "", 0));
        }
    }
    under_bridges(&tree, "0000:46:00.0", "0000:40:01.1", "0000:41:00.0");
    let (code, doc) = doctor(&tree, false);
    assert_eq!((code, health_problems(&doc)), (0, vec![]));
    says(
        &doc,
        "pcie.aer",
        Some("0000:46:00.0"),
        "pass",
        &["GPU 1 (", "on the GPU and the 2 bridges above it"],
    );
    says(
        &doc,
        "pcie.aer",
        Some("0000:26:00.0"),
        "pass",
        &["GPU 0 (", "PCIe AER errors on the GPU"],
    );
    // A fatal error on the switch above GPU 1, a non-fatal one on GPU 3 itself.
    write(
        &tree,
        "sys/bus/pci/devices/0000:41:00.0/aer_dev_fatal",
        &aer("fatal", "Surprise Down Error", 1),
    );
    write(
        &tree,
        &gpu("0000:85:00.0", "nonfatal"),
        &aer("nonfatal", "Completion Timeout", 2),
    );
    let (code, doc) = doctor(&tree, false);
    assert_eq!(code, 1);
    says(&doc, "pcie.aer", Some("0000:46:00.0"), "fail", &[
        "GPU 1 (AMD Instinct MI300X, 0000:46:00.0)",
        "upstream bridge 0000:41:00.0: 1 (Surprise Down Error 1; /sys/bus/pci/devices/0000:41:00.0/aer_dev_fatal)",
    ]);
    says(
        &doc,
        "pcie.aer",
        Some("0000:85:00.0"),
        "warn",
        &[
            "GPU 3 (",
            "the GPU: 2 (Completion Timeout 2; /sys/bus/pci/devices/0000:85:00.0/aer_dev_nonfatal)",
        ],
    );
    // A fatal error on the GPU itself; correctable errors warn above 8 a minute since boot.
    write(
        &tree,
        &gpu("0000:26:00.0", "fatal"),
        &aer("fatal", "Poisoned TLP", 1),
    );
    write(
        &tree,
        &gpu("0000:65:00.0", "correctable"),
        &aer("correctable", "Replay Timer Timeout", 100),
    );
    write(&tree, "proc/uptime", "120.00 200.00\n");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "pcie.aer",
        Some("0000:26:00.0"),
        "fail",
        &["GPU 0 (", "the GPU: 1 (Poisoned TLP 1"],
    );
    says(
        &doc,
        "pcie.aer",
        Some("0000:65:00.0"),
        "warn",
        &[
            "GPU 2 (",
            "100 correctable PCIe AER errors since boot, 50.0 a minute",
        ],
    );
    write(&tree, "proc/uptime", "864000.00 200.00\n");
    write(&tree, &gpu("0000:26:00.0", "fatal"), "junk\n");
    let (_, doc) = doctor(&tree, false);
    says(
        &doc,
        "pcie.aer",
        Some("0000:65:00.0"),
        "pass",
        &["100 correctable errors (0.01 a minute since boot)"],
    );
    let f = finding(&doc, "pcie.aer", Some("0000:26:00.0"));
    assert!(
        f["detail"]
            .as_str()
            .unwrap()
            .contains("cannot read: /sys/bus/pci/devices/0000:26:00.0/aer_dev_fatal"),
        "{f}"
    );
}

/// The checks by (id, subject), for comparing two reports.
fn checks(doc: &Value) -> Vec<(String, String, Value)> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].to_string(), c["subject"].to_string(), c.clone()))
        .collect()
}

#[test]
fn collect_records_what_the_health_checks_read() {
    let d = tempfile::tempdir().unwrap();
    // An AMD tree with a fault on a bridge and RAS files, and an NVIDIA tree with a recorded XML.
    let (_a, amd) = copy("mi300x-x4-ras-uncorrectable");
    write(
        &amd,
        "sys/bus/pci/devices/0000:26:00.0/ras/gpu_vram_bad_pages",
        &bad_pages(2, 'R'),
    );
    write(&amd, "sys/bus/pci/devices/0000:26:00.0/xgmi_error", "1\n");
    write(
        &amd,
        "sys/bus/pci/devices/0000:46:00.0/aer_dev_fatal",
        &aer("fatal", "", 0),
    );
    under_bridges(&amd, "0000:46:00.0", "0000:40:01.1", "0000:41:00.0");
    write(
        &amd,
        "sys/bus/pci/devices/0000:40:01.1/aer_dev_nonfatal",
        &aer("nonfatal", "Poisoned TLP", 3),
    );
    let (_n, nv) = copy("h100-x8-ubuntu2204");
    record_nvidia_xml(&nv, 5, |g| {
        g.replace("<remapped_row_failure>No", "<remapped_row_failure>Yes")
    });
    // Each bundle holds what the checks read: the RAS files, the bridge's AER file where the kernel's links put it,
    // the recorded XML.
    let amd_files: &[&str] = &[
        "sys/devices/pci0000:40/0000:40:01.1/aer_dev_nonfatal",
        "sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/0000:46:00.0/ras/umc_err_count",
        "sys/bus/pci/devices/0000:26:00.0/ras/gpu_vram_bad_pages",
        "sys/bus/pci/devices/0000:26:00.0/xgmi_error",
    ];
    let nv_files: &[&str] = &[".rocmenv/nvidia-smi--q--x.txt"];
    for (tree, sub, id, files) in [
        (&amd, "0000:46:00.0", "pcie.aer", amd_files),
        (&nv, "0000:ab:00.0", "health.nvidia-memory", nv_files),
    ] {
        let bundle = d.path().join(format!(
            "{}.tar.zst",
            tree.file_name().unwrap().to_str().unwrap()
        ));
        let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args([
                "collect",
                "--deep",
                "--sysroot",
                tree.to_str().unwrap(),
                "-o",
                bundle.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (want_code, want) = doctor(tree, true);
        let (got_code, got) = doctor(&bundle, true);
        assert_eq!(checks(&got), checks(&want), "{}", tree.display());
        assert_eq!(got["host"]["gpus"], want["host"]["gpus"]);
        assert_eq!((got_code, want_code), (1, 1));
        assert_ne!(finding(&got, id, Some(sub))["status"], "pass");
        let raw = zstd::stream::decode_all(fs::File::open(&bundle).unwrap()).unwrap();
        let mut names = Vec::new();
        for e in tar::Archive::new(&raw[..]).entries().unwrap() {
            names.push(
                e.unwrap()
                    .path()
                    .unwrap()
                    .to_string_lossy()
                    .trim_end_matches('/')
                    .to_string(),
            );
        }
        for f in files {
            assert!(names.iter().any(|n| n == f), "{f} not in {names:?}");
        }
    }
}
