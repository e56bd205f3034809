//! Hostile and broken host trees: never a panic; the fact is null with a reason and the check that needs it skips.

use rocmenv::checks::Status;
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::DoctorReport;
use std::fs;
use std::path::Path;

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// Adds what makes a directory a host tree (issue 10: `--sysroot` refuses one without), where the test did not
/// write its own: an unparseable `proc/version` (so the kernel still comes from `osrelease` or nowhere), an
/// os-release without an ID, and a `sys/bus/pci` without devices. What a test put there is left as it is.
fn host_markers(root: &Path) {
    let present = |rels: &[&str]| {
        rels.iter()
            .any(|r| fs::symlink_metadata(root.join(r)).is_ok())
    };
    if !present(&["proc/version", "proc/sys/kernel/osrelease"]) {
        write(root, "proc/version", b"not a kernel\n");
    }
    if !present(&["etc/os-release", "usr/lib/os-release"]) {
        write(root, "usr/lib/os-release", b"");
    }
    fs::create_dir_all(root.join("sys/bus/pci")).unwrap();
}

fn run(root: &Path) -> DoctorReport {
    host_markers(root);
    build_report(&DoctorOptions {
        sysroot: Some(root.to_path_buf()),
        ..DoctorOptions::default()
    })
    .expect("a broken tree is still a tree")
}

fn status(r: &DoctorReport, id: &str) -> Status {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id}"))
        .status
}

/// Issue 10: an empty directory, a directory of random files and `/proc` passed as hosts ("2 passed … 0 failed").
/// A tree without a kernel release, an os-release and the PCI bus is refused (exit 2), naming what it lacks.
#[test]
fn a_tree_without_the_host_markers_is_refused_naming_them() {
    let empty = tempfile::tempdir().unwrap();
    let random = tempfile::tempdir().unwrap();
    write(random.path(), "notes.txt", b"hello\n");
    write(random.path(), "a/b/c.bin", b"\x00\x01");
    write(random.path(), "etc/hostname", b"box\n");
    let partial = tempfile::tempdir().unwrap();
    write(partial.path(), "usr/lib/os-release", b"ID=debian\n");
    for (dir, missing) in [
        (
            empty.path(),
            &[
                "proc/version or /proc/sys/kernel/osrelease",
                "etc/os-release or /usr/lib/os-release",
                "sys/bus/pci",
            ][..],
        ),
        (
            random.path(),
            &[
                "proc/version or /proc/sys/kernel/osrelease",
                "etc/os-release or /usr/lib/os-release",
                "sys/bus/pci",
            ][..],
        ),
        (
            Path::new("/proc"),
            &["proc/version or /proc/sys/kernel/osrelease", "sys/bus/pci"][..],
        ),
        (
            partial.path(),
            &["proc/version or /proc/sys/kernel/osrelease", "sys/bus/pci"][..],
        ),
    ] {
        let e = build_report(&DoctorOptions {
            sysroot: Some(dir.to_path_buf()),
            ..DoctorOptions::default()
        })
        .err()
        .unwrap_or_else(|| panic!("{} accepted as a host", dir.display()));
        assert_eq!(e.exit_code(), 2, "{e}");
        let e = e.to_string();
        assert!(e.contains("is not a host tree"), "{e}");
        for m in missing {
            assert!(e.contains(&format!("/{m}")), "{m} not named: {e}");
        }
        if dir == partial.path() {
            assert!(!e.contains("os-release"), "{e}");
        }
    }
}

#[test]
fn an_empty_tree_reports_every_fact_missing() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path());
    assert!(r.facts.kernel.is_none() && r.facts.os.is_none());
    assert!(r
        .facts
        .why_unavailable("kernel")
        .unwrap()
        .contains("does not exist"));
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Skip);
    assert_eq!(status(&r, "os.rocm-supported"), Status::Skip);
    assert_eq!(
        status(&r, "gpu.present"),
        Status::Skip,
        "an unreadable PCI bus is not `no GPU`"
    );
}

