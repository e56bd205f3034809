//! Who created a container: the host, pid and process start time of the rocmenv that ran it, kept in labels so
//! `rocmenv gc` can tell a live run's container from one a crash left behind.

use std::collections::HashMap;
use std::path::Path;

/// The label holding the owner's host name.
pub const OWNER_HOST_LABEL: &str = "rocmenv.owner.host";
/// The label holding the owner's pid.
pub const OWNER_PID_LABEL: &str = "rocmenv.owner.pid";
/// The label holding the owner's start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot).
pub const OWNER_START_LABEL: &str = "rocmenv.owner.start";

/// The rocmenv process that created a container.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Owner {
    /// The host name it ran on.
    pub host: String,
    /// Its pid.
    pub pid: u32,
    /// Its start time in clock ticks since boot; with the pid it names one process even after the pid is reused.
    pub start: u64,
}

/// Whether a container's owner still runs, as far as this host can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The owner runs on this host: its run will remove the container itself.
    Alive,
    /// The owner was on this host and is gone (pid absent, or reused by another process).
    Gone,
    /// The owner ran on another host (a shared daemon): its process cannot be checked from here.
    OtherHost,
    /// The container carries no owner labels (made by an older rocmenv, or by hand).
    Unknown,
}

impl Owner {
    /// This process, read through `proc_root` (`/proc` live); `None` when its start time cannot be read.
    pub fn current_in(proc_root: &Path) -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            host: hostname(),
            pid,
            start: start_time(proc_root, pid)?,
        })
    }

    /// This process.
    pub fn current() -> Option<Owner> {
        Owner::current_in(Path::new("/proc"))
    }

    /// The labels that record this owner on a container.
    pub fn labels(&self) -> [(String, String); 3] {
        [
            (OWNER_HOST_LABEL.to_string(), self.host.clone()),
            (OWNER_PID_LABEL.to_string(), self.pid.to_string()),
            (OWNER_START_LABEL.to_string(), self.start.to_string()),
        ]
    }

    /// The owner a container's labels record, or `None` when they are missing or malformed.
    pub fn from_labels(labels: &HashMap<String, String>) -> Option<Owner> {
        Some(Owner {
            host: labels.get(OWNER_HOST_LABEL)?.clone(),
            pid: labels.get(OWNER_PID_LABEL)?.parse().ok()?,
            start: labels.get(OWNER_START_LABEL)?.parse().ok()?,
        })
    }
}

/// Whether `owner` still runs, judged from `host` (this host's name) and its process table under `proc_root`.
pub fn liveness(owner: Option<&Owner>, host: &str, proc_root: &Path) -> Liveness {
    match owner {
        None => Liveness::Unknown,
        Some(o) if o.host != host => Liveness::OtherHost,
        // A pid that now names a process started at another time is a reused pid: the owner is gone.
        Some(o) => match start_time(proc_root, o.pid) {
            Some(start) if start == o.start => Liveness::Alive,
            _ => Liveness::Gone,
        },
    }
}

/// This host's name (`gethostname(2)`), or `unknown`.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into a buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Field 22 (`starttime`) of `<proc_root>/<pid>/stat`, or `None` when the process does not exist.
pub fn start_time(proc_root: &Path, pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    parse_start_time(&stat)
}

/// `starttime` from the text of `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses, so
/// fields are counted after its last `)`: that is field 3, and starttime is field 22.
pub fn parse_start_time(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real /proc/<pid>/stat line (bash), with a command name that holds `) (` to show the last `)` is used.
    const STAT: &str = "4242 (my) (prog) S 1 4242 4242 34816 4242 4194560 1108 0 0 0 1 0 0 0 20 0 1 0 \
                        987654 8966144 1345 18446744073709551615 1 1 0 0 0 0 65536 3670020 1266777851 0 0 0 17 \
                        1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    fn proc_tree(pid: u32, stat: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(pid.to_string())).unwrap();
        std::fs::write(d.path().join(pid.to_string()).join("stat"), stat).unwrap();
        d
    }

    #[test]
    fn start_time_is_field_22_after_the_command_name() {
        assert_eq!(parse_start_time(STAT), Some(987654));
        assert_eq!(parse_start_time("garbage"), None);
        assert_eq!(parse_start_time("1 (x) S 1 2"), None);
    }

    /// Issue 10: gc removed running containers of live runs; the owner recorded in labels tells them apart.
    #[test]
    fn an_owner_is_alive_only_with_the_same_host_pid_and_start_time() {
        let root = proc_tree(4242, STAT);
        let owner = |host: &str, pid, start| Owner {
            host: host.into(),
            pid,
            start,
        };
        let alive = owner("node1", 4242, 987654);
        assert_eq!(
            liveness(Some(&alive), "node1", root.path()),
            Liveness::Alive
        );
        // The pid was reused by a process that started later.
        let reused = owner("node1", 4242, 11);
        assert_eq!(
            liveness(Some(&reused), "node1", root.path()),
            Liveness::Gone
        );
        let dead = owner("node1", 999, 987654);
        assert_eq!(liveness(Some(&dead), "node1", root.path()), Liveness::Gone);
        assert_eq!(
            liveness(Some(&alive), "node2", root.path()),
            Liveness::OtherHost
        );
        assert_eq!(liveness(None, "node1", root.path()), Liveness::Unknown);
    }

    #[test]
    fn labels_round_trip_and_this_process_is_alive() {
        let me = Owner::current().expect("/proc/self/stat is readable");
        let labels: HashMap<String, String> = me.labels().into_iter().collect();
        assert_eq!(Owner::from_labels(&labels), Some(me.clone()));
        assert_eq!(
            liveness(Some(&me), &hostname(), Path::new("/proc")),
            Liveness::Alive
        );
        let mut bad = labels.clone();
        bad.insert(OWNER_PID_LABEL.into(), "x".into());
        assert_eq!(Owner::from_labels(&bad), None);
    }
}
