"""run.py end to end on this machine's CPU: plans from suite.yaml, the result document, exit codes."""
import json
import os
import time

import pytest

from conftest import RUN_PY, plan
from schema import check_document
import suite_plan

yaml = pytest.importorskip("yaml")


def no_unused_params(doc):
    return [t["name"] for t in doc["tests"] if t["reason"] and "params not used" in t["reason"]]


def test_quick_cpu_run_matches_the_contract(run):
    suite = suite_plan.load_suite()
    p = suite_plan.smoke_plan(suite, "quick", "cpu")
    assert [t["name"] for t in p["tests"]] == ["environment", "no-cpu-fallback", "arch-fit", "numerics", "memory",
                                              "gemm", "bandwidth"]
    t0 = time.time()
    r = run(p)
    elapsed = time.time() - t0
    assert r.rc == 0, r.stderr
    assert check_document(r.doc) == []
    assert (r.doc["kind"], r.doc["level"], r.doc["vendor"]) == ("smoke", "quick", "cpu")
    assert r.doc["device"]["kind"] == "cpu" and r.doc["device"]["count"] == 1
    assert r.doc["versions"]["torch"] and r.doc["versions"]["python"]
    assert set(r.doc["env"]) >= {"HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                                 "PYTORCH_TUNABLEOP_ENABLED", "MIOPEN_FIND_MODE"}
    status = dict((t["name"], t["status"]) for t in r.doc["tests"])
    assert status == {"environment": "pass", "no-cpu-fallback": "skip", "arch-fit": "skip", "numerics": "pass",
                      "memory": "pass", "gemm": "pass", "bandwidth": "pass"}
    assert r.test("no-cpu-fallback")["reason"] == "vendor cpu: no GPU expected"
    names = [m["name"] for m in r.test("gemm")["metrics"]]
    assert "gemm_fp32_tflops" in names and "gemm_fp32_err_over_bound" in names
    assert all(m["unit"] == ("TFLOP/s" if m["name"].endswith("_tflops") else "ratio")
               for m in r.test("gemm")["metrics"])
    assert all(m["value"] < 1 for m in r.test("gemm")["metrics"] if m["name"].endswith("_err_over_bound"))
    # Vendor cpu: no entry is about a GPU.
    assert all(t["device"] is None for t in r.doc["tests"])
    assert [m["name"] for m in r.test("bandwidth")["metrics"]] == ["bandwidth_device_copy_gbs"]
    errs = [m for m in r.test("numerics")["metrics"] if m["name"].endswith("_max_rel_err")]
    assert errs and all(0 <= m["value"] < 0.05 for m in errs)
    # One progress line per entry, in order, equal to the entries written.
    assert r.progress() == r.doc["tests"]
    assert no_unused_params(r.doc) == []
    assert not os.path.exists(r.out_path + ".tmp")
    assert elapsed < 60, "quick CPU run took %.1fs" % elapsed


def test_standard_cpu_run(run):
    suite = suite_plan.load_suite()
    p = suite_plan.smoke_plan(suite, "standard", "cpu")
    p["tests"] = [t for t in p["tests"] if t["name"] not in ("environment", "no-cpu-fallback", "arch-fit",
                                                             "numerics", "memory", "gemm", "bandwidth")]
    r = run(p)
    assert check_document(r.doc) == []
    assert r.rc == 0, [(t["name"], t["reason"]) for t in r.doc["tests"] if t["status"] == "fail"]
    assert no_unused_params(r.doc) == []
    status = dict((t["name"], t["status"]) for t in r.doc["tests"])
    assert status["models"] == "pass" and status["int8"] == "pass" and status["profile"] == "pass"
    assert status["max-batch"] == "pass"
    pct = dict((m["name"], m["value"]) for m in r.test("profile")["metrics"] if m["name"].endswith("_pct"))
    assert sum(pct.values()) == pytest.approx(100, abs=0.01) and pct["convolution_pct"] > 20
    mb = dict((m["name"], m["value"]) for m in r.test("max-batch")["metrics"])
    assert mb["max_batch"] == 8 and mb["search_tries"] == 4
    assert any(m["name"] == "resnet50_train_fp32_images_per_s" and m["value"] > 0 for m in r.test("models")["metrics"])
    if status["onnx"] == "skip":
        assert "not installed in this image" in r.test("onnx")["reason"]


def test_gpu_vendor_without_a_gpu_fails_and_says_why(run):
    r = run(plan([{"name": "no-cpu-fallback"}, {"name": "arch-fit"}, {"name": "gemm"}], vendor="amd"))
    assert r.rc == 1
    assert check_document(r.doc) == []
    nf = r.test("no-cpu-fallback")
    assert nf["status"] == "fail" and "CPU-only build" in nf["reason"] and "ROCm build" in nf["fix"]
    assert r.test("arch-fit")["status"] == "fail"
    g = r.test("gemm")
    assert g["status"] == "fail" and g["reason"].startswith("not run: no GPU visible to torch")
    assert r.doc["device"] == {"kind": "cpu", "name": None, "gfx": None, "compute_capability": None, "count": 0,
                               "devices": []}


def test_unknown_test_is_a_fail_and_the_rest_run(run):
    r = run(plan([{"name": "gemm-xl"}, {"name": "environment"}]))
    assert r.rc == 1
    bad = r.test("gemm-xl")
    assert (bad["status"], bad["reason"]) == ("fail", "unknown test")
    assert "numerics" in bad["fix"]
    assert r.test("environment")["status"] == "pass"
    # A bench name is unknown to a smoke plan.
    r = run(plan([{"name": "resnet50"}]))
    assert r.test("resnet50")["reason"] == "unknown test"


def test_a_test_that_raises_becomes_a_fail_with_the_exception(run):
    r = run(plan([{"name": "gemm", "params": {"size": "big"}}, {"name": "environment"}]))
    assert r.rc == 1
    g = r.test("gemm")
    assert g["status"] == "fail"
    assert g["reason"] == "ValueError: invalid literal for int() with base 10: 'big' (on cpu)"
    assert r.test("environment")["status"] == "pass"
    assert "Traceback" in r.stderr


def test_missing_optional_module_is_a_skip(run):
    r = run(plan([{"name": "gemm", "requires": ["rocmenv_no_such_module"]},
                  {"name": "environment", "requires": ["rocmenv_no_such_module", "json"]}]))
    assert r.rc == 0
    g = r.test("gemm")
    assert (g["status"], g["reason"]) == ("skip", "rocmenv_no_such_module is not installed in this image")
    assert g["fix"] == "pip install rocmenv_no_such_module"
    assert r.test("environment")["status"] == "skip"


def test_diffusion_without_diffusers_is_a_skip(run):
    try:
        import diffusers  # noqa: F401
        pytest.skip("diffusers is installed here")
    except ImportError:
        pass
    r = run(plan([{"name": "diffusion"}], level="full"))
    d = r.test("diffusion")
    assert (d["status"], d["reason"]) == ("skip", "diffusers is not installed in this image")


def test_bench_gemm_reports_statistics(run):
    suite = suite_plan.load_suite()
    r = run(suite_plan.bench_plan(suite, "gemm", "cpu"))
    assert r.rc == 0, r.stderr
    assert check_document(r.doc) == []
    names = [m["name"] for m in r.test("gemm")["metrics"]]
    assert names == ["throughput", "median_ms", "p99_ms", "cv_pct", "peak_rss_bytes", "err_over_bound"]
    m = dict((x["name"], x["value"]) for x in r.test("gemm")["metrics"])
    assert m["p99_ms"] >= m["median_ms"] > 0


def test_tune_runs_knobs_in_child_processes(run):
    suite = suite_plan.load_suite()
    p = suite_plan.bench_plan(suite, "tune", "cpu")
    p["tests"][0]["params"] = dict(p["tests"][0]["params"], knobs=["cudnn-benchmark", "tunableop", "channels-last"],
                                   iters=2)
    r = run(p, env={"PYTORCH_TUNABLEOP_ENABLED": "1"})
    assert r.rc == 0, r.stderr
    assert check_document(r.doc) == []
    assert [t["name"] for t in r.doc["tests"]] == ["tune/default", "tune/cudnn-benchmark", "tune/tunableop",
                                                   "tune/channels-last", "tune"]
    assert r.test("tune/default")["status"] == "pass"
    assert r.test("tune/cudnn-benchmark")["status"] == "skip"
    assert "CPU" in r.test("tune/tunableop")["reason"]
    cl = dict((m["name"], m["value"]) for m in r.test("tune/channels-last")["metrics"])
    assert cl["speedup"] > 0
    summary = dict((m["name"], m["value"]) for m in r.test("tune")["metrics"])
    assert summary["channels_last_speedup"] == cl["speedup"]
    # Three interleaved runs each, and a verdict against their spread.
    assert len([k for k in cl if k.startswith("throughput_run")]) == 3 and cl["noise_pct"] >= 0
    assert "helps" in r.test("tune/channels-last")["reason"] or "within the noise" in r.test("tune/channels-last")[
        "reason"]
    assert "PYTORCH_TUNABLEOP_ENABLED=1" in r.test("tune")["reason"]


@pytest.mark.parametrize("args,message", [
    ([], "--plan is required"),
    (["--plan"], "--plan needs a value"),
    (["--plan", "p.json"], "--out is required"),
    (["--plan", "p.json", "--out", "r.json", "--level", "quick"], "unknown argument '--level'"),
])
def test_usage_errors_exit_2_with_one_line(run, args, message):
    r = run("{}", args=args)
    assert r.rc == 2
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr
    assert r.doc is None


@pytest.mark.parametrize("text,message", [
    ("not json", "not JSON"),
    (json.dumps({"schema_version": 1, "kind": "smoke", "level": "quick", "vendor": "cpu", "tests": []}),
     "tests must be a non-empty list"),
    (json.dumps({"schema_version": 9, "kind": "smoke", "level": "quick", "vendor": "cpu",
                 "tests": [{"name": "gemm"}]}), "schema_version must be 1"),
])
def test_invalid_plan_exits_2_with_one_line(run, text, message):
    r = run(text)
    assert r.rc == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid plan" in lines[0] and message in lines[0]
    assert r.doc is None and r.stdout == ""


def test_missing_plan_file_and_out_directory(run, tmp_path):
    r = run("{}", args=["--plan", str(tmp_path / "nope.json"), "--out", str(tmp_path / "r.json")])
    assert r.rc == 2 and "cannot read" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    good = json.dumps(plan([{"name": "environment"}]))
    (tmp_path / "good.json").write_text(good)
    r = run("{}", args=["--plan", str(tmp_path / "good.json"), "--out", str(tmp_path / "no/dir/r.json")])
    assert r.rc == 2 and "does not exist" in r.stderr


def test_help(run):
    r = run("{}", args=["--help"])
    assert r.rc == 0 and "--plan PLAN.json --out RESULT.json" in r.stdout


def test_schema_checker_catches_mistakes(run):
    r = run(plan([{"name": "environment"}]))
    assert check_document(r.doc) == []
    broken = json.loads(json.dumps(r.doc))
    broken["tests"][0]["status"] = "ok"
    del broken["versions"]["torch"]
    broken["device"]["count"] = 3
    broken["tests"][0]["metrics"].append({"name": "x", "value": "1", "unit": "s"})
    errors = check_document(broken)
    assert any("status" in e for e in errors)
    assert any("versions: missing ['torch']" in e for e in errors)
    assert any("device.count" in e for e in errors)
    assert any("metrics" in e and "value" in e for e in errors)


def test_run_py_is_the_entry_point():
    with open(RUN_PY) as f:
        text = f.read()
    assert text.startswith("#!/usr/bin/env python3")
    assert os.access(RUN_PY, os.X_OK)


def test_without_torch_every_test_fails_and_the_document_is_written(run, tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text("raise ImportError('libtorch_hip.so: cannot open shared object file')\n")
    r = run(plan([{"name": "environment"}, {"name": "gemm"}]), env={"PYTHONPATH": str(fake)})
    assert r.rc == 1
    assert check_document(r.doc) == []
    for t in r.doc["tests"]:
        assert t["status"] == "fail"
        assert t["reason"] == ("torch cannot be imported in this image: ImportError: libtorch_hip.so: cannot open "
                               "shared object file")
    assert r.doc["versions"]["torch"] is None and r.doc["device"]["count"] == 0


def test_the_env_list_without_torch_is_the_same():
    from rocmenv_smoke import devices, runner
    assert runner.ENV_FALLBACK == devices.ENV_VARS
