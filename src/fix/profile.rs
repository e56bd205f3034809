//! The override and visible-device variables where the user's login files set them: a wrong value is replaced in
//! its line (or the line removed, where the plan sets none), every other line kept; and the plan's own values
//! persisted in `/etc/profile.d/rocmenv.sh` when no file sets them.

use super::{Action, Change, Needs};
use crate::envplan::EnvPlan;
use crate::hostplan::{is_user_var, judge_user_vars, UserVarFix};

/// A login file and its text.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    /// Host path (`/etc/profile.d/gpu.sh`, `/home/bob/.bashrc`).
    pub path: String,
    /// Its text.
    pub text: String,
    /// The file `rocmenv fix` writes itself.
    pub ours: bool,
}

/// Where the plan's variables are persisted.
pub const PERSIST: &str = "/etc/profile.d/rocmenv.sh";

/// AMD's documentation of the variables (HSA_OVERRIDE_GFX_VERSION, HIP/ROCR_VISIBLE_DEVICES).
const SOURCE: &str = "https://rocm.docs.amd.com/en/docs-7.1.1/reference/env-variables.html";

/// One action per file that sets a variable the plan judges wrong, then one that persists the plan's variables no
/// file sets. `visible` is (AMD GPUs, NVIDIA GPUs).
pub fn plan_profiles(files: &[ProfileFile], env: &EnvPlan, visible: (usize, usize)) -> Vec<Action> {
    let mut out = Vec::new();
    // What the files set once the edits are made, to know what is left to persist.
    let mut set_after: Vec<(String, String)> = Vec::new();
    for f in files.iter().filter(|f| !f.ours) {
        let mut lines: Vec<String> = Vec::new();
        let mut fixes: Vec<String> = Vec::new();
        let mut said: Vec<String> = Vec::new();
        for (i, line) in f.text.split_inclusive('\n').enumerate() {
            let vars = crate::lint::assignments_in(line.trim(), i + 1);
            let wrong: Vec<_> = vars
                .iter()
                .filter(|v| is_user_var(&v.name))
                .flat_map(|v| judge_user_vars(env, [(v.name.as_str(), v.value.as_str())], visible))
                .collect();
            let mut new = line.to_string();
            for w in &wrong {
                match &w.fix {
                    UserVarFix::Set(v) => {
                        new = with_value(&new, &w.name, v);
                        said.push(format!("{}={v} (was {})", w.name, w.value));
                    }
                    UserVarFix::Unset => {
                        new = String::new();
                        said.push(format!("remove {}={}", w.name, w.value));
                    }
                }
                let id = finding_of(&w.name);
                if !fixes.iter().any(|x| x == id) {
                    fixes.push(id.to_string());
                }
            }
            for v in crate::lint::assignments_in(new.trim(), i + 1) {
                set_after.push((v.name, v.value));
            }
            lines.push(new);
        }
        if !said.is_empty() {
            out.push(Action {
                id: "fix.profile",
                fixes,
                summary: format!("{}: {}", f.path, said.join(", ")),
                change: Change::Edit {
                    path: f.path.clone(),
                    before: Some(f.text.clone()),
                    after: lines.concat(),
                },
                needs: Needs {
                    root: f.path.starts_with("/etc/"),
                    relogin: true,
                    reboot: false,
                },
                source: SOURCE,
            });
        }
    }
    out.extend(persist(files, env, &set_after));
    out
}

/// `/etc/profile.d/rocmenv.sh` with the plan's variables that no other file sets to the plan's value.
fn persist(files: &[ProfileFile], env: &EnvPlan, set: &[(String, String)]) -> Option<Action> {
    let wanted: Vec<_> = env
        .vars
        .iter()
        .filter(|v| is_user_var(&v.name))
        .filter(|v| !set.iter().any(|(n, val)| n == &v.name && val == &v.value))
        .collect();
    let before = files.iter().find(|f| f.ours).map(|f| f.text.clone());
    if wanted.is_empty() && before.is_none() {
        return None;
    }
    let mut after = String::from("# Written by `rocmenv fix`: the GPU variables this host's plan sets (`rocmenv env --explain` says why).\n");
    for v in &wanted {
        after.push_str(&format!(
            "# {}\nexport {}={}\n",
            crate::text::one_line(&v.why),
            v.name,
            quote(&v.value)
        ));
    }
    if before.as_deref() == Some(after.as_str()) {
        return None;
    }
    let fixes = wanted
        .iter()
        .map(|v| finding_of(&v.name).to_string())
        .collect::<Vec<_>>();
    Some(Action {
        id: "fix.profile",
        fixes,
        summary: format!(
            "{PERSIST}: persist {} for every login",
            wanted
                .iter()
                .map(|v| format!("{}={}", v.name, v.value))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        change: Change::Edit {
            path: PERSIST.into(),
            before,
            after,
        },
        needs: Needs {
            root: true,
            relogin: true,
            reboot: false,
        },
        source: SOURCE,
    })
}

/// `value` as a POSIX shell word.
fn quote(value: &str) -> String {
    shlex::try_quote(value).map_or_else(|_| "''".into(), |q| q.into_owned())
}

fn finding_of(name: &str) -> &'static str {
    if name.starts_with("HSA_OVERRIDE_GFX_VERSION") {
        "env.hsa-override"
    } else {
        "env.visible-devices"
    }
}

/// `line` with the value of `name=` replaced by `value` (quoted as it was, or as the shell needs), nothing else.
fn with_value(line: &str, name: &str, value: &str) -> String {
    let key = format!("{name}=");
    let Some(at) = line
        .match_indices(&key)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || !line[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    else {
        return line.to_string();
    };
    let start = at + key.len();
    let rest = &line[start..];
    let (len, quoted) = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => (rest[1..].find(q).map_or(rest.len(), |e| e + 2), Some(q)),
        _ => (
            rest.find(|c: char| c.is_whitespace() || c == ';')
                .unwrap_or(rest.len()),
            None,
        ),
    };
    let shown = match quoted {
        Some(q) => format!("{q}{value}{q}"),
        None => quote(value),
    };
    format!("{}{shown}{}", &line[..start], &rest[len..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_replaced_in_place() {
        assert_eq!(
            with_value(
                "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n",
                "HSA_OVERRIDE_GFX_VERSION",
                "10.3.0"
            ),
            "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
        );
        assert_eq!(
            with_value(
                "export A=1 HSA_OVERRIDE_GFX_VERSION=\"11.0.0\" # mine\n",
                "HSA_OVERRIDE_GFX_VERSION",
                "10.3.0"
            ),
            "export A=1 HSA_OVERRIDE_GFX_VERSION=\"10.3.0\" # mine\n"
        );
        assert_eq!(
            with_value(
                "MY_HSA_OVERRIDE_GFX_VERSION=1 HSA_OVERRIDE_GFX_VERSION=2",
                "HSA_OVERRIDE_GFX_VERSION",
                "3"
            ),
            "MY_HSA_OVERRIDE_GFX_VERSION=1 HSA_OVERRIDE_GFX_VERSION=3"
        );
    }
}
