//! fix's work: plan the actions for the context's host (a tree with `--sysroot`, else this machine) from its facts,
//! its files and the host plan; apply them with a journal; undo them from the journal.

mod cdi;
mod journal;

pub use crate::fix::{Applied, FixPlan, FixRoot, Undone};
pub use journal::{apply, undo};

use super::plan::{resolve, PlanRequest};
use super::Ctx;
use crate::error::Error;
use crate::fix::{plan_docker_runtime, plan_groups, plan_profiles, ProfileFile, TargetUser};
use crate::host::HostRoot;

/// What fix is asked.
#[derive(Debug, Clone, Default)]
pub struct FixRequest {
    /// `--only ID|AREA`: an action id (`fix.groups`), a finding id it fixes (`devices.kfd`) or that id's area
    /// (`devices`).
    pub only: Option<String>,
    /// `--user NAME`: whose access and login files to fix; default: `$SUDO_USER` under sudo, else who runs
    /// rocmenv (on a tree: the user it recorded).
    pub user: Option<String>,
}

/// Plans the actions for the context's host.
pub fn plan(ctx: &Ctx, req: &FixRequest) -> Result<FixPlan, Error> {
    let host = ctx.host()?;
    let facts = &host.facts;
    let root = match &ctx.host_spec().sysroot {
        None => FixRoot::Live,
        Some(p) if p.is_dir() => FixRoot::Tree(p.clone()),
        Some(p) => FixRoot::Bundle(p.clone()),
    };
    let mut notes = Vec::new();
    let name = req.user.clone().or_else(|| match root {
        FixRoot::Live if facts.user.as_ref().is_some_and(|u| u.uid == 0) => {
            std::env::var("SUDO_USER").ok().filter(|u| !u.is_empty())
        }
        _ => None,
    });
    let name = name.or_else(|| facts.user.as_ref().and_then(|u| u.name.clone()));
    let passwd = host.root.read_text("/etc/passwd").unwrap_or_default();
    let group = host.root.read_text("/etc/group").unwrap_or_default();
    let user = name
        .as_deref()
        .and_then(|n| TargetUser::from_files(n, &passwd, &group));
    let mut actions = Vec::new();
    match (&user, &name) {
        (Some(u), _) => {
            let mut nodes = Vec::new();
            if facts.amd_gpus().next().is_some() {
                nodes.extend(facts.device_nodes.kfd.iter().map(|n| ("devices.kfd", n)));
                nodes.extend(
                    facts
                        .device_nodes
                        .render
                        .iter()
                        .map(|n| ("devices.render", n)),
                );
            }
            actions.extend(plan_groups(u, &nodes, &group, root == FixRoot::Live));
        }
        (None, Some(n)) => notes.push(format!(
            "groups: {n} is not in /etc/passwd, so its groups are not planned"
        )),
        (None, None) => {
            notes.push("groups: who to fix is unknown; name the user with --user".into())
        }
    }
    if let Some(a) = docker_runtime(&host.root, facts, &mut notes) {
        actions.push(a);
    }
    let live = root == FixRoot::Live;
    let dropin = host.root.read_text(crate::fix::GRUB_DROPIN).ok();
    let (params, said) = crate::fix::plan_kernel_params(facts, dropin.as_deref(), live);
    actions.extend(params);
    notes.extend(said);
    let sysctl = host.root.read_text(crate::fix::SYSCTL_CONF).ok();
    actions.extend(crate::fix::plan_numa_balancing(
        facts,
        sysctl.as_deref(),
        live,
    ));
    let hp = resolve(ctx, &PlanRequest::default())?;
    let visible = (facts.amd_gpus().count(), facts.nvidia_gpus().count());
    let files = profile_files(&host.root, user.as_ref(), &passwd);
    actions.extend(plan_profiles(&files, &hp.env, visible));
    let (cdi, cdi_notes) = cdi::plan_cdi(&host.root, facts, root == FixRoot::Live);
    actions.extend(cdi);
    notes.extend(cdi_notes);
    if let Some(only) = &req.only {
        actions.retain(|a| {
            a.id == only
                || a.fixes
                    .iter()
                    .any(|f| f == only || f.split('.').next() == Some(only.as_str()))
        });
    }
    Ok(FixPlan {
        root,
        user: user.map(|u| u.name).or(name),
        actions,
        notes,
    })
}

/// Docker's nvidia runtime, for NVIDIA GPUs that Docker cannot hand to containers (no runtime, no NVIDIA CDI spec).
fn docker_runtime(
    root: &HostRoot,
    facts: &crate::host::HostFacts,
    notes: &mut Vec<String>,
) -> Option<crate::fix::Action> {
    let c = &facts.container;
    let nvidia_cdi = c.cdi_specs.iter().any(|s| {
        s.kind
            .as_deref()
            .is_some_and(|k| k.starts_with("nvidia.com/"))
    });
    if facts.nvidia_gpus().next().is_none()
        || c.docker_runtimes.iter().any(|r| r == "nvidia")
        || nvidia_cdi
    {
        return None;
    }
    let installed = ["/usr/bin", "/usr/local/bin", "/usr/sbin"]
        .iter()
        .any(|d| root.exists(&format!("{d}/nvidia-container-runtime")));
    let current = root.read_text(crate::fix::DAEMON_JSON).ok();
    plan_docker_runtime(current.as_deref(), installed)
        .map_err(|n| notes.push(n))
        .ok()
}

/// The login files that can set the GPU variables: `/etc/environment`, `/etc/profile.d/*.sh` (ours marked), and the
/// user's `~/.profile` and `~/.bashrc`.
fn profile_files(root: &HostRoot, user: Option<&TargetUser>, passwd: &str) -> Vec<ProfileFile> {
    let mut paths: Vec<String> = vec!["/etc/environment".into()];
    if let Ok(mut names) = root.list("/etc/profile.d") {
        names.sort();
        paths.extend(
            names
                .into_iter()
                .filter(|n| n.ends_with(".sh"))
                .map(|n| format!("/etc/profile.d/{n}")),
        );
    }
    let home = user.and_then(|u| {
        passwd.lines().find_map(|l| {
            let p: Vec<&str> = l.split(':').collect();
            (p.len() > 5 && p[0] == u.name && p[5].starts_with('/'))
                .then(|| p[5].trim_end_matches('/').to_string())
        })
    });
    if let Some(h) = home {
        paths.push(format!("{h}/.profile"));
        paths.push(format!("{h}/.bashrc"));
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let text = root.read_text(&p).ok()?;
            Some(ProfileFile {
                ours: p == crate::fix::PERSIST,
                path: p,
                text,
            })
        })
        .collect()
}
