//! Issue 13, "host trees that fight back": `--sysroot` trees that try to make rocmenv read outside them, hang or die.
//! Each test copies a real fixture (so the tree is a valid host), adds the hostile part, runs the binary under a time
//! limit, and asserts the exact exit code and that the finding names the path.

use serde_json::Value;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// A run that takes longer than this hung: a healthy doctor on a fixture takes well under a second.
const LIMIT: Duration = Duration::from_secs(30);

/// MI300X ×4 on Ubuntu 22.04 with amdgpu-dkms 6.8.5: doctor exits 0 on it as captured.
const BASE: &str = "mi300x-x4-ubuntu2204";
/// One of its GPUs, KFD node 2.
const GPU: &str = "0000:26:00.0";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

/// Copies a tree, links as links.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let t = entry.file_type().unwrap();
        if t.is_symlink() {
            symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A copy of the base fixture in a temporary directory that any user can enter (for the unprivileged run).
fn host() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    copy_tree(&fixture(BASE), &d.path().join("tree"));
    d
}

fn tree(d: &tempfile::TempDir) -> PathBuf {
    d.path().join("tree")
}

/// Replaces a file of the tree (or adds one), making its directory.
fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&p);
    fs::write(p, bytes).unwrap();
}

fn link(root: &Path, rel: &str, target: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&p);
    symlink(target, p).unwrap();
}

fn mkfifo(p: &Path) {
    let _ = fs::remove_file(p);
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path we own.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {p:?}"
    );
}

/// What one run of the binary gave.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: stdout {}\nstderr {}", self.stdout, self.stderr))
    }

    /// The reasons recorded for a fact that could not be read.
    fn unavailable(&self, fact: &str) -> Vec<String> {
        self.json()["host"]["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["fact"] == fact)
            .map(|u| u["reason"].as_str().unwrap().to_string())
            .collect()
    }

    /// The status of a check.
    fn check(&self, id: &str) -> String {
        self.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no check {id}"))["status"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// Runs `rocmenv ARGS` with output to files (a full pipe cannot stall it), killing it at `LIMIT`.
fn rocmenv_as(args: &[&str], user: Option<u32>, emulated: bool) -> Run {
    let out = tempfile::tempdir().unwrap();
    let (o, e) = (out.path().join("out"), out.path().join("err"));
    let mut bin = PathBuf::from(env!("CARGO_BIN_EXE_rocmenv"));
    if user.is_some() {
        // The checkout may sit where another user cannot reach (under /root): run a copy that user can.
        fs::set_permissions(out.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let copy = out.path().join("rocmenv");
        fs::copy(&bin, &copy).unwrap();
        bin = copy;
    }
    let mut cmd = Command::new(&bin);
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&o).unwrap())
        .stderr(fs::File::create(&e).unwrap());
    if emulated {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure only makes syscalls (prctl, syscall), which is what pre_exec allows.
        unsafe { cmd.pre_exec(deny_openat2) };
    }
    if let Some(uid) = user {
        use std::os::unix::process::CommandExt;
        cmd.uid(uid).gid(uid).env("HOME", "/");
    }
    let start = Instant::now();
    // The copy above may still be open for writing in a child another test thread is forking at that moment
    // (the fd is inherited until that child's exec closes it): exec then fails with ETXTBSY for a moment.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => break r.unwrap(),
        }
    };
    let status = match child.wait_timeout(LIMIT).unwrap() {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rocmenv {args:?} hung: killed after {LIMIT:?}");
        }
    };
    Run {
        code: status.code().expect("exited, not signalled"),
        stdout: fs::read_to_string(o).unwrap(),
        stderr: fs::read_to_string(e).unwrap(),
        took: start.elapsed(),
    }
}

/// A seccomp filter that answers openat2 with ENOSYS, as kernels before 5.6 (and some container profiles) do, so
/// the resolver's fallback is tested on any kernel. It checks that it works before the binary starts.
fn deny_openat2() -> std::io::Result<()> {
    const NR_OPENAT2: u32 = 437; // the same number on every architecture (the unified syscall table)
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let filter = [
        // A = the syscall number (offset 0 of struct seccomp_data)
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: NR_OPENAT2,
        },
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut _,
    };
    // SAFETY: prctl with a filter that lives for the call; no_new_privs first, as unprivileged seccomp requires.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let how = [0u64; 3];
        let r = libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            how.as_ptr(),
            24usize,
        );
        // No allocation after fork: a kind, not a message.
        if r != -1 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS) {
            return Err(std::io::ErrorKind::Unsupported.into());
        }
    }
    Ok(())
}

