//! The environment: `HSA_OVERRIDE_GFX_VERSION[_n]` wrong or needless; visible-devices variables naming GPUs that do not exist.

use super::gpu::amd_in_order;
use super::{Context, Finding, Status};
use crate::gfx::GfxTarget;
use crate::host::Gpu;
use crate::matrix::{GfxRun, RocmRelease};
use crate::version::Version;

const AREA: &str = "environment";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    // An environment that was not recorded is unknown, not empty: nothing set would be a false pass.
    if let Some(why) = cx.facts.why_unavailable("env") {
        return vec![
            Finding::new(
                "env.hsa-override",
                AREA,
                Status::Skip,
                format!("HSA_OVERRIDE_GFX_VERSION not checked: the environment is unknown ({why})"),
            ),
            Finding::new(
                "env.visible-devices",
                AREA,
                Status::Skip,
                format!(
                    "visible-devices variables not checked: the environment is unknown ({why})"
                ),
            ),
        ];
    }
    vec![hsa_override(cx), visible_devices(cx)]
}

/// The id of the `HSA_OVERRIDE_GFX_VERSION[_n]` check.
const HSA_ID: &str = "env.hsa-override";

/// What is wrong with one override variable: how bad, what, and the fix.
type Problem = (Status, String, String);

/// The AMD devices an override applies to: index in runtime order, and the GPU.
type Devices<'a> = Vec<(usize, &'a Gpu)>;

/// An override variable's verdict on one device it applies to.
enum DeviceVerdict {
    /// The override is the right one; says why.
    Fine(String),
    /// The override is needless or wrong.
    Problem(Problem),
}

/// Whether the `HSA_OVERRIDE_GFX_VERSION[_n]` variables set suit the AMD GPUs and the ROCm target.
fn hsa_override(cx: &Context) -> Finding {
    let vars: Vec<(&String, &String)> = cx
        .facts
        .env
        .iter()
        .filter(|(k, _)| k.starts_with("HSA_OVERRIDE_GFX_VERSION"))
        .collect();
    if vars.is_empty() {
        return Finding::new(
            HSA_ID,
            AREA,
            Status::Pass,
            "HSA_OVERRIDE_GFX_VERSION is not set",
        );
    }
    let amd = amd_in_order(cx);
    let shown = vars
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    if amd.is_empty() {
        return Finding::new(
            HSA_ID,
            AREA,
            Status::Warn,
            format!("{shown} is set, but there is no AMD GPU"),
        )
        .fix(format!(
            "unset {}",
            vars.iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            HSA_ID,
            AREA,
            Status::Skip,
            format!("{shown}: no ROCm target to judge it against"),
        );
    };
    let r = t.release;
    let mut problems: Vec<Problem> = Vec::new();
    let mut fine: Vec<String> = Vec::new();
    for (var, val) in &vars {
        let (over, targets) = match overridden_devices(cx, r, &amd, var, val) {
            Ok(x) => x,
            Err(p) => {
                problems.push(p);
                continue;
            }
        };
        for (i, g) in targets {
            let Some(own) = g.gfx else {
                continue;
            };
            match device_verdict(cx, r, (var, val, over), amd.len(), i, own) {
                DeviceVerdict::Fine(s) => fine.push(s),
                DeviceVerdict::Problem(p) => problems.push(p),
            }
        }
    }
    overrides_finding(problems, fine)
}

/// The target `var=val` names and the AMD devices (index, GPU) it applies to, or
/// the problem that stops it applying to any.
fn overridden_devices<'a>(
    cx: &Context,
    r: &RocmRelease,
    amd: &[&'a Gpu],
    var: &str,
    val: &str,
) -> Result<(GfxTarget, Devices<'a>), Problem> {
    let over = GfxTarget::from_override(val).map_err(|e| {
        (
            Status::Fail,
            format!("{var}: {e}"),
            format!("unset {var}, or set it to a value like 10.3.0"),
        )
    })?;
    let index: Option<usize> = match var.strip_prefix("HSA_OVERRIDE_GFX_VERSION_") {
        Some(n) => match n.parse::<usize>() {
            Ok(i) => Some(i),
            Err(_) => {
                return Err((
                    Status::Warn,
                    format!("{var}: the runtime reads only numeric suffixes"),
                    format!("unset {var}"),
                ));
            }
        },
        None => None,
    };
    if index.is_some() && r.version < Version::new(6, 2, 0) {
        return Err((
            Status::Warn,
            format!(
                "{var}: per-device overrides arrived in ROCm 6.2; ROCm {} ignores it",
                r.version
            ),
            "use HSA_OVERRIDE_GFX_VERSION, or hide the other GPUs with HIP_VISIBLE_DEVICES".into(),
        ));
    }
    let targets = match index {
        Some(i) if i >= amd.len() => {
            return Err((
                Status::Fail,
                format!(
                    "{var} names device {i}, but there {} {} AMD GPU{}",
                    if amd.len() == 1 { "is" } else { "are" },
                    amd.len(),
                    if amd.len() == 1 { "" } else { "s" }
                ),
                format!("unset {var}"),
            ));
        }
        Some(i) => vec![(i, amd[i])],
        // The global variable loses to a per-device one.
        None => amd
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, _)| {
                !cx.facts
                    .env
                    .contains_key(&format!("HSA_OVERRIDE_GFX_VERSION_{i}"))
                    || r.version < Version::new(6, 2, 0)
            })
            .collect(),
    };
    Ok((over, targets))
}

