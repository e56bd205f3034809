//! What a user may change in one benchmark's parameters (`rocmenv bench --batch/--precision/...`, or a benchmark of
//! rocmenv.yaml): typed here, turned into the manifest's parameter names and values in one place.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A precision for a benchmark (`--precision`, `precision:` in rocmenv.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// float32.
    Fp32,
    /// float16.
    Fp16,
    /// bfloat16.
    Bf16,
    /// Automatic mixed precision (autocast).
    Amp,
    /// Dynamic INT8 quantisation.
    Int8,
}

impl Precision {
    /// The value `run.py` reads: `fp32`, `fp16`, `bf16`, `amp` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Amp => "amp",
            Precision::Int8 => "int8",
        }
    }
}

/// Train or infer (`--mode`, `mode:` in rocmenv.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Forward, backward and an optimizer step.
    Train,
    /// Forward only, without gradients.
    Infer,
}

impl Mode {
    /// The value `run.py` reads: `train` or `infer`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Train => "train",
            Mode::Infer => "infer",
        }
    }
}

/// Parameters that replace a benchmark's own; `None` keeps the manifest's value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BenchOverrides {
    /// Batch size.
    pub batch: Option<u64>,
    /// Precision.
    pub precision: Option<Precision>,
    /// Train or infer.
    pub mode: Option<Mode>,
    /// Timed iterations.
    pub iters: Option<u64>,
    /// Warm-up iterations.
    pub warmup: Option<u64>,
}

impl BenchOverrides {
    /// The manifest's parameter names with their new values, in the order the flags are documented.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        [
            ("batch", self.batch.map(Value::from)),
            ("precision", self.precision.map(|p| p.name().into())),
            ("mode", self.mode.map(|m| m.name().into())),
            ("iters", self.iters.map(Value::from)),
            ("warmup", self.warmup.map(Value::from)),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for p in [
            Precision::Fp32,
            Precision::Fp16,
            Precision::Bf16,
            Precision::Amp,
            Precision::Int8,
        ] {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        for m in [Mode::Train, Mode::Infer] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
    }

    #[test]
    fn only_the_given_values_override() {
        let o = BenchOverrides {
            precision: Some(Precision::Bf16),
            warmup: Some(0),
            ..Default::default()
        };
        assert_eq!(
            o.params(),
            [
                ("precision", Value::from("bf16")),
                ("warmup", Value::from(0u64))
            ]
        );
        assert!(BenchOverrides::default().params().is_empty());
    }
}
