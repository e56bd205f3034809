//! The embedded matrices as JSON: parsing YAML costs most of doctor's start, so the build converts `matrices/*.yaml`
//! once and the binary reads JSON. The YAML stays the source (and what `--matrices DIR` reads); the test
//! `matrix::load::tests::embedded_json_is_the_validated_yaml` checks the two load to the same, validated matrices.

use std::path::Path;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rerun-if-changed=matrices");
    for name in ["rocm", "cuda", "ngc", "gpus", "firmware"] {
        let src = Path::new("matrices").join(format!("{name}.yaml"));
        println!("cargo:rerun-if-changed={}", src.display());
        let text =
            std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        // A file that is not YAML fails here; one that is YAML but not a valid matrix fails the test above.
        let value: serde_json::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let json = serde_json::to_string(&value).expect("YAML values are JSON values");
        std::fs::write(Path::new(&out).join(format!("{name}.json")), json)
            .expect("OUT_DIR is writable");
    }
}
