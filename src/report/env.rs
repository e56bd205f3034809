//! `rocmenv env` output formats. Every value is quoted for its format, so nothing a value holds can add a command.

use crate::envplan::EnvPlan;
use std::io::Write;

/// An output format of `rocmenv env` (also clap's value enum for `--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EnvFormat {
    /// `export K='v'` lines for bash, zsh and sh (`eval "$(rocmenv env)"`).
    #[value(help = "export lines for bash, zsh and sh (use with eval)")]
    Sh,
    /// `set -gx K 'v'` lines for fish.
    #[value(help = "set -gx lines for fish")]
    Fish,
    /// `K=v` lines for `.env` files and `docker run --env-file`.
    #[value(help = "NAME=value lines for .env files and docker run --env-file")]
    Dotenv,
    /// `-e 'K=v'` arguments for `docker run` (use with eval).
    #[value(help = "-e arguments for docker run (use with eval)")]
    Docker,
    /// One JSON object: name → value.
    #[value(help = "one JSON object, name to value")]
    Json,
    /// `K=v` lines for `$GITHUB_ENV`.
    #[value(help = "NAME=value lines for GITHUB_ENV")]
    Github,
}

/// POSIX single quoting: `'` becomes `'\''`.
pub fn sh_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', r"'\''"))
}

/// fish single quoting: `\` and `'` are escaped with a backslash.
fn fish_quote(v: &str) -> String {
    format!("'{}'", v.replace('\\', r"\\").replace('\'', r"\'"))
}

/// True when a value needs no quoting in a dotenv or `$GITHUB_ENV` line.
fn plain(v: &str) -> bool {
    !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.,;:/+=@-".contains(&b))
}

fn comment(why: &str) -> String {
    format!("# {}", why.replace(['\n', '\r'], " "))
}

/// Writes the plan in `format`; `explain` adds a comment per variable where the format has comments.
pub fn render_env(
    p: &EnvPlan,
    format: EnvFormat,
    explain: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let commented =
        explain && matches!(format, EnvFormat::Sh | EnvFormat::Fish | EnvFormat::Dotenv);
    if commented {
        if let Some(r) = &p.rocm {
            writeln!(out, "# rocmenv env: for ROCm {r}")?;
        }
    }
    match format {
        EnvFormat::Json => {
            // A variable to remove is `null`: the plan's answer is that it must not be set.
            let map: serde_json::Map<String, serde_json::Value> = p
                .unset
                .iter()
                .map(|v| (v.name.clone(), serde_json::Value::Null))
                .chain(
                    p.vars
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone().into())),
                )
                .collect();
            let text = serde_json::to_string_pretty(&map).map_err(std::io::Error::other)?;
            return writeln!(out, "{text}");
        }
        EnvFormat::Docker => {
            let args: Vec<String> = p
                .vars
                .iter()
                .map(|v| format!("-e {}", sh_quote(&format!("{}={}", v.name, v.value))))
                .collect();
            if !args.is_empty() {
                writeln!(out, "{}", args.join(" "))?;
            }
            return Ok(());
        }
        _ => {}
    }
    for v in &p.unset {
        // Only the shells can remove a variable; the other formats get the stderr warning alone.
        match format {
            EnvFormat::Sh => writeln!(out, "unset {}  {}", v.name, comment(&v.why))?,
            EnvFormat::Fish => writeln!(out, "set -e {}  {}", v.name, comment(&v.why))?,
            EnvFormat::Dotenv => {
                writeln!(out, "{}", comment(&format!("remove {}: {}", v.name, v.why)))?
            }
            _ => {}
        }
    }
    for v in &p.vars {
        if commented {
            writeln!(out, "{}", comment(&v.why))?;
        }
        match format {
            EnvFormat::Sh => writeln!(out, "export {}={}", v.name, sh_quote(&v.value))?,
            EnvFormat::Fish => writeln!(out, "set -gx {} {}", v.name, fish_quote(&v.value))?,
            EnvFormat::Dotenv | EnvFormat::Github if plain(&v.value) => {
                writeln!(out, "{}={}", v.name, v.value)?
            }
            EnvFormat::Dotenv => writeln!(
                out,
                "{}=\"{}\"",
                v.name,
                v.value.replace('\\', r"\\").replace('"', "\\\"")
            )?,
            // Values are single-line by construction; anything else would need GitHub's heredoc form.
            EnvFormat::Github => {
                writeln!(out, "{}={}", v.name, v.value.replace(['\n', '\r'], " "))?
            }
            EnvFormat::Json | EnvFormat::Docker => unreachable!("handled above"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envplan::EnvVar;

    fn plan(value: &str) -> EnvPlan {
        EnvPlan {
            vars: vec![EnvVar {
                name: "X".into(),
                value: value.into(),
                why: "because\nsecond line".into(),
            }],
            rocm: Some("6.2.4".into()),
            ..EnvPlan::default()
        }
    }

    fn render(p: &EnvPlan, f: EnvFormat, explain: bool) -> String {
        let mut out = Vec::new();
        render_env(p, f, explain, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_format_quotes_hostile_values() {
        let p = plan("a'b;$(id)`x`\\");
        assert_eq!(
            render(&p, EnvFormat::Sh, false),
            "export X='a'\\''b;$(id)`x`\\'\n"
        );
        assert_eq!(
            render(&p, EnvFormat::Fish, false),
            "set -gx X 'a\\'b;$(id)`x`\\\\'\n"
        );
        assert_eq!(
            render(&p, EnvFormat::Dotenv, false),
            "X=\"a'b;$(id)`x`\\\\\"\n"
        );
        assert_eq!(
            render(&p, EnvFormat::Docker, false),
            "-e 'X=a'\\''b;$(id)`x`\\'\n"
        );
        assert_eq!(
            render(&p, EnvFormat::Json, false),
            "{\n  \"X\": \"a'b;$(id)`x`\\\\\"\n}\n"
        );
    }

    #[test]
    fn explain_comments_stay_on_one_line() {
        let text = render(&plan("gfx1030"), EnvFormat::Sh, true);
        assert_eq!(
            text,
            "# rocmenv env: for ROCm 6.2.4\n# because second line\nexport X='gfx1030'\n"
        );
        assert_eq!(
            render(&plan("gfx1030"), EnvFormat::Github, true),
            "X=gfx1030\n"
        );
    }
}
