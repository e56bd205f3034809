"""tune: one knob at a time against the default, same model and batch, each run in a fresh run.py process.

A fresh process per run is what makes environment knobs honest: PYTORCH_TUNABLEOP_ENABLED and
MIOPEN_FIND_MODE are read when torch and MIOpen initialise, so they cannot be flipped inside one process;
and no run inherits kernels, caches or algorithm choices from another.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import torch

from . import devices
from .result import Failed, entry, metric

Knob = collections.namedtuple("Knob", "name what params env")

KNOBS = (
    Knob("cudnn-benchmark", "torch.backends.cudnn.benchmark = True (MIOpen's find on ROCm)",
         {"cudnn_benchmark": True}, {}),
    Knob("tunableop", "PYTORCH_TUNABLEOP_ENABLED=1 (GEMM tuning, set before torch starts)", {},
         {"PYTORCH_TUNABLEOP_ENABLED": "1"}),
    Knob("miopen-find-mode", "MIOPEN_FIND_MODE=NORMAL (MIOpen's full search; the default is DYNAMIC_HYBRID)", {},
         {"MIOPEN_FIND_MODE": "NORMAL"}),
    Knob("channels-last", "model and input in channels_last memory format", {"channels_last": True}, {}),
    Knob("amp", "automatic mixed precision (fp16 on a GPU, bf16 on the CPU)", {"precision": "amp"}, {}),
)

# Variables a knob sets: the default run and the other knobs' runs go without them.
KNOB_ENV = ("PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_TUNABLEOP_FILENAME", "MIOPEN_FIND_MODE")


def skip_reason(knob, device_kind, base_params):
    """Why a knob does nothing here, or None when it applies."""
    if knob.name == "amp" and base_params.get("precision") == "amp":
        return "the default already uses AMP (params.precision is amp)"
    if device_kind == "cpu":
        return {
            "cudnn-benchmark": "cudnn.benchmark picks cuDNN/MIOpen convolution algorithms; CPU convolutions do not "
                               "use it",
            "tunableop": "TunableOp tunes GPU GEMMs (rocBLAS/hipBLASLt, cuBLAS); it does nothing on the CPU",
            "miopen-find-mode": "MIOpen is ROCm's GPU library; the CPU does not use it",
        }.get(knob.name)
    if knob.name == "miopen-find-mode" and device_kind != "rocm":
        return "MIOpen is ROCm's library; CUDA convolutions use cuDNN"
    if knob.name == "tunableop" and not hasattr(torch.cuda, "tunable"):
        return "this torch (%s) has no TunableOp (torch.cuda.tunable)" % torch.__version__
    return None


def child_env(knob_env, tmp):
    env = dict(os.environ)
    for k in KNOB_ENV:
        env.pop(k, None)
    env.update(knob_env)
    if "PYTORCH_TUNABLEOP_ENABLED" in knob_env:
        # TunableOp writes its results file; keep it out of the (maybe read-only) working directory.
        env["PYTORCH_TUNABLEOP_FILENAME"] = os.path.join(tmp, "tunableop_results.csv")
    return env


def run_child(ctx, test_name, params, env, tmp, label, timeout):
    """Runs run.py on a one-test bench plan; returns that test's entry (a fail entry when the child broke)."""
    plan = {"schema_version": 1, "kind": "bench", "level": ctx.level, "vendor": ctx.vendor,
            "tests": [{"name": test_name, "params": params}]}
    plan_path = os.path.join(tmp, label + ".plan.json")
    out_path = os.path.join(tmp, label + ".result.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    cmd = [sys.executable, ctx.run_py, "--plan", plan_path, "--out", out_path]
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return entry(test_name, "fail", "timed out after %ds" % timeout, None)
    try:
        with open(out_path) as f:
            doc = json.load(f)
        return doc["tests"][0]
    except (IOError, OSError, ValueError, KeyError, IndexError):
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        return entry(test_name, "fail", "run.py exited %d without a result: %s" % (proc.returncode, tail[0]), None)


def _value(test_entry, name):
    for m in test_entry.get("metrics", []):
        if m["name"] == name:
            return m["value"]
    return None


def bench_tune(ctx):
    model = ctx.param("model", "resnet50")
    base = {
        "batch": ctx.param("batch", 2),
        "image_size": ctx.param("image_size", 32),
        "mode": ctx.param("mode", "train"),
        "precision": ctx.param("precision", "fp32"),
        "warmup": ctx.param("warmup", 1),
        "iters": ctx.param("iters", 3),
    }
    if model not in ("resnet50", "vit_b_16"):
        raise Failed("params.model must be resnet50 or vit_b_16, got %r" % (model,))
    names = ctx.param("knobs", [k.name for k in KNOBS])
    timeout = int(ctx.param("timeout_s", 900))
    unknown = [n for n in names if n not in [k.name for k in KNOBS]]
    if unknown:
        raise Failed("unknown knob%s: %s" % ("s" if len(unknown) > 1 else "", ", ".join(unknown)),
                     "use: %s" % ", ".join(k.name for k in KNOBS))
    preset = ["%s=%s" % (k, os.environ[k]) for k in KNOB_ENV if k in os.environ]
    if preset:
        ctx.note("the default run goes without %s, which this environment sets" % ", ".join(preset))
    kind = devices.build_kind() if ctx.device.is_gpu else "cpu"
    tmp = tempfile.mkdtemp(prefix="rocmenv-tune-")
    try:
        t0 = time.perf_counter()
        default = run_child(ctx, model, base, child_env({}, tmp), tmp, "default", timeout)
        base_thr = _value(default, "throughput") if default["status"] == "pass" else None
        ctx.emit_part(entry("tune/default", default["status"], default["reason"], default["fix"],
                            default["metrics"], base, time.perf_counter() - t0))
        if not base_thr:
            raise Failed("the default run of %s did not pass: %s" % (model, default["reason"]), default["fix"])
        ctx.metric("default_throughput", base_thr, "images/s")
        for knob in KNOBS:
            if knob.name not in names:
                continue
            params = dict(base, **knob.params)
            part = "tune/" + knob.name
            reason = skip_reason(knob, kind, base)
            if reason:
                ctx.emit_part(entry(part, "skip", reason, None, [], params))
                continue
            t0 = time.perf_counter()
            res = run_child(ctx, model, params, child_env(knob.env, tmp), tmp, knob.name, timeout)
            thr = _value(res, "throughput") if res["status"] == "pass" else None
            metrics = list(res.get("metrics", []))
            status, why = res["status"], res["reason"]
            if thr:
                speedup = thr / base_thr
                metrics.append(metric("speedup", speedup, "x"))
                ctx.metric(knob.name.replace("-", "_") + "_speedup", speedup, "x")
                why = "; ".join(r for r in (knob.what, why) if r)
            elif status == "fail":
                ctx.fail("%s: %s" % (knob.name, why), res.get("fix"))
            shown = dict(params, **dict(("env:" + k, v) for k, v in knob.env.items()))
            ctx.emit_part(entry(part, status, why, res.get("fix"), metrics, shown, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ctx.note("speed-ups are throughput with the knob over the default run's (%s %s, batch %s, %s)"
             % (model, base["mode"], base["batch"], base["precision"]))
