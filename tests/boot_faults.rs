//! Issue 37, items 4-7: doctor's boot checks on host trees with one fault each. The committed fault trees
//! (`mi300x-x4-no-iommu-pt`, `mi300x-x4-next-kernel-no-dkms`, `secure-boot-blocks-dkms`) come from the generator;
//! the other faults are a healthy tree copied to a temporary directory with the one fault added. Healthy trees get
//! none of these findings.

use rocmenv::checks::{Finding, Status};
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::DoctorReport;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAULT_TREES: [&str; 3] = [
    "mi300x-x4-no-iommu-pt",
    "mi300x-x4-next-kernel-no-dkms",
    "secure-boot-blocks-dkms",
];

fn hosts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts")
}

fn doctor_at(root: &Path, matrices: Option<&Path>) -> DoctorReport {
    let opts = DoctorOptions {
        sysroot: Some(root.to_path_buf()),
        matrices: matrices.map(Path::to_path_buf),
        target: Some("rocm-6.2".parse().unwrap()),
        ..DoctorOptions::default()
    };
    build_report(&opts).unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

fn doctor(name: &str) -> DoctorReport {
    doctor_at(&hosts().join(name), None)
}

fn find<'a>(r: &'a DoctorReport, id: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

fn text(f: &Finding) -> String {
    format!(
        "{} | {} | {}",
        f.summary,
        f.detail.as_deref().unwrap_or(""),
        f.fix.as_deref().unwrap_or("")
    )
}

/// The boot findings that warn or fail, as `id: summary`.
fn faults(r: &DoctorReport) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.area == "boot" && matches!(f.status, Status::Warn | Status::Fail))
        .map(|f| format!("{}: {}", f.id, f.summary))
        .collect()
}

/// Exactly one boot check (`id`) warns or fails, with `status`; its words are returned.
fn only_fault(r: &DoctorReport, id: &str, status: Status) -> String {
    let got = faults(r);
    assert!(
        got.len()
            == r.findings
                .iter()
                .filter(|f| f.id == id && f.status == status)
                .count()
            && !got.is_empty()
            && got.iter().all(|g| g.starts_with(&format!("{id}: "))),
        "want only {id} {status:?}, got {got:#?}"
    );
    text(find(r, id))
}

/// A copy of a fixture in a temporary directory (links kept), to add one fault to.
fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dst = d.path().join(name);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(hosts().join(name))
        .arg(&dst)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {name}");
    (d, dst)
}

fn put(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

#[test]
fn healthy_trees_get_no_boot_finding() {
    let mut seen = 0;
    for e in std::fs::read_dir(hosts()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.path().is_dir() || name == "gen" || FAULT_TREES.contains(&name.as_str()) {
            continue;
        }
        let opts = DoctorOptions {
            sysroot: Some(e.path()),
            ..DoctorOptions::default()
        };
        let r = build_report(&opts).unwrap();
        assert!(faults(&r).is_empty(), "{name}: {:#?}", faults(&r));
        seen += 1;
    }
    assert!(seen >= 15, "{seen} trees");
    // The healthy MI300X tree shows its firmware, and it passes.
    let r = doctor("mi300x-x4-ubuntu2204");
    let fw: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.id == "firmware.known-bad")
        .collect();
    assert_eq!(fw.len(), 4);
    assert!(fw
        .iter()
        .all(|f| f.status == Status::Pass && f.summary.contains("mec 0x0000008a")));
}

#[test]
fn missing_iommu_pt_on_a_multi_gpu_mi300x_host_warns() {
    let r = doctor("mi300x-x4-no-iommu-pt");
    let t = only_fault(&r, "boot.iommu", Status::Warn);
    assert!(
        t.contains("/proc/cmdline lacks iommu=pt pci=realloc=off"),
        "{t}"
    );
    assert!(t.contains("wants: iommu=pt pci=realloc=off"), "{t}");
    assert!(
        t.contains("docs/how-to/system-optimization/mi300x.rst"),
        "{t}"
    );
    assert!(t.contains("GRUB_CMDLINE_LINUX"), "{t}");
}

#[test]
fn numa_balancing_on_warns() {
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    put(&root, "proc/sys/kernel/numa_balancing", b"1\n");
    let t = only_fault(&doctor_at(&root, None), "boot.numa-balancing", Status::Warn);
    assert!(
        t.contains("/proc/sys/kernel/numa_balancing is 1")
            && t.contains("wants: kernel.numa_balancing=0"),
        "{t}"
    );
    put(&root, "proc/sys/kernel/numa_balancing", b"0\n");
    let r = doctor_at(&root, None);
    assert_eq!(find(&r, "boot.numa-balancing").status, Status::Pass);
}

