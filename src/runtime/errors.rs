//! The shape of the error tables and how a code becomes a [`RuntimeError`].

use super::RuntimeError;

/// A known error code: its name, what it means and what a person can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The numeric code.
    pub code: i64,
    /// The name in the runtime's header (`hipErrorNoDevice`, `CUDA_ERROR_NO_DEVICE`).
    pub name: &'static str,
    /// One line on what it means.
    pub meaning: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

/// Table rows stay one line each.
pub(crate) const fn e(
    code: i64,
    name: &'static str,
    meaning: &'static str,
    fix: &'static str,
) -> ErrorInfo {
    ErrorInfo {
        code,
        name,
        meaning,
        fix,
    }
}

/// Builds the error for `code`: our table first, then what the library says, then `unknown error N`.
pub(crate) fn build(
    table: &'static [ErrorInfo],
    generic_fix: &str,
    code: i64,
    call: &str,
    lib_name: Option<String>,
    lib_message: Option<String>,
) -> RuntimeError {
    let info = table.iter().find(|i| i.code == code);
    // Libraries answer unknown codes with a placeholder name, which is no name at all.
    let placeholder = |s: &str| s.is_empty() || s.to_ascii_lowercase().contains("unknown");
    let lib_name = lib_name.filter(|n| !placeholder(n));
    let name = match (info, lib_name) {
        (Some(i), _) => i.name.to_string(),
        (None, Some(n)) => n,
        (None, None) => format!("unknown error {code}"),
    };
    // HIP 5 answers hipGetErrorString with the name again: then our meaning says more.
    let lib_message = lib_message.filter(|m| *m != name && !(info.is_none() && placeholder(m)));
    let message = match (lib_message.filter(|m| !m.is_empty()), info) {
        (Some(m), _) => m,
        (None, Some(i)) => i.meaning.to_string(),
        (None, None) => format!("{call} returned {code}"),
    };
    let fix = match info {
        Some(i) => i.fix.to_string(),
        None => generic_fix.to_string(),
    };
    RuntimeError {
        code,
        name,
        message,
        fix,
        call: call.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::{cuda_error, cuda_error_info, hip_error};

    #[test]
    fn hip_table_names_and_fixes() {
        let e = hip_error(
            100,
            "hipGetDeviceCount",
            Some("hipErrorNoDevice".into()),
            Some("hipErrorNoDevice".into()),
        );
        assert_eq!(e.name, "hipErrorNoDevice");
        assert_eq!(
            e.message, "no GPU is visible to the HIP runtime",
            "HIP 5 repeats the name; our meaning replaces it"
        );
        assert!(
            e.fix.contains("/dev/kfd") && e.fix.contains("HIP_VISIBLE_DEVICES"),
            "{}",
            e.fix
        );
        assert_eq!(e.call, "hipGetDeviceCount");
        for (code, name) in [
            (3, "hipErrorNotInitialized"),
            (35, "hipErrorInsufficientDriver"),
            (101, "hipErrorInvalidDevice"),
            (209, "hipErrorNoBinaryForGpu"),
            (999, "hipErrorUnknown"),
        ] {
            let e = hip_error(code, "x", None, None);
            assert_eq!(e.name, name);
            assert!(!e.fix.is_empty() && !e.message.is_empty());
        }
        assert!(hip_error(35, "x", None, None)
            .fix
            .contains("amdgpu kernel driver is older"));
        // ROCm 6 says more than the name: its message is kept.
        let e = hip_error(
            100,
            "x",
            None,
            Some("no ROCm-capable device is detected".into()),
        );
        assert_eq!(e.message, "no ROCm-capable device is detected");
    }

    #[test]
    fn unknown_codes_say_so() {
        let e = hip_error(
            4242,
            "hipMalloc",
            Some("hipErrorUnknown".into()),
            Some("hipErrorUnknown".into()),
        );
        assert_eq!(e.name, "unknown error 4242");
        assert_eq!(e.message, "hipMalloc returned 4242");
        let e = cuda_error(4242, "cuInit", None, None);
        assert_eq!(e.name, "unknown error 4242");
        assert!(!e.fix.is_empty());
        // A newer runtime may name a code our table lacks: its name is used.
        assert_eq!(
            hip_error(4243, "x", Some("hipErrorBrandNew".into()), None).name,
            "hipErrorBrandNew"
        );
    }

    #[test]
    fn cuda_table_names_and_fixes() {
        for (code, name, needle) in [
            (100, "CUDA_ERROR_NO_DEVICE", "--gpus"),
            (
                222,
                "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                "upgrade the driver",
            ),
            (3, "CUDA_ERROR_NOT_INITIALIZED", "nvidia"),
            (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "kernel module"),
            (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "compat"),
            (304, "CUDA_ERROR_OPERATING_SYSTEM", "nvidia-uvm"),
            (999, "CUDA_ERROR_UNKNOWN", "dmesg"),
            (2, "CUDA_ERROR_OUT_OF_MEMORY", "nvidia-smi"),
            (101, "CUDA_ERROR_INVALID_DEVICE", "CUDA_VISIBLE_DEVICES"),
            (34, "CUDA_ERROR_STUB_LIBRARY", "stubs"),
        ] {
            let e = cuda_error(code, "cuInit", None, None);
            assert_eq!(e.name, name);
            assert!(e.fix.contains(needle), "{name}: {}", e.fix);
        }
    }

    #[test]
    fn cuda_table_matches_cudarc_names() {
        use cudarc::driver::sys::CUresult as R;
        let variants = [
            R::CUDA_SUCCESS,
            R::CUDA_ERROR_OUT_OF_MEMORY,
            R::CUDA_ERROR_NOT_INITIALIZED,
            R::CUDA_ERROR_STUB_LIBRARY,
            R::CUDA_ERROR_NO_DEVICE,
            R::CUDA_ERROR_INVALID_DEVICE,
            R::CUDA_ERROR_NO_BINARY_FOR_GPU,
            R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            R::CUDA_ERROR_OPERATING_SYSTEM,
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
            R::CUDA_ERROR_LAUNCH_FAILED,
            R::CUDA_ERROR_SYSTEM_NOT_READY,
            R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
            R::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
            R::CUDA_ERROR_UNKNOWN,
        ];
        for v in variants {
            let info = cuda_error_info(v as i64).unwrap_or_else(|| panic!("{v:?} missing"));
            assert_eq!(info.name, format!("{v:?}"));
        }
    }

    #[test]
    fn tables_have_unique_codes() {
        for table in [
            crate::runtime::hip_errors::HIP_ERRORS,
            crate::runtime::cuda_errors::CUDA_ERRORS,
        ] {
            let mut codes: Vec<i64> = table.iter().map(|i| i.code).collect();
            codes.sort();
            codes.dedup();
            assert_eq!(codes.len(), table.len());
        }
    }
}
