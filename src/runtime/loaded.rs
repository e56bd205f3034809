//! Helpers shared by the backends: the panic guard and what the loader knows about a symbol.

use super::{ProbeStatus, RuntimeProbe};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs a probe; a panic (e.g. inside a lazy loader) becomes an `Error` probe instead of a crash.
pub(crate) fn guard(
    runtime: &'static str,
    backend: String,
    probe: impl FnOnce() -> RuntimeProbe,
) -> RuntimeProbe {
    catch_unwind(AssertUnwindSafe(probe)).unwrap_or_else(|panic| {
        let mut p = RuntimeProbe::stopped(runtime, backend, ProbeStatus::Error);
        p.note = Some(format!("the probe panicked: {}", panic_text(&*panic)));
        p
    })
}

/// Runs one call into a foreign library and turns a panic into `Err(text)`.
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_text(&*p))
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The file the dynamic loader mapped `addr` from, so reports name the real library path.
pub(crate) fn library_path_of(addr: *const c_void) -> Option<String> {
    if addr.is_null() {
        return None;
    }
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the address and fills `info`; a 0 return leaves nothing to read.
    let found = unsafe { libc::dladdr(addr, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: dladdr returned non-zero, so `info` is initialised.
    let info = unsafe { info.assume_init() };
    // SAFETY: dli_fname, when set, is a NUL-terminated string owned by the loader.
    unsafe { c_string(info.dli_fname) }
}

/// Copies a C string the library owns; `None` for a null pointer.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string that lives for the call.
pub(crate) unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    Some(CStr::from_ptr(p).to_string_lossy().into_owned())
}

/// Reads a NUL-terminated string out of a buffer the library filled.
pub(crate) fn buffer_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim().to_string()
}

/// The byte pattern copied in round trips: not all-zero and not periodic in 256, so offsets show.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 8)).wrapping_add(7) as u8)
        .collect()
}

/// Compares what came back with what was sent; `Err` names the first differing byte.
pub(crate) fn compare(sent: &[u8], back: &[u8]) -> Result<(), String> {
    match sent.iter().zip(back).position(|(a, b)| a != b) {
        None if sent.len() == back.len() => Ok(()),
        None => Err(format!(
            "{} bytes came back, {} sent",
            back.len(),
            sent.len()
        )),
        Some(i) => Err(format!(
            "byte {i} came back as {:#04x}, {:#04x} was sent",
            back[i], sent[i]
        )),
    }
}

/// Bytes as MiB for details.
pub(crate) fn mib(bytes: usize) -> String {
    let m = bytes as f64 / (1u64 << 20) as f64;
    if m.fract() == 0.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.2} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard unwinds through the unwinder the build linked (build.rs, `static_unwinder`): a panic becomes the
    /// probe's error, with its message, and the thread goes on.
    #[test]
    fn a_panicking_probe_is_an_error_probe() {
        let p = guard("hip", "test".into(), || {
            panic!("lazy loader: symbol missing")
        });
        assert_eq!(p.status, ProbeStatus::Error);
        assert_eq!(
            p.note.as_deref(),
            Some("the probe panicked: lazy loader: symbol missing")
        );
        let n = 7;
        assert_eq!(
            catch(|| -> u32 { panic!("{n} calls") }),
            Err("7 calls".to_string())
        );
        assert_eq!(catch(|| 3), Ok(3));
    }
}
