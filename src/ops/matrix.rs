//! `rocmenv matrix`: one validated query answered from the context's matrices (loaded once).

use super::Ctx;
use crate::error::Error;

pub use crate::matrix::{is_os_release_version, GpuQuery, MatrixAnswer, MatrixQuery};

/// An answer and the matrices that gave it.
#[derive(Debug)]
pub struct Answered<'c> {
    /// The answer.
    pub answer: MatrixAnswer<'c>,
    /// Which matrices answered: `embedded` or a directory.
    pub origin: &'c str,
}

/// The question in words for errors (`matrix rocm`); it names a positional value, so it is not a flag.
pub fn query_name(q: &MatrixQuery) -> &'static str {
    match q {
        MatrixQuery::Rocm(_) | MatrixQuery::RocmReleases => "matrix rocm",
        MatrixQuery::Gfx(_) => "matrix gfx",
        MatrixQuery::Kernel { .. } => "matrix kernel",
        MatrixQuery::Cuda(_) => "matrix cuda",
        MatrixQuery::Ngc(_) => "matrix ngc",
        MatrixQuery::Check => "matrix check",
        MatrixQuery::Gpu(_) => "matrix gpu",
    }
}

/// Answers `q`; a value the matrices do not list is a usage error naming the query (or the option it came from)
/// and the nearest values that are listed.
pub fn answer<'c>(ctx: &'c Ctx, q: &MatrixQuery) -> Result<Answered<'c>, Error> {
    let m = ctx.matrices()?;
    let answer = m.answer(q).map_err(|n| {
        Error::usage(
            n.field.unwrap_or(query_name(q)),
            format!("{} is not in the matrices; nearest: {}", n.what, n.nearest),
        )
    })?;
    Ok(Answered {
        answer,
        origin: &m.origin,
    })
}

/// `6.8` as given; a full release (`6.8.0-45-generic`, `5.14.0-427.13.1.el9_4.x86_64`) cut to its series.
pub fn kernel_series(s: &str) -> Option<String> {
    if let Ok((_, 2)) = crate::version::parse_with_parts(s) {
        return Some(s.to_string());
    }
    crate::parse::kernel::parse_kernel_release(s)
        .ok()
        .map(|k| k.series())
}