/// What `var=val`, naming target `over`, does to device `i` of `amd_count`, whose own target is `own`.
fn device_verdict(
    cx: &Context,
    r: &RocmRelease,
    (var, val, over): (&str, &str, GfxTarget),
    amd_count: usize,
    i: usize,
    own: GfxTarget,
) -> DeviceVerdict {
    let how = cx.matrices.gfx_on_release(r, own);
    let native = matches!(how, GfxRun::Native(_) | GfxRun::BuiltNotSupported(_));
    if own == over {
        DeviceVerdict::Problem((
            Status::Warn,
            format!("{var}={val} is needless on device {i} ({own}): it is the GPU's own target"),
            format!("unset {var}"),
        ))
    } else if native {
        DeviceVerdict::Problem((Status::Fail, format!("{var}={val} makes device {i} ({own}, supported natively by ROCm {}) run {over} code", r.version), format!("unset {var}{}", if amd_count > 1 { " (or use HSA_OVERRIDE_GFX_VERSION_<n> only for the GPUs that need one)" } else { "" })))
    } else if how.override_target() == Some(over) {
        DeviceVerdict::Fine(format!(
            "{var}={val} is the known override for device {i} ({own})"
        ))
    } else {
        let right = match how.override_target() {
            Some(t) => format!("export {var}={}", t.override_value()),
            None => format!("unset {var}: no override is known to work for {own}"),
        };
        DeviceVerdict::Problem((
            Status::Fail,
            format!("{var}={val} is wrong for device {i} ({own})"),
            right,
        ))
    }
}

/// The one finding for every override variable: the worst problem sets the status, fine ones go in the detail.
fn overrides_finding(problems: Vec<Problem>, fine: Vec<String>) -> Finding {
    if problems.is_empty() {
        return Finding::new(HSA_ID, AREA, Status::Pass, fine.join("; "));
    }
    let worst = problems.iter().map(|p| p.0).max().unwrap_or(Status::Warn);
    let summary = per_problem(problems.iter().map(|p| p.1.as_str())).join("; ");
    let mut fixes: Vec<String> = problems.iter().map(|p| p.2.clone()).collect();
    fixes.dedup();
    let mut f = Finding::new(HSA_ID, AREA, worst, summary).fix(fixes.join("; "));
    if !fine.is_empty() {
        f = f.detail(per_problem(fine.iter().map(String::as_str)).join("; "));
    }
    f
}

/// Issue 33: one sentence per problem, listing the devices it affects (`makes devices 0, 1, 2, 3 (gfx90a, …) run
/// gfx900 code`), not the same sentence once per GPU.
fn per_problem<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for line in lines {
        let Some((before, rest)) = line.split_once("device ") else {
            groups.push((line.to_string(), String::new(), Vec::new()));
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            groups.push((line.to_string(), String::new(), Vec::new()));
            continue;
        }
        let after = &rest[digits.len()..];
        match groups
            .iter_mut()
            .find(|(b, a, d)| b == before && a == after && !d.is_empty())
        {
            Some((_, _, d)) => d.push(digits),
            None => groups.push((before.to_string(), after.to_string(), vec![digits])),
        }
    }
    groups
        .into_iter()
        .map(|(before, after, d)| match d.len() {
            0 => before,
            1 => format!("{before}device {}{after}", d[0]),
            _ => format!("{before}devices {}{after}", d.join(", ")),
        })
        .collect()
}