/// `doctor --json` on a tree, twice: with openat2 and with the resolver's fallback. Both must say the same.
fn doctor(root: &Path) -> Run {
    let args = ["doctor", "--sysroot", root.to_str().unwrap(), "--json"];
    let kernel = rocmenv_as(&args, None, false);
    let fallback = rocmenv_as(&args, None, true);
    assert_eq!(
        (kernel.code, &kernel.stdout),
        (fallback.code, &fallback.stdout),
        "openat2 and the fallback differ; fallback stderr: {}",
        fallback.stderr
    );
    kernel
}

/// The base fixture passes as captured, so a changed exit code below is the hostile part's doing.
#[test]
fn the_base_tree_passes() {
    let d = host();
    let r = doctor(&tree(&d));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["host"]["unavailable"], serde_json::json!([]));
}

/// An absolute link resolves inside the tree, as in a chroot: `/etc/os-release -> /<outside>/os` reads
/// `<tree>/<outside>/os`, never the file of the same name on the host running rocmenv.
#[test]
fn an_absolute_symlink_resolves_inside_the_tree() {
    let d = host();
    let root = tree(&d);
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("os");
    fs::write(&secret, "ID=outside-marker-7f3a\nVERSION_ID=\"99\"\n").unwrap();
    let real = fs::read(root.join("etc/os-release")).unwrap();
    put(
        &root,
        secret.strip_prefix("/").unwrap().to_str().unwrap(),
        &real,
    );
    link(&root, "etc/os-release", secret.to_str().unwrap());
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["host"]["os"]["id"], "ubuntu");
    assert!(!r.stdout.contains("outside-marker-7f3a"), "{}", r.stdout);
}

/// A link to a file that exists only outside the tree (the real `/etc/shadow`, a marker file) reads nothing, and
/// says the path does not exist in the tree.
#[test]
fn an_absolute_symlink_to_the_real_host_reads_nothing() {
    let d = host();
    let root = tree(&d);
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("os-release");
    fs::write(&secret, "ID=outside-marker-91c2\n").unwrap();
    link(&root, "etc/os-release", secret.to_str().unwrap());
    link(&root, "proc/cpuinfo", "/etc/shadow");
    let r = doctor(&root);
    assert_eq!(r.code, 0, "skips, not failures: {}", r.stderr);
    assert!(!r.stdout.contains("outside-marker-91c2"), "{}", r.stdout);
    assert_eq!(
        r.unavailable("os"),
        ["/etc/os-release: does not exist (nor /usr/lib/os-release)"]
    );
    assert_eq!(r.unavailable("cpu"), ["/proc/cpuinfo: does not exist"]);
    assert_eq!(r.check("os.rocm-supported"), "skip");
}

/// `..` stops at the tree's root: a relative link that climbs past it lands inside the tree.
#[test]
fn dotdot_cannot_climb_out_of_the_tree() {
    let d = host();
    let root = tree(&d);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("version"), "9.9.9-outside-marker\n").unwrap();
    let inside = outside.path().strip_prefix("/").unwrap().join("version");
    put(&root, inside.to_str().unwrap(), b"6.8.5\n");
    let climb = format!("{}{}", "../".repeat(30), inside.display());
    link(&root, "sys/module/amdgpu/version", &climb);
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["host"]["amdgpu_driver"]["version"], "6.8.5");
    assert!(!r.stdout.contains("outside-marker"), "{}", r.stdout);
}

/// Symlink loops end (ELOOP) with the path named, absolute and relative, and in a directory on the way.
#[test]
fn symlink_loops_end_with_a_finding() {
    let d = host();
    let root = tree(&d);
    link(&root, "etc/os-release", "/etc/os-release.b");
    link(&root, "etc/os-release.b", "/etc/os-release");
    link(&root, "proc/cpuinfo", "cpuinfo");
    fs::remove_dir_all(root.join("sys/module/amdgpu")).unwrap();
    link(&root, "sys/module/amdgpu", "../module/amdgpu");
    let r = doctor(&root);
    assert_eq!(
        r.unavailable("os"),
        ["/etc/os-release: is a symlink loop (or a chain of too many links)"]
    );
    assert_eq!(
        r.unavailable("cpu"),
        ["/proc/cpuinfo: is a symlink loop (or a chain of too many links)"]
    );
    // A loop where the module directory should be is a module not loaded: exit 1 with the fix, not a hang.
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.check("driver.amdgpu-loaded"), "fail");
}

