//! `smoke-tests/suite.yaml`: which tests run at which level, their parameters per device kind and level, their
//! pass criteria; and the plan one run hands `run.py`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::BenchOverrides;
use crate::vendor::Vendor;

/// How much a smoke run does; each level includes the ones below it (like `dcgmi diag -r 1/2/3`). The one type
/// for `--level`, `smoke: level:` in rocmenv.yaml and the suite's plans; the variants' docs are `--help`'s.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Environment, fallback, arch fit, numerics, memory, GEMM, bandwidth (about a minute on a CPU).
    #[default]
    Quick,
    /// Adds ResNet-50 / ViT-B/16, ONNX Runtime, INT8, the profile and the batch search.
    Standard,
    /// Adds the Stable Diffusion 1.5 UNet step and multi-GPU copies.
    Full,
}

impl Level {
    /// `quick`, `standard` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Standard => "standard",
            Level::Full => "full",
        }
    }
}

/// Which parameter set a run uses: tiny shapes on a CPU, real ones on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// No GPU (vendor cpu).
    Cpu,
    /// An AMD or NVIDIA GPU.
    Gpu,
}

/// The manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Format version; 1.
    pub schema_version: u32,
    /// The levels, lowest first.
    pub levels: Vec<Level>,
    /// The smoke tests.
    pub tests: Vec<SuiteTest>,
    /// What `rocmenv bench --model NAME` runs.
    pub benchmarks: Vec<Benchmark>,
}

/// One smoke test.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteTest {
    /// The name the result carries (`numerics`).
    pub name: String,
    /// The lowest level that runs it.
    pub level: Level,
    /// What it checks, one line.
    pub description: String,
    /// Python modules it needs beyond torch; absent ones make it a skip.
    #[serde(default)]
    pub requires: Vec<String>,
    /// Parameters per device kind and level; a missing level inherits the next lower one.
    pub params: BTreeMap<DeviceKind, BTreeMap<Level, Map<String, Value>>>,
    /// Pass criteria, the same on every device.
    #[serde(default)]
    pub criteria: Map<String, Value>,
}

/// One benchmark.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    /// `resnet50`, `gemm`, …
    pub name: String,
    /// What it measures, one line.
    pub description: String,
    /// Python modules it needs beyond torch.
    #[serde(default)]
    pub requires: Vec<String>,
    /// Parameters per device kind.
    pub params: BTreeMap<DeviceKind, Map<String, Value>>,
    /// Pass criteria.
    #[serde(default)]
    pub criteria: Map<String, Value>,
}

/// Why a plan cannot be made from what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `--only` names a test the suite does not have, or one above the level.
    #[error("no test `{name}` at level {level}; the tests are: {known}")]
    UnknownTest {
        /// The name given.
        name: String,
        /// The level asked for.
        level: &'static str,
        /// The tests at that level.
        known: String,
    },
    /// `--model` names no benchmark.
    #[error("no benchmark `{name}`; the benchmarks are: {known}")]
    UnknownBenchmark {
        /// The name given.
        name: String,
        /// The benchmarks.
        known: String,
    },
    /// An override names a parameter the benchmark does not take.
    #[error("the {bench} benchmark takes no {key} (its parameters: {known})")]
    NotAParameter {
        /// The benchmark.
        bench: String,
        /// The parameter (`batch`).
        key: String,
        /// The parameters it takes.
        known: String,
    },
}

/// The plan `run.py --plan` reads (see smoke-tests/README.md, "The plan").
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Format version; 1.
    pub schema_version: u32,
    /// `smoke` or `bench`.
    pub kind: &'static str,
    /// The level (`standard` for benchmarks).
    pub level: &'static str,
    /// Whose device runs it (`amd`, `nvidia` or `cpu` in the plan file).
    pub vendor: Vendor,
    /// The tests, in suite order.
    pub tests: Vec<PlannedTest>,
}

/// One test of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedTest {
    /// Its name.
    pub name: String,
    /// Its parameters for this device kind and level.
    pub params: Map<String, Value>,
    /// Its criteria.
    pub criteria: Map<String, Value>,
    /// Modules it needs.
    pub requires: Vec<String>,
}

