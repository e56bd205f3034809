//! fix's work: plan the actions for the context's host (a tree with `--sysroot`, else this machine) from its facts,
//! its files and the host plan; apply them with a journal; undo them from the journal.

mod cdi;
mod install;
mod journal;

pub use crate::fix::{Applied, FixPlan, FixRoot, Undone};
pub use journal::{apply, undo};

use super::plan::{resolve, PlanRequest};
use super::Ctx;
use crate::error::Error;
use crate::fix::{plan_docker_runtime, plan_groups, plan_profiles, ProfileFile, TargetUser};
use crate::host::{DeviceNode, HostFacts, HostRoot};
use crate::target::TargetSpec;

/// What fix is asked.
#[derive(Debug, Clone, Default)]
pub struct FixRequest {
    /// `--only ID|AREA`: an action id (`fix.groups`), a finding id it fixes (`devices.kfd`) or that id's area
    /// (`devices`).
    pub only: Option<String>,
    /// `--user NAME`: whose access and login files to fix; default: `$SUDO_USER` under sudo, else who runs
    /// rocmenv (on a tree: the user it recorded).
    pub user: Option<String>,
    /// `--target`: the release the host plan and the install commands are for; default: the host's own.
    pub target: Option<TargetSpec>,
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
    let live = root == FixRoot::Live;
    let (udev, opened) = udev_rule(&host.root, facts, &group, live, &mut notes);
    actions.extend(udev);
    match (&user, &name) {
        (Some(u), _) => {
            let nodes: Vec<(&str, &DeviceNode)> = opened.iter().map(|(id, n)| (*id, n)).collect();
            actions.extend(plan_groups(u, &nodes, &group, live));
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
    let (blacklist, said) = blacklist(&host.root, facts, live);
    let blacklisted = !facts.boot.amdgpu_blacklist.is_empty();
    actions.extend(blacklist);
    notes.extend(said);
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
    let hp = resolve(
        ctx,
        &PlanRequest {
            target: req.target.clone(),
            ..PlanRequest::default()
        },
    )?;
    let visible = (facts.amd_gpus().count(), facts.nvidia_gpus().count());
    let files = profile_files(&host.root, user.as_ref(), &passwd);
    actions.extend(plan_profiles(&files, &hp.env, visible));
    let (cdi, cdi_notes) = cdi::plan_cdi(&host.root, facts, root == FixRoot::Live);
    actions.extend(cdi);
    notes.extend(cdi_notes);
    let missing = install::missing(ctx, &host.root, facts, &hp, blacklisted);
    let (install, said) = crate::fix::plan_install(facts.os.as_ref(), &missing);
    actions.extend(install);
    notes.extend(said);
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

/// The AMD device nodes with the finding each is checked by (none without an AMD GPU).
fn amd_nodes(facts: &HostFacts) -> Vec<(&'static str, DeviceNode)> {
    if facts.amd_gpus().next().is_none() {
        return Vec::new();
    }
    let kfd = facts
        .device_nodes
        .kfd
        .iter()
        .map(|n| ("devices.kfd", n.clone()));
    let render = facts
        .device_nodes
        .render
        .iter()
        .map(|n| ("devices.render", n.clone()));
    kfd.chain(render).collect()
}

/// The udev rule for nodes closed to the render group, and the nodes as they are once it applies (the rule's
/// `render` group and mode `0660`), for the group fix to judge.
fn udev_rule(
    root: &HostRoot,
    facts: &HostFacts,
    group: &str,
    live: bool,
    notes: &mut Vec<String>,
) -> (Vec<crate::fix::Action>, Vec<(&'static str, DeviceNode)>) {
    let mut nodes = amd_nodes(facts);
    let existing = root.read_text(crate::fix::UDEV_RULE).ok();
    let refs: Vec<(&str, &DeviceNode)> = nodes.iter().map(|(id, n)| (*id, n)).collect();
    let (actions, said) = crate::fix::plan_udev(&refs, group, existing.as_deref(), live);
    notes.extend(said);
    let ruled =
        !actions.is_empty() || existing.as_deref() == Some(crate::fix::udev_rule_text().as_str());
    let render = crate::host::parse_groups(group)
        .into_iter()
        .find(|(n, _, _)| n == "render")
        .map(|(_, g, _)| g);
    if let (true, Some(gid)) = (ruled, render) {
        for (_, n) in nodes.iter_mut() {
            n.mode = Some("0660".into());
            n.gid = Some(gid);
            n.group = Some("render".into());
        }
    }
    (actions, nodes)
}

/// The amdgpu blacklist in `/etc/modprobe.d` (removed) and elsewhere (named), for a host with AMD GPUs.
fn blacklist(
    root: &HostRoot,
    facts: &HostFacts,
    live: bool,
) -> (Vec<crate::fix::Action>, Vec<String>) {
    if facts.amd_gpus().next().is_none() || facts.wsl {
        return (Vec::new(), Vec::new());
    }
    let read = |dir: &str| -> Vec<crate::fix::ModprobeFile> {
        let mut names = root.list(dir).unwrap_or_default();
        names.sort();
        names
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
            .filter_map(|n| {
                let path = format!("{dir}/{n}");
                let text = root.read_text(&path).ok()?;
                Some(crate::fix::ModprobeFile { path, text })
            })
            .collect()
    };
    let etc = read("/etc/modprobe.d");
    let packaged: Vec<_> = crate::host::MODPROBE_DIRS[1..]
        .iter()
        .flat_map(|d| read(d))
        .collect();
    let cmdline = facts.boot.cmdline.clone().unwrap_or_default();
    let family = install::family(facts);
    let initramfs = crate::fix::initramfs_command(family.0, family.1);
    crate::fix::plan_blacklist(&etc, &packaged, &cmdline, initramfs, live)
}