#[test]
fn an_amdgpu_parameter_the_module_lacks_warns() {
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    put(
        &root,
        "proc/cmdline",
        b"BOOT_IMAGE=/boot/vmlinuz-5.15.0-127-generic root=UUID=x ro iommu=pt pci=realloc=off amdgpu.gtt_size=65536\n",
    );
    // The names a loaded amdgpu lists (modinfo amdgpu: gttsize, noretry, …); gtt_size is none of them.
    for p in ["gttsize", "noretry", "vramlimit"] {
        put(&root, &format!("sys/module/amdgpu/parameters/{p}"), b"-1\n");
    }
    let t = only_fault(&doctor_at(&root, None), "boot.amdgpu-params", Status::Warn);
    assert!(
        t.contains("amdgpu.gtt_size=65536") && t.contains("/sys/module/amdgpu/parameters/"),
        "{t}"
    );
    assert!(t.contains("remove: amdgpu.gtt_size=65536"), "{t}");
    // The deprecated one, which the module still has (ROCm/ROCm#5595).
    put(
        &root,
        "proc/cmdline",
        b"BOOT_IMAGE=/boot/vmlinuz-5.15.0-127-generic ro iommu=pt pci=realloc=off amdgpu.gttsize=65536\n",
    );
    let t = only_fault(&doctor_at(&root, None), "boot.amdgpu-params", Status::Warn);
    assert!(t.contains("deprecated") && t.contains("issues/5595"), "{t}");
}

#[test]
fn the_next_kernel_without_the_dkms_module_warns() {
    let r = doctor("mi300x-x4-next-kernel-no-dkms");
    assert_eq!(find(&r, "boot.next-kernel").status, Status::Pass);
    let t = only_fault(&r, "boot.next-kernel-module", Status::Warn);
    assert!(t.contains("after a reboot, amdgpu will not load"), "{t}");
    assert!(
        t.contains("5.15.0-130-generic") && t.contains("/boot/grub/grub.cfg"),
        "{t}"
    );
    assert!(
        t.contains("sudo apt install linux-headers-5.15.0-130-generic && sudo dkms autoinstall -k 5.15.0-130-generic"),
        "{t}"
    );
}

/// grub.cfg naming `release` first, with the dkms module and headers built for it and the running kernel.
fn boot_into(root: &Path, release: &str) {
    let cfg = format!(
        "menuentry 'Ubuntu' --class ubuntu $menuentry_id_option 'gnulinux-simple-x' {{\n\tlinux\t/boot/vmlinuz-{release} root=UUID=x ro quiet splash\n}}\n"
    );
    put(root, "boot/grub/grub.cfg", cfg.as_bytes());
    for k in [release, "5.15.0-127-generic"] {
        put(
            root,
            &format!("lib/modules/{k}/updates/dkms/amdgpu.ko.zst"),
            b"",
        );
        put(root, &format!("usr/src/linux-headers-{k}/Makefile"), b"");
        std::os::unix::fs::symlink(
            format!("../../../usr/src/linux-headers-{k}"),
            root.join(format!("lib/modules/{k}/build")),
        )
        .unwrap();
    }
}

#[test]
fn a_next_kernel_the_matrix_does_not_list_fails() {
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    // 6.2 was a 22.04 HWE kernel; ROCm 6.2 lists 5.15, 6.5 and 6.8 for 22.04.
    boot_into(&root, "6.2.0-39-generic");
    let r = doctor_at(&root, None);
    assert_eq!(find(&r, "boot.next-kernel-module").status, Status::Pass);
    let t = only_fault(&r, "boot.next-kernel", Status::Fail);
    assert!(
        t.contains("next-boot kernel 6.2.0-39-generic (6.2 series) is not supported on ubuntu 22.04 by ROCm 6.2."),
        "{t}"
    );
    assert!(
        t.contains("GRUB's first entry, in /boot/grub/grub.cfg"),
        "{t}"
    );
}