/// Checks one visible-devices list against `count` devices; returns the problems.
fn check_list(var: &str, val: &str, count: usize, kind: &str) -> Vec<(Status, String)> {
    let v = val.trim();
    if v.is_empty() {
        return vec![(
            Status::Fail,
            format!("{var} is set but empty: it hides every {kind} GPU"),
        )];
    }
    if matches!(v, "all" | "none" | "void" | "NoDevFiles") && var == "NVIDIA_VISIBLE_DEVICES" {
        return vec![];
    }
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for part in v.split(',').map(str::trim) {
        if part.starts_with("GPU-") || part.starts_with("MIG-") {
            continue;
        }
        match part.parse::<usize>() {
            Ok(i) if i >= count => out.push((
                Status::Fail,
                format!(
                    "{var}={v} names device {i}, but there {} {count} {kind} GPU{}{}",
                    if count == 1 { "is" } else { "are" },
                    if count == 1 { "" } else { "s" },
                    if count > 0 {
                        format!(" (0–{})", count - 1)
                    } else {
                        String::new()
                    }
                ),
            )),
            Ok(i) if seen.contains(&i) => {
                out.push((Status::Warn, format!("{var}={v} names device {i} twice")))
            }
            Ok(i) => seen.push(i),
            Err(_) => out.push((
                Status::Fail,
                format!("{var}={v}: `{part}` is neither an index nor a GPU UUID"),
            )),
        }
    }
    out
}

/// The fix for a visible-devices variable that names no GPU: the GPUs that exist, by the numbers the variables use.
fn existing_devices_fix(cx: &Context) -> String {
    let list = |gpus: Vec<&crate::host::Gpu>| {
        gpus.iter()
            .map(|g| g.label())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let amd = list(cx.facts.amd_gpus().collect());
    let nv = list(cx.facts.nvidia_gpus().collect());
    match (amd.is_empty(), nv.is_empty()) {
        (true, true) => "this host has no GPU: unset the variable".into(),
        (false, true) => format!("list only existing devices (AMD: {amd}), or unset the variable"),
        (true, false) => {
            format!("list only existing devices (NVIDIA: {nv}), or unset the variable")
        }
        (false, false) => {
            format!("list only existing devices (AMD: {amd}; NVIDIA: {nv}), or unset the variable")
        }
    }
}

fn visible_devices(cx: &Context) -> Finding {
    const ID: &str = "env.visible-devices";
    let amd = cx.facts.amd_gpus().count();
    let nv = cx.facts.nvidia_gpus().count();
    let mut problems = Vec::new();
    let mut set = Vec::new();
    for var in [
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "GPU_DEVICE_ORDINAL",
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
    ] {
        let Some(val) = cx.facts.env.get(var) else {
            continue;
        };
        set.push(format!("{var}={val}"));
        let (count, kind) = match var {
            // HIP also honours CUDA_VISIBLE_DEVICES, so on an AMD-only host it selects AMD GPUs.
            "CUDA_VISIBLE_DEVICES" if nv == 0 && amd > 0 => (amd, "AMD"),
            "CUDA_VISIBLE_DEVICES" | "NVIDIA_VISIBLE_DEVICES" => (nv, "NVIDIA"),
            _ => (amd, "AMD"),
        };
        problems.extend(check_list(var, val, count, kind));
    }
    if set.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            "no visible-devices variable is set: every GPU is visible",
        );
    }
    if problems.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "{} name{} existing GPUs",
                set.join(", "),
                if set.len() == 1 { "s" } else { "" }
            ),
        );
    }
    let worst = problems.iter().map(|p| p.0).max().unwrap_or(Status::Warn);
    let mut f = Finding::new(
        ID,
        AREA,
        worst,
        problems
            .iter()
            .map(|p| p.1.clone())
            .collect::<Vec<_>>()
            .join("; "),
    )
    .fix(existing_devices_fix(cx));
    if nv == 0 && amd > 0 && cx.facts.env.contains_key("CUDA_VISIBLE_DEVICES") {
        f = f.detail(
            "HIP honours CUDA_VISIBLE_DEVICES too, so on this AMD host it selects AMD GPUs",
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::per_problem;

    /// Issue 33: doctor said the same sentence once per GPU (about 400 characters for four MI210s).
    #[test]
    fn one_sentence_per_problem_lists_its_devices() {
        let lines = [
            "X=1 makes device 0 (gfx90a) run gfx900 code",
            "X=1 makes device 1 (gfx90a) run gfx900 code",
            "X=1 is wrong for device 2 (gfx1031)",
            "X=1 makes device 3 (gfx90a) run gfx900 code",
            "Y: the runtime reads only numeric suffixes",
        ];
        assert_eq!(
            per_problem(lines.into_iter()),
            vec![
                "X=1 makes devices 0, 1, 3 (gfx90a) run gfx900 code",
                "X=1 is wrong for device 2 (gfx1031)",
                "Y: the runtime reads only numeric suffixes",
            ]
        );
    }
}