impl Suite {
    /// The suite built into this rocmenv.
    pub fn embedded() -> Suite {
        // The manifest is part of the source tree; a test checks it parses, so this cannot fail in a release.
        serde_yaml_ng::from_str(super::files::SUITE_YAML).expect("smoke-tests/suite.yaml parses")
    }

    /// The smoke tests at `level` (only those named in `only`, when not empty), with their parameters.
    pub fn smoke_plan(
        &self,
        level: Level,
        vendor: Vendor,
        only: &[String],
    ) -> Result<Plan, PlanError> {
        let kind = device_kind(vendor);
        let at_level: Vec<&SuiteTest> = self.tests.iter().filter(|t| t.level <= level).collect();
        for name in only {
            if !at_level.iter().any(|t| &t.name == name) {
                return Err(PlanError::UnknownTest {
                    name: name.clone(),
                    level: level.name(),
                    known: at_level
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        let tests = at_level
            .into_iter()
            .filter(|t| only.is_empty() || only.contains(&t.name))
            .map(|t| PlannedTest {
                name: t.name.clone(),
                params: t.params_for(kind, level),
                criteria: t.criteria.clone(),
                requires: t.requires.clone(),
            })
            .collect();
        Ok(Plan {
            schema_version: 1,
            kind: "smoke",
            level: level.name(),
            vendor,
            tests,
        })
    }

    /// Adds the burn-in test for `seconds` to `plan` (after its other tests, replacing a burn-in the level has):
    /// `smoke --duration` at any level, with the parameters the full level gives it.
    pub fn add_burn_in(&self, plan: &mut Plan, seconds: u64) {
        plan.tests.retain(|t| t.name != BURN_IN);
        // suite.yaml has the burn-in test (the manifest's tests check it); without it there is nothing to add.
        let Some(t) = self.tests.iter().find(|t| t.name == BURN_IN) else {
            return;
        };
        let mut params = t.params_for(device_kind(plan.vendor), Level::Full);
        params.insert("seconds".into(), seconds.into());
        plan.tests.push(PlannedTest {
            name: t.name.clone(),
            params,
            criteria: t.criteria.clone(),
            requires: t.requires.clone(),
        });
    }

    /// One benchmark with its parameters for the device kind, `overrides` replacing keys it has.
    pub fn bench_plan(
        &self,
        model: &str,
        vendor: Vendor,
        overrides: &BenchOverrides,
    ) -> Result<Plan, PlanError> {
        let Some(b) = self.benchmarks.iter().find(|b| b.name == model) else {
            return Err(PlanError::UnknownBenchmark {
                name: model.to_string(),
                known: self.benchmark_names().join(", "),
            });
        };
        let mut params = b
            .params
            .get(&device_kind(vendor))
            .cloned()
            .unwrap_or_default();
        for (key, value) in overrides.params() {
            if !params.contains_key(key) {
                return Err(PlanError::NotAParameter {
                    bench: b.name.clone(),
                    key: key.to_string(),
                    known: params.keys().cloned().collect::<Vec<_>>().join(", "),
                });
            }
            params.insert(key.to_string(), value);
        }
        Ok(Plan {
            schema_version: 1,
            kind: "bench",
            level: Level::Standard.name(),
            vendor,
            tests: vec![PlannedTest {
                name: b.name.clone(),
                params,
                criteria: b.criteria.clone(),
                requires: b.requires.clone(),
            }],
        })
    }

    /// The benchmarks' names, in manifest order.
    pub fn benchmark_names(&self) -> Vec<&str> {
        self.benchmarks.iter().map(|b| b.name.as_str()).collect()
    }
}

impl SuiteTest {
    /// The parameters at `level` for `kind`: that level's, else the nearest lower one's down to the test's own.
    fn params_for(&self, kind: DeviceKind, level: Level) -> Map<String, Value> {
        let Some(by_level) = self.params.get(&kind) else {
            return Map::new();
        };
        [Level::Full, Level::Standard, Level::Quick]
            .into_iter()
            .filter(|l| *l <= level && *l >= self.level)
            .find_map(|l| by_level.get(&l).cloned())
            .unwrap_or_default()
    }
}

/// The test `smoke --duration` runs: checked matmuls and copies for a time.
const BURN_IN: &str = "burn-in";

/// The CPU runs the CPU parameters; AMD and NVIDIA the GPU ones.
fn device_kind(vendor: Vendor) -> DeviceKind {
    if vendor.is_gpu() {
        DeviceKind::Gpu
    } else {
        DeviceKind::Cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: `--duration` adds the burn-in test, with its seconds, to any level, once.
    #[test]
    fn duration_adds_the_burn_in_once_at_any_level() {
        let s = Suite::embedded();
        let mut quick = s.smoke_plan(Level::Quick, Vendor::Amd, &[]).unwrap();
        assert!(quick.tests.iter().all(|t| t.name != BURN_IN));
        s.add_burn_in(&mut quick, 42);
        let last = quick.tests.last().unwrap();
        assert_eq!(
            (last.name.as_str(), &last.params["seconds"]),
            (BURN_IN, &42.into())
        );
        assert_eq!(last.params["size"], 4096);
        let mut full = s.smoke_plan(Level::Full, Vendor::Cpu, &[]).unwrap();
        s.add_burn_in(&mut full, 7);
        let burn: Vec<_> = full.tests.iter().filter(|t| t.name == BURN_IN).collect();
        assert_eq!(burn.len(), 1);
        assert_eq!(burn[0].params["seconds"], 7);
    }

    #[test]
    fn the_embedded_manifest_parses_and_levels_nest() {
        let s = Suite::embedded();
        assert_eq!(s.schema_version, 1);
        assert_eq!(s.levels, [Level::Quick, Level::Standard, Level::Full]);
        let names = |l| -> Vec<String> {
            s.smoke_plan(l, Vendor::Cpu, &[])
                .unwrap()
                .tests
                .into_iter()
                .map(|t| t.name)
                .collect()
        };
        let (q, st, f) = (
            names(Level::Quick),
            names(Level::Standard),
            names(Level::Full),
        );
        assert!(q.contains(&"numerics".to_string()) && !q.contains(&"models".to_string()));
        assert!(q.iter().all(|t| st.contains(t)) && st.iter().all(|t| f.contains(t)));
        assert!(st.contains(&"models".to_string()) && f.contains(&"diffusion".to_string()));
    }

    #[test]
    fn params_follow_the_device_kind_and_inherit_lower_levels() {
        let s = Suite::embedded();
        let gemm = |vendor, level| {
            s.smoke_plan(level, vendor, &["gemm".into()]).unwrap().tests[0].params["size"].clone()
        };
        assert_eq!(gemm(Vendor::Cpu, Level::Quick), 256);
        assert_eq!(gemm(Vendor::Amd, Level::Quick), 8192);
        // full has no gemm params of its own: it takes standard's.
        assert_eq!(
            gemm(Vendor::Cpu, Level::Full),
            gemm(Vendor::Cpu, Level::Standard)
        );
    }

    #[test]
    fn unknown_names_and_parameters_are_refused_with_the_choices() {
        let s = Suite::embedded();
        let e = s
            .smoke_plan(Level::Quick, Vendor::Cpu, &["models".into()])
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("no test `models` at level quick; the tests are: environment"),
            "{e}"
        );
        let e = s
            .bench_plan("resnet", Vendor::Cpu, &BenchOverrides::default())
            .unwrap_err();
        assert!(e.to_string().contains("resnet50"), "{e}");
        let e = s
            .bench_plan(
                "gemm",
                Vendor::Cpu,
                &BenchOverrides {
                    batch: Some(8),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the gemm benchmark takes no batch"),
            "{e}"
        );
        let p = s
            .bench_plan(
                "resnet50",
                Vendor::Cpu,
                &BenchOverrides {
                    batch: Some(4),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(p.tests[0].params["batch"], 4);
        assert_eq!(p.kind, "bench");
    }
}
