//! The smoke and benchmark suites in `smoke-tests/`: the embedded files, the manifest and the plans it makes, the
//! result documents `run.py` writes, and the comparison with datasheet peaks and baselines.

mod files;
mod judge;
mod manifest;
mod overrides;
mod placement;
mod result;

pub use files::{suite_files, SUITE_YAML};
pub use judge::{baselines_from, compare, model_for, Baseline, Baselines};
pub use manifest::{Benchmark, DeviceKind, Level, Plan, PlanError, PlannedTest, Suite, SuiteTest};
pub use overrides::{BenchOverrides, Mode, Precision};
pub use placement::{HostGpu, Placement};
pub use result::{
    parse_progress, parse_result, tail_lines, Better, Checked, Comparison, Device, DeviceInfo,
    Metric, ResultError, SuiteResult, TestResult, PROGRESS_PREFIX, SCHEMA_VERSION,
};