#[test]
fn secure_boot_with_an_unloaded_dkms_module_fails() {
    let r = doctor("secure-boot-blocks-dkms");
    let t = only_fault(&r, "boot.secure-boot", Status::Fail);
    assert!(
        t.contains("/lib/modules/5.15.0-127-generic/updates/dkms/amdgpu.ko.zst is installed")
            || t.contains("amdgpu (/lib/modules/5.15.0-127-generic/updates/dkms/amdgpu.ko.zst)"),
        "{t}"
    );
    assert!(
        t.contains("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"),
        "{t}"
    );
    assert!(
        t.contains("mokutil --import") && t.contains("issues/4328"),
        "{t}"
    );
    // Secure Boot off: the same tree passes this check.
    let (_d, root) = copy_of("secure-boot-blocks-dkms");
    put(
        &root,
        "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        &[6, 0, 0, 0, 0],
    );
    assert_eq!(
        find(&doctor_at(&root, None), "boot.secure-boot").status,
        Status::Pass
    );
}

#[test]
fn a_known_bad_firmware_is_a_yaml_edit_away() {
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    let m = tempfile::tempdir().unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("matrices");
    for f in [
        "rocm.yaml",
        "cuda.yaml",
        "ngc.yaml",
        "gpus.yaml",
        "firmware.yaml",
    ] {
        std::fs::copy(repo.join(f), m.path().join(f)).unwrap();
    }
    let mut fw = std::fs::read_to_string(m.path().join("firmware.yaml")).unwrap();
    fw.push_str(
        "  - {component: mec, gfx: [gfx942], versions: [\"0x0000008a\"], problem: \"test entry\", fix: \"update the firmware\", source: \"https://example.com/advisory\"}\n",
    );
    std::fs::write(m.path().join("firmware.yaml"), fw).unwrap();
    let r = doctor_at(&root, Some(m.path()));
    let fails: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.id == "firmware.known-bad" && f.status == Status::Fail)
        .collect();
    assert_eq!(fails.len(), 4, "{:#?}", faults(&r));
    let t = text(fails[0]);
    assert!(
        t.starts_with(
            "GPU 0 (AMD Instinct MI300X, 0000:26:00.0): mec firmware 0x0000008a is known bad"
        ),
        "{t}"
    );
    assert!(
        t.contains("read /sys/bus/pci/devices/0000:26:00.0/fw_version/mec_fw_version"),
        "{t}"
    );
    assert_eq!(fails[0].subject.as_deref(), Some("0000:26:00.0"));
}

#[test]
fn the_shipped_list_names_mes_0x83_on_strix_halo() {
    // The 780M tree made a gfx1151 (Strix Halo) with MES 0x83, the firmware of ROCm/ROCm#5724.
    let (_d, root) = copy_of("radeon780m-apu-ubuntu2404");
    let props = root.join("sys/class/kfd/kfd/topology/nodes/1/properties");
    let p = std::fs::read_to_string(&props).unwrap();
    std::fs::write(
        &props,
        p.replace("gfx_target_version 110003", "gfx_target_version 110501"),
    )
    .unwrap();
    put(
        &root,
        "sys/class/kfd/kfd/topology/nodes/1/name",
        b"gfx1151\n",
    );
    put(
        &root,
        "sys/bus/pci/devices/0000:c1:00.0/fw_version/mes_fw_version",
        b"0x00000083\n",
    );
    let r = doctor_at(&root, None);
    let f = find(&r, "firmware.known-bad");
    assert_eq!(f.status, Status::Fail, "{f:?}");
    assert!(
        text(f).contains("mes firmware 0x00000083 is known bad") && text(f).contains("issues/5724")
    );
}

#[test]
fn malformed_files_skip_with_a_reason() {
    let (_d, root) = copy_of("mi300x-x4-next-kernel-no-dkms");
    put(
        &root,
        "boot/grub/grub.cfg",
        b"menuentry Ubuntu {\n}\n\x00\x01",
    );
    put(
        &root,
        "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        &[6, 0, 0],
    );
    put(
        &root,
        "sys/bus/pci/devices/0000:26:00.0/fw_version/mec_fw_version",
        b"banana\n",
    );
    let r = doctor_at(&root, None);
    let next = find(&r, "boot.next-kernel");
    assert_eq!(next.status, Status::Skip);
    assert!(
        next.summary.contains("/boot/grub/grub.cfg"),
        "{}",
        next.summary
    );
    let sb = find(&r, "boot.secure-boot");
    assert_eq!(sb.status, Status::Skip);
    assert!(sb.summary.contains("is 3 bytes"), "{}", sb.summary);
    let fw = r
        .findings
        .iter()
        .find(|f| f.id == "firmware.known-bad" && f.subject.as_deref() == Some("0000:26:00.0"))
        .unwrap();
    assert_eq!(fw.status, Status::Skip);
    assert!(
        fw.summary.contains("`banana` is not a hex version"),
        "{}",
        fw.summary
    );
    let (_d2, root) = copy_of("mi300x-x4-next-kernel-no-dkms");
    put(
        &root,
        "boot/grub/grub.cfg",
        b"menuentry 'Ubuntu' {\n\tlinux /boot/vmlinuz-5.15.0-130-generic\n}\n",
    );
    put(&root, "boot/grub/grubenv", b"saved_entry=nonesuch\n");
    put(&root, "etc/default/grub", b"GRUB_DEFAULT=saved\n");
    let next = doctor_at(&root, None);
    let next = find(&next, "boot.next-kernel");
    assert_eq!(next.status, Status::Skip);
    assert!(
        next.summary.contains("no menu entry `nonesuch`"),
        "{}",
        next.summary
    );
}

