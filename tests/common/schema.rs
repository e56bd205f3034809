//! The report documents against their published JSON Schemas (docs/schema), with check-jsonschema: shared by
//! tests/schemas.rs and the tests that make real reports (validate). CI sets ROCMENV_REQUIRE_CHECK_JSONSCHEMA, so a
//! missing checker fails there; elsewhere the check says it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// docs/schema/NAME.schema.json.
pub fn schema(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schema")
        .join(format!("{name}.schema.json"))
}

/// check-jsonschema on `files` against `name`'s schema; None (after saying SKIP) when the tool is missing and not
/// required.
pub fn check(test: &str, name: &str, files: &[PathBuf]) -> Option<Output> {
    match Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(schema(name))
        .args(files)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            assert!(
                std::env::var_os("ROCMENV_REQUIRE_CHECK_JSONSCHEMA").is_none(),
                "ROCMENV_REQUIRE_CHECK_JSONSCHEMA is set but check-jsonschema cannot run ({e}): pip install check-jsonschema"
            );
            eprintln!(
                "SKIP {test}: check-jsonschema is not on PATH (pip install check-jsonschema)"
            );
            None
        }
    }
}

/// Asserts every file is valid against `name`; false when the checker is missing (skipped).
pub fn valid(test: &str, name: &str, files: &[PathBuf]) -> bool {
    let Some(o) = check(test, name, files) else {
        return false;
    };
    assert_eq!(
        o.status.code(),
        Some(0),
        "{} against {name}:\n{}{}",
        files.len(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    true
}