/// A FIFO, a socket or a device node where a procfs or sysfs file belongs is never opened: a blocking read of a
/// FIFO with no writer would hang doctor forever.
#[test]
fn fifos_sockets_and_device_nodes_are_never_opened() {
    let d = host();
    let root = tree(&d);
    mkfifo(&root.join("proc/cpuinfo"));
    mkfifo(&root.join(format!("sys/bus/pci/devices/{GPU}/current_link_speed")));
    let _ = fs::remove_file(root.join("sys/module/amdgpu/initstate"));
    let _sock =
        std::os::unix::net::UnixListener::bind(root.join("sys/module/amdgpu/initstate")).unwrap();
    // mknod needs CAP_MKNOD: tests run as root; elsewhere that one case is skipped, and says so.
    let meminfo = root.join("proc/meminfo");
    fs::remove_file(&meminfo).unwrap();
    let c = std::ffi::CString::new(meminfo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path we own; (1, 5) is /dev/zero, which a read would never finish.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) } == 0;
    if !made {
        eprintln!("SKIP the device-node case: mknod needs CAP_MKNOD");
        fs::write(&meminfo, "MemTotal: 1 kB\n").unwrap();
    }
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.unavailable("cpu"),
        ["/proc/cpuinfo: is a named pipe (FIFO), not a file: not opened, a read could block"]
    );
    assert_eq!(
        r.unavailable(&format!("pci {GPU}")),
        [format!("/sys/bus/pci/devices/{GPU}/current_link_speed: is a named pipe (FIFO), not a file: not opened, a read could block")]
    );
    assert_eq!(
        r.unavailable("amdgpu initstate"),
        ["/sys/module/amdgpu/initstate: is a socket, not a file: not opened"]
    );
    if made {
        assert_eq!(
            r.unavailable("memory"),
            ["/proc/meminfo: is a device node, not a file: not opened"]
        );
    }
}

/// `env` and `run --print` read the same trees through the same reader: they end too.
#[test]
fn env_and_run_print_end_on_a_fifo_tree() {
    let d = host();
    let root = tree(&d);
    let props = "sys/class/kfd/kfd/topology/nodes/2/properties";
    mkfifo(&root.join(props));
    mkfifo(&root.join("etc/os-release"));
    let sysroot = root.to_str().unwrap();
    let env = rocmenv_as(
        &["env", "--sysroot", sysroot, "--format", "json"],
        None,
        false,
    );
    assert_eq!(env.code, 0, "{}", env.stderr);
    let print = rocmenv_as(
        &[
            "run",
            "--print",
            "--sysroot",
            sysroot,
            "--image",
            "busybox",
            "--",
            "true",
        ],
        None,
        false,
    );
    assert_eq!(print.code, 0, "{}", print.stderr);
    assert!(print.stdout.contains("docker run"), "{}", print.stdout);
    let r = doctor(&root);
    assert_eq!(
        r.unavailable("kfd node 2"),
        [format!(
            "/{props}: is a named pipe (FIFO), not a file: not opened, a read could block"
        )]
    );
    assert_eq!(
        r.unavailable("os"),
        ["/etc/os-release: is a named pipe (FIFO), not a file: not opened, a read could block"]
    );
}

/// A 2 GB `/proc/cpuinfo` (sparse: it costs no disk) is read only in its first 16 MiB, and a 2 GB os-release not at
/// all; doctor stays fast and small.
#[test]
fn a_2gb_sparse_file_is_not_read_whole() {
    let d = host();
    let root = tree(&d);
    let cpuinfo = root.join("proc/cpuinfo");
    let head = fs::read(&cpuinfo).unwrap();
    fs::write(&cpuinfo, &head).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&cpuinfo)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    fs::File::create(root.join("etc/os-release"))
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.took < Duration::from_secs(10), "took {:?}", r.took);
    // The largest child this test binary waited for: reading 2 GB whole would need 2 GB.
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) },
        0
    );
    assert!(ru.ru_maxrss < 256 * 1024, "max RSS {} KiB", ru.ru_maxrss);
    let host = &r.json()["host"];
    assert!(
        host["cpu"]["model"].as_str().unwrap().contains("EPYC"),
        "the first part is parsed: {}",
        host["cpu"]
    );
    assert_eq!(
        r.unavailable("cpu cores"),
        ["/proc/cpuinfo: is larger than 16 MiB: only the processors in its first 16 MiB are counted"]
    );
    assert_eq!(
        r.unavailable("os"),
        ["/etc/os-release: is larger than 1 MiB: not read"]
    );
}

