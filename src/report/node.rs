//! The node a report describes, so `rocmenv report merge` can put many hosts' reports in one table.

/// The variable a Kubernetes manifest sets from the downward API (`spec.nodeName`): inside a pod the hostname is the
/// pod's, not the node's.
pub const NODE_ENV: &str = "ROCMENV_NODE_NAME";

/// The node a report describes: `ROCMENV_NODE_NAME` when set and not empty (also for a `--sysroot` tree, which a pod
/// reads at `/host` and a fleet names), else the hostname for the live host, else `None`: a tree nobody named is not
/// this machine.
pub fn node_name(live: bool) -> Option<String> {
    match std::env::var(NODE_ENV) {
        Ok(v) if !v.trim().is_empty() => Some(v.trim().to_string()),
        _ if live => Some(crate::engine::hostname()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_no_node_and_the_live_host_has_a_name() {
        if std::env::var_os(NODE_ENV).is_none() {
            assert_eq!(node_name(false), None);
        }
        let live = node_name(true).expect("the live host has a name");
        assert!(!live.is_empty());
    }
}