#[test]
fn binary_and_absurd_kernel_strings() {
    for bad in [
        &b"\x00\xff\xfe\x01garbage"[..],
        b"99999999999999999999.1.2-generic",
        b"",
        b"   \n",
        b"abc",
        &[b'5'; 100_000][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "proc/sys/kernel/osrelease", bad);
        let r = run(dir.path());
        assert!(
            r.facts.kernel.is_none(),
            "{:?} parsed",
            String::from_utf8_lossy(&bad[..bad.len().min(20)])
        );
        assert!(r.facts.why_unavailable("kernel").is_some());
        assert_eq!(status(&r, "kernel.rocm-supported"), Status::Skip);
    }
}

#[test]
fn empty_binary_and_hostile_os_release() {
    // Issue 14: each case says what it must become: refused (the fact is missing, with a reason, and the check
    // skips) or parsed (a hostile value stays a literal string that matches nothing).
    let cases: [(&[u8], Option<&str>); 4] = [
        (b"", None),
        (b"\xff\xfe\x00\x01\x02", None),
        (b"NAME=\"Unterminated\nID=\"\n", None),
        (
            b"ID=$(rm -rf /)\nVERSION_ID=`reboot`\nPRETTY_NAME=\"\\\"; DROP TABLE\"\n",
            Some("$(rm -rf /)"),
        ),
    ];
    for (i, (bad, parsed_id)) in cases.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "etc/os-release", bad);
        write(
            dir.path(),
            "proc/sys/kernel/osrelease",
            b"5.15.0-91-generic\n",
        );
        let r = run(dir.path());
        match parsed_id {
            None => {
                assert!(
                    r.facts.os.is_none(),
                    "case {i} must be refused: {:?}",
                    r.facts.os
                );
                assert!(r.facts.why_unavailable("os").is_some(), "case {i}");
                assert_eq!(status(&r, "os.rocm-supported"), Status::Skip, "case {i}");
            }
            Some(id) => {
                let os = r
                    .facts
                    .os
                    .as_ref()
                    .unwrap_or_else(|| panic!("case {i} must parse"));
                assert_eq!(os.id.as_deref(), Some(*id), "case {i}");
                assert_eq!(status(&r, "os.rocm-supported"), Status::Fail, "case {i}");
            }
        }
    }
}

#[test]
fn symlink_loops_and_directories_where_files_belong() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("etc")).unwrap();
    std::os::unix::fs::symlink("os-release", dir.path().join("etc/os-release")).unwrap();
    fs::create_dir_all(dir.path().join("proc/sys/kernel/osrelease")).unwrap();
    fs::create_dir_all(dir.path().join("sys/class/drm/renderD128")).unwrap();
    std::os::unix::fs::symlink("device", dir.path().join("sys/class/drm/renderD128/device"))
        .unwrap();
    let r = run(dir.path());
    assert!(
        r.facts
            .why_unavailable("os")
            .unwrap()
            .contains("symlink loop"),
        "{:?}",
        r.facts.unavailable
    );
    assert!(
        r.facts
            .why_unavailable("kernel")
            .unwrap()
            .contains("directory"),
        "{:?}",
        r.facts.unavailable
    );
}

fn gpu_tree(root: &Path, props: &[u8], vendor: &[u8]) {
    let dev = "sys/bus/pci/devices/0000:03:00.0";
    write(root, &format!("{dev}/class"), b"0x030000\n");
    write(root, &format!("{dev}/vendor"), vendor);
    write(root, &format!("{dev}/device"), b"0x744c\n");
    write(
        root,
        &format!("{dev}/numa_node"),
        b"-99999999999999999999999\n",
    );
    write(
        root,
        &format!("{dev}/current_link_speed"),
        b"NaN GT/s PCIe\n",
    );
    write(
        root,
        &format!("{dev}/mem_info_vram_total"),
        b"184467440737095516150\n",
    );
    write(
        root,
        "sys/class/kfd/kfd/topology/nodes/0/properties",
        b"cpu_cores_count 24\nsimd_count 0\n",
    );
    write(root, "sys/class/kfd/kfd/topology/nodes/1/properties", props);
    write(root, "sys/module/amdgpu/version", b"\xff\xfe not a version");
    write(root, "opt/rocm-6.2.0/.info/version", b"$(id)\n");
}

