//! `rocmenv matrix`: validate the question, answer it (`ops::matrix`), print text or one JSON document.

use crate::cli::{MatrixArgs, MatrixCommand};
use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::ops::matrix::{self, is_os_release_version, GpuQuery, MatrixAnswer, MatrixQuery};
use crate::ops::Ctx;
use crate::report::render_matrix;
use crate::version::parse_with_parts;
use std::io::Write;

/// The question in words for errors (`matrix rocm`); it names a positional value, so it is not a flag.
fn field(q: &MatrixCommand) -> &'static str {
    match q {
        MatrixCommand::Rocm { .. } => "matrix rocm",
        MatrixCommand::Gfx { .. } => "matrix gfx",
        MatrixCommand::Kernel { .. } => "matrix kernel",
        MatrixCommand::Cuda { .. } => "matrix cuda",
        MatrixCommand::Ngc { .. } => "matrix ngc",
        MatrixCommand::Check => "matrix check",
        MatrixCommand::Gpu { .. } => "matrix gpu",
    }
}

/// Checks the arguments without loading anything and turns them into a query.
pub fn plan(q: &MatrixCommand) -> Result<MatrixQuery, Error> {
    let bad = |m: String| Error::usage(field(q), m);
    let version = |v: &str, like: &str| {
        parse_with_parts(v)
            .map(|_| v.to_string())
            .map_err(|_| bad(format!("`{v}` is not a version like {like}")))
    };
    Ok(match q {
        MatrixCommand::Rocm { release: None } => MatrixQuery::RocmReleases,
        MatrixCommand::Rocm { release: Some(v) } => {
            MatrixQuery::Rocm(version(v, "7.2 or 7.2.4")?)
        }
        MatrixCommand::Cuda { release: v } => MatrixQuery::Cuda(version(v, "12.4 or 12.4.1")?),
        MatrixCommand::Gfx { target } => MatrixQuery::Gfx(
            target
                .parse::<GfxTarget>()
                .map_err(|e| bad(e.to_string()))?,
        ),
        MatrixCommand::Ngc { release } => {
            let b = release.as_bytes();
            let ok = b.len() == 5
                && b[2] == b'.'
                && release[..2].bytes().all(|c| c.is_ascii_digit())
                && release[3..].bytes().all(|c| c.is_ascii_digit());
            if !ok {
                return Err(bad(format!("`{release}` is not an NGC release like 24.05")));
            }
            MatrixQuery::Ngc(release.clone())
        }
        MatrixCommand::Kernel { series, os } => MatrixQuery::Kernel {
            series: matrix::kernel_series(series).ok_or_else(|| {
                bad(format!(
                    "`{series}` is not a kernel series like 6.8 (or a release like 6.8.0-45-generic)"
                ))
            })?,
            os: os.as_deref().map(parse_os).transpose()?,
        },
        MatrixCommand::Check => MatrixQuery::Check,
        MatrixCommand::Gpu { query } => MatrixQuery::Gpu(GpuQuery::parse(query).map_err(bad)?),
    })
}

/// `ubuntu:24.04` → (`ubuntu`, `24.04`).
fn parse_os(s: &str) -> Result<(String, String), Error> {
    let bad = || {
        Error::usage(
            "os",
            format!("`{s}` is not ID:VERSION as os-release writes them (ubuntu:24.04, rhel:9.6, sles:15.5)"),
        )
    };
    let (id, v) = s.split_once(':').ok_or_else(bad)?;
    let id_ok = !id.is_empty()
        && id.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        });
    if !id_ok || !is_os_release_version(v) {
        return Err(bad());
    }
    Ok((id.to_string(), v.to_string()))
}

/// One JSON document: `schema_version`, `matrices`, `query`, then the answer under the query's name.
fn write_json(answer: &MatrixAnswer, origin: &str, out: &mut dyn Write) -> std::io::Result<()> {
    use serde::ser::{SerializeMap, Serializer};
    if let MatrixAnswer::Gpu(g) = answer {
        // `matrix gpu` has always written its document through a JSON value, keys sorted; kept byte for byte.
        let doc = serde_json::json!({
            "schema_version": 1,
            "matrices": origin,
            "query": "gpu",
            "gpu": g,
        });
        let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
        return writeln!(out, "{text}");
    }
    let mut ser = serde_json::Serializer::pretty(&mut *out);
    let mut map = ser.serialize_map(Some(4))?;
    map.serialize_entry("schema_version", &1)?;
    map.serialize_entry("matrices", origin)?;
    map.serialize_entry("query", answer.kind())?;
    map.serialize_entry(answer.kind(), answer)?;
    map.end()?;
    writeln!(out)
}

/// Runs `rocmenv matrix`; the answer goes to `out`. Returns the exit code.
pub fn exec(a: MatrixArgs, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    let query = plan(&a.query)?;
    let matrix::Answered { answer, origin } = matrix::answer(ctx, &query)?;
    if let (MatrixAnswer::Gpu(g), MatrixQuery::Gpu(q)) = (&answer, &query) {
        if g.models.is_empty() {
            return Err(Error::usage(
                field(&a.query),
                format!(
                    "`{}` names no GPU in the matrices; they list {} models: `rocmenv matrix check` counts them, gpus.yaml names them (a name part such as MI300 or 7900, or an id such as 0x744c)",
                    q.text, g.listed
                ),
            ));
        }
    }
    if a.json {
        crate::commands::written(write_json(&answer, origin, out))?;
    } else {
        crate::commands::written(render_matrix(&answer, origin, out))?;
    }
    Ok(crate::error::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_checked_before_anything_is_loaded() {
        let rocm = |v: &str| {
            plan(&MatrixCommand::Rocm {
                release: Some(v.into()),
            })
        };
        assert_eq!(
            plan(&MatrixCommand::Rocm { release: None }).unwrap(),
            MatrixQuery::RocmReleases
        );
        assert_eq!(rocm("7.2").unwrap(), MatrixQuery::Rocm("7.2".into()));
        assert!(rocm("7.x").is_err() && rocm("").is_err());
        let kernel = |s: &str, os: Option<&str>| {
            plan(&MatrixCommand::Kernel {
                series: s.into(),
                os: os.map(String::from),
            })
        };
        assert_eq!(
            kernel("6.8", Some("sles:15-SP5")).unwrap(),
            MatrixQuery::Kernel {
                series: "6.8".into(),
                os: Some(("sles".into(), "15-SP5".into()))
            }
        );
        let series = |s: &str| match kernel(s, None).unwrap() {
            MatrixQuery::Kernel { series, .. } => series,
            q => panic!("{q:?}"),
        };
        assert_eq!(series("6.8.0-45-generic"), "6.8");
        assert_eq!(series("5.14.0-427.13.1.el9_4.x86_64"), "5.14");
        for bad in ["6", "6.x", "", "six"] {
            assert!(kernel(bad, None).is_err(), "{bad}");
        }
        for bad in [
            "ubuntu",
            "ubuntu:",
            ":24.04",
            "Ubuntu:24.04",
            "ubuntu:noble",
        ] {
            let e = kernel("6.8", Some(bad)).unwrap_err();
            assert!(e.to_string().starts_with("os:"), "{e}");
        }
        let ngc = |r: &str| plan(&MatrixCommand::Ngc { release: r.into() });
        assert!(ngc("24.05").is_ok() && ngc("24.5").is_err() && ngc("2405").is_err());
        let e = plan(&MatrixCommand::Gfx {
            target: "gfx90A".into(),
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("matrix gfx: "), "{e}");
    }
}