/// A directory where os-release belongs is named as such (not as missing, so `/usr/lib/os-release` is not tried).
#[test]
fn a_directory_where_a_file_belongs() {
    let d = host();
    let root = tree(&d);
    fs::remove_file(root.join("etc/os-release")).unwrap();
    fs::create_dir(root.join("etc/os-release")).unwrap();
    fs::remove_file(root.join(format!("sys/bus/pci/devices/{GPU}/numa_node"))).unwrap();
    fs::create_dir(root.join(format!("sys/bus/pci/devices/{GPU}/numa_node"))).unwrap();
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.unavailable("os"),
        ["/etc/os-release: is a directory, not a file"]
    );
    assert_eq!(
        r.unavailable(&format!("pci {GPU}")),
        [format!(
            "/sys/bus/pci/devices/{GPU}/numa_node: is a directory, not a file"
        )]
    );
    assert_eq!(r.check("os.rocm-supported"), "skip");
}

/// Bytes that are not UTF-8: os-release is refused with the offset, KFD properties keep their good lines and the
/// bad one is named.
#[test]
fn bytes_that_are_not_utf8() {
    let d = host();
    let root = tree(&d);
    let mut os = fs::read(root.join("etc/os-release")).unwrap();
    os.extend_from_slice(b"PRETTY_NAME=\"Ubuntu \xe9\xff\"\n");
    let at = os.iter().position(|b| *b == 0xe9).unwrap();
    put(&root, "etc/os-release", &os);
    let props = "sys/class/kfd/kfd/topology/nodes/2/properties";
    let mut p = fs::read(root.join(props)).unwrap();
    let bad = p.len();
    p.extend_from_slice(b"\xff\xfe junk\n");
    put(&root, props, &p);
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.unavailable("os"),
        [format!(
            "/etc/os-release: is not UTF-8 text (bad byte at offset {at})"
        )]
    );
    assert_eq!(
        r.unavailable("kfd node 2 text"),
        [format!("/{props}: is not UTF-8 text (bad byte at offset {bad}): lines that are not `name value` are skipped")]
    );
    let gpus = r.json()["host"]["gpus"].clone();
    let g = gpus
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["pci_address"] == GPU)
        .unwrap()
        .clone();
    assert_eq!(g["gfx"], "gfx942", "the good lines still count");
}

/// Files cut short: an os-release cut before its ID, KFD properties cut before `gfx_target_version`.
#[test]
fn truncated_files() {
    let d = host();
    let root = tree(&d);
    put(
        &root,
        "etc/os-release",
        b"PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubu",
    );
    let props = "sys/class/kfd/kfd/topology/nodes/2/properties";
    let p = fs::read_to_string(root.join(props)).unwrap();
    let cut = p.find("gfx_target_version").unwrap();
    put(&root, props, &p.as_bytes()[..cut + 5]);
    let r = doctor(&root);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.unavailable("os"), ["/etc/os-release has no ID"]);
    assert_eq!(r.check("os.rocm-supported"), "skip");
    let gpus = r.json()["host"]["gpus"].clone();
    let g = gpus
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["pci_address"] == GPU)
        .unwrap()
        .clone();
    // The node cannot be tied to its card: the card keeps the gfx its PCI id implies, marked as such.
    assert_eq!(
        (&g["kfd_node"], &g["gfx_source"]),
        (&Value::Null, &Value::from("pci-id")),
        "{g}"
    );
    assert_eq!(
        r.unavailable("kfd node 2"),
        [format!("/{props}: a GPU node with no location_id matches no PCI device (is the file cut short?)")]
    );
}

/// A file the user running rocmenv may not read. As root (CI) the run switches to `nobody`, which root's tests can
/// do; as a normal user the file is unreadable already.
#[test]
fn an_unreadable_file_is_named_not_fatal() {
    let d = host();
    let root = tree(&d);
    // SAFETY: geteuid only reads the process's credentials.
    let user = (unsafe { libc::geteuid() } == 0).then_some(65534);
    fs::set_permissions(
        root.join("etc/os-release"),
        fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let dir = root.join(format!("sys/bus/pci/devices/{GPU}"));
    fs::set_permissions(
        dir.join("max_link_width"),
        fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let r = rocmenv_as(
        &["doctor", "--sysroot", root.to_str().unwrap(), "--json"],
        user,
        false,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.unavailable("os"), ["/etc/os-release: permission denied"]);
    assert_eq!(
        r.unavailable(&format!("pci {GPU}")),
        [format!(
            "/sys/bus/pci/devices/{GPU}/max_link_width: permission denied"
        )]
    );
}