#[test]
fn garbage_in_sysfs_values_becomes_null_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let props = b"simd_count 192\ngfx_target_version 99999999999999999999999\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\ndrm_render_minor 99999999999\n\xff\xfe\x00junk line\n";
    gpu_tree(dir.path(), props, b"0x1002\n");
    let r = run(dir.path());
    assert_eq!(r.facts.gpus.len(), 1);
    let g = &r.facts.gpus[0];
    assert_eq!(g.kfd_node, Some(1));
    assert_eq!(g.gfx, None, "an undecodable gfx_target_version is null");
    assert_eq!(g.render_node, None);
    assert_eq!(g.numa_node, None);
    assert_eq!(g.vram_bytes, None);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "gpu.gfx-supported")
        .unwrap();
    assert_eq!(f.status, Status::Skip, "{}", f.summary);
    assert!(r
        .facts
        .why_unavailable("rocm /opt/rocm-6.2.0")
        .unwrap()
        .contains("not a version"));
    assert_eq!(status(&r, "driver.amdgpu-version"), Status::Warn);
    // Issue 13: bytes that are not UTF-8 are named with the path, not guessed at.
    assert_eq!(
        r.facts.why_unavailable("amdgpu version"),
        Some("/sys/module/amdgpu/version: is not UTF-8 text (bad byte at offset 0)")
    );
    assert_eq!(
        r.facts.why_unavailable("kfd node 1 text"),
        Some("/sys/class/kfd/kfd/topology/nodes/1/properties: is not UTF-8 text (bad byte at offset 143): lines that are not `name value` are skipped")
    );
}

#[test]
fn old_kfd_nodes_without_gfx_target_version_give_gfx_null() {
    let dir = tempfile::tempdir().unwrap();
    gpu_tree(dir.path(), b"simd_count 64\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\ndrm_render_minor 128\n", b"0x1002\n");
    let r = run(dir.path());
    let g = &r.facts.gpus[0];
    assert_eq!(
        (g.gfx, g.render_node.as_deref()),
        (None, Some("/dev/dri/renderD128"))
    );
}

#[test]
fn a_malformed_recorded_file_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".rocmenv/recorded.yaml",
        b"user: [not, a, map\n",
    );
    write(dir.path(), "dev/kfd", b"");
    gpu_tree(dir.path(), b"simd_count 64\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\ndrm_render_minor 128\n", b"0x1002\n");
    let r = run(dir.path());
    assert!(r.facts.user.is_none());
    assert!(r
        .facts
        .why_unavailable("user")
        .unwrap()
        .contains("recorded.yaml is not valid"));
    assert_eq!(
        status(&r, "devices.kfd"),
        Status::Warn,
        "access cannot be judged without the user"
    );
}

#[test]
fn a_recorded_tool_path_cannot_leave_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".rocmenv/recorded.yaml",
        b"tools:\n  rocminfo: ../../../../etc/passwd\n",
    );
    gpu_tree(dir.path(), b"simd_count 64\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\n", b"0x1002\n");
    host_markers(dir.path());
    let r = build_report(&DoctorOptions {
        sysroot: Some(dir.path().to_path_buf()),
        deep: true,
        ..DoctorOptions::default()
    })
    .unwrap();
    let e = r.facts.evidence.rocminfo.as_ref().unwrap();
    assert!(
        e.outcome.to_string().contains("leaves .rocmenv"),
        "{}",
        e.outcome
    );
}

#[test]
fn a_rebuild_of_a_listed_distro_warns_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "etc/os-release", b"NAME=\"AlmaLinux\"\nID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME=\"AlmaLinux 9.4 (Seafoam Ocelot)\"\n");
    write(
        dir.path(),
        "proc/sys/kernel/osrelease",
        b"5.14.0-427.13.1.el9_4.x86_64\n",
    );
    host_markers(dir.path());
    let r = build_report(&DoctorOptions {
        sysroot: Some(dir.path().to_path_buf()),
        target: Some("rocm-6.2".parse().unwrap()),
        ..DoctorOptions::default()
    })
    .unwrap();
    let os = r
        .findings
        .iter()
        .find(|f| f.id == "os.rocm-supported")
        .unwrap();
    assert_eq!(os.status, Status::Warn, "{}", os.summary);
    assert!(os.summary.contains("rebuild of rhel 9.4"), "{}", os.summary);
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Pass);
}