#[test]
fn a_bundle_of_a_fault_tree_gives_the_same_boot_findings() {
    let (d, root) = copy_of("mi300x-x4-next-kernel-no-dkms");
    put(&root, "proc/sys/kernel/numa_balancing", b"1\n");
    let bundle = d.path().join("b.tar.zst");
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    let run = |args: &[&str]| {
        let o = Command::new(bin)
            .args(args)
            .env_remove("ROCMENV_MATRICES")
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    run(&[
        "collect",
        "--sysroot",
        root.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(bundle.exists());
    let boot = |json: String| -> Vec<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["id"].as_str().unwrap().starts_with("boot.") || c["id"] == "firmware.known-bad"
            })
            .cloned()
            .collect()
    };
    let tree = boot(run(&[
        "doctor",
        "--json",
        "--sysroot",
        root.to_str().unwrap(),
    ]));
    let back = boot(run(&[
        "doctor",
        "--json",
        "--sysroot",
        bundle.to_str().unwrap(),
    ]));
    assert_eq!(tree, back);
    assert!(tree
        .iter()
        .any(|c| c["id"] == "boot.next-kernel-module" && c["status"] == "warn"));
    assert!(tree
        .iter()
        .any(|c| c["id"] == "boot.numa-balancing" && c["status"] == "warn"));
}

#[test]
fn a_bls_host_boots_the_entry_grub_saved() {
    // RHEL 9: grub.cfg loads the Boot Loader Specification entries (`blscfg`), grubenv names the saved entry's id.
    let (_d, root) = copy_of("rhel94-mi300x-x8");
    put(
        &root,
        "boot/grub2/grub.cfg",
        b"set default=\"${saved_entry}\"\ninsmod blscfg\nblscfg\n",
    );
    put(
        &root,
        "boot/grub2/grubenv",
        b"# GRUB Environment Block\nsaved_entry=0123abcd-5.14.0-503.11.1.el9_5.x86_64\n",
    );
    for (id, k) in [
        (
            "0123abcd-5.14.0-427.22.1.el9_4.x86_64",
            "5.14.0-427.22.1.el9_4.x86_64",
        ),
        (
            "0123abcd-5.14.0-503.11.1.el9_5.x86_64",
            "5.14.0-503.11.1.el9_5.x86_64",
        ),
    ] {
        let conf = format!("title Red Hat Enterprise Linux ({k}) 9.4 (Plow)\nversion {k}\nlinux /vmlinuz-{k}\ninitrd /initramfs-{k}.img\noptions root=/dev/mapper/rhel-root ro\n");
        put(
            &root,
            &format!("boot/loader/entries/{id}.conf"),
            conf.as_bytes(),
        );
    }
    let r = doctor_at(&root, None);
    let next = find(&r, "boot.next-kernel");
    assert_ne!(next.status, Status::Skip, "{next:?}");
    let t = text(next);
    assert!(
        t.contains("next-boot kernel 5.14.0-503.11.1.el9_5.x86_64"),
        "{t}"
    );
    assert!(
        t.contains("saved_entry of /boot/grub2/grubenv, in /boot/loader/entries"),
        "{t}"
    );
    // The dkms driver runs today and the next kernel has no build of it.
    let m = text(find(&r, "boot.next-kernel-module"));
    assert!(
        m.contains("sudo dnf install kernel-devel-5.14.0-503.11.1.el9_5.x86_64"),
        "{m}"
    );
}