/// Issue 9: tools are found on the tree's own PATH mapped into the tree, executable files only.
#[test]
fn tools_are_looked_up_on_the_trees_path_inside_the_tree() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "opt/rocm/bin/rocminfo", b"#!/bin/sh\n");
    fs::set_permissions(
        dir.path().join("opt/rocm/bin/rocminfo"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // Not executable: not a tool.
    write(dir.path(), "usr/bin/nvidia-smi", b"text");
    write(
        dir.path(),
        ".rocmenv/recorded.yaml",
        b"env:\n  PATH: /usr/bin:relative/dir:/opt/rocm/bin\n",
    );
    let r = run(dir.path());
    assert_eq!(
        r.facts.tools.get("rocminfo"),
        Some(&Some("/opt/rocm/bin/rocminfo".to_string()))
    );
    assert_eq!(r.facts.tools.get("nvidia-smi"), Some(&None));
}

/// Issue 14: the captures index lists exactly the files that are there.
#[test]
fn the_captures_index_lists_what_is_there() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/captures");
    let index = fs::read_to_string(dir.join("INDEX.md")).unwrap();
    for entry in fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "INDEX.md" {
            continue;
        }
        // Files are named in full, or as `_suffix` after a sibling's name on the same line.
        let stem = name.trim_end_matches(".txt");
        let listed = index.contains(stem)
            || index.lines().any(|l| {
                l.split(['/', ',']).any(|part| {
                    let p = part
                        .trim()
                        .split(' ')
                        .next()
                        .unwrap_or("")
                        .trim_end_matches(".txt");
                    p.starts_with('_') && stem.ends_with(p)
                })
            });
        assert!(listed, "{name} is not in INDEX.md");
    }
    for line in index
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let first = line.split([' ', ',']).next().unwrap_or("");
        if first.ends_with(".txt") {
            assert!(
                dir.join(first).exists(),
                "INDEX.md lists {first}, which is not there"
            );
        }
        // `… / _rocm602 / …`: each short name must be the end of a file that is there.
        for part in line
            .split(" — ")
            .next()
            .unwrap_or("")
            .split(['/', ','])
            .skip(1)
        {
            let short = part
                .trim()
                .split(' ')
                .next()
                .unwrap_or("")
                .trim_end_matches(".txt");
            if short.starts_with('_') {
                let names: Vec<String> = fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect();
                assert!(
                    names
                        .iter()
                        .any(|n| n.trim_end_matches(".txt").ends_with(short)),
                    "INDEX.md lists {short} ({first}), which is not there"
                );
            }
        }
    }
}

/// Issue 10: under --sysroot without `.rocmenv/recorded.yaml` the environment is unknown, so the checks that read it
/// skip with the reason instead of passing ("HSA_OVERRIDE_GFX_VERSION is not set").
#[test]
fn environment_checks_skip_without_a_recorded_environment() {
    let dir = tempfile::tempdir().unwrap();
    gpu_tree(dir.path(), b"simd_count 64\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\n", b"0x1002\n");
    let r = run(dir.path());
    for id in ["env.hsa-override", "env.visible-devices"] {
        let f = r.findings.iter().find(|f| f.id == id).unwrap();
        assert_eq!(f.status, Status::Skip, "{id}: {}", f.summary);
        assert!(
            f.summary
                .contains("the tree has no /.rocmenv/recorded.yaml"),
            "{}",
            f.summary
        );
    }
    // A recorded file without `env:` does not know it either.
    write(
        dir.path(),
        ".rocmenv/recorded.yaml",
        b"user: {name: a, uid: 1000, gid: 1000}\n",
    );
    let r = run(dir.path());
    assert_eq!(status(&r, "env.hsa-override"), Status::Skip);
    // A recorded environment is judged.
    write(
        dir.path(),
        ".rocmenv/recorded.yaml",
        b"env: {PATH: /usr/bin}\n",
    );
    let r = run(dir.path());
    assert_eq!(status(&r, "env.hsa-override"), Status::Pass);
    assert_eq!(status(&r, "env.visible-devices"), Status::Pass);
}
