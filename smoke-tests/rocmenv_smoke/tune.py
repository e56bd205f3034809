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
    # MIOpen searches only when asked to find (cudnn.benchmark on): without it the find mode changes nothing.
    Knob("miopen-find-mode", "MIOPEN_FIND_MODE=NORMAL with cudnn.benchmark on (MIOpen's full search; the default is "
         "DYNAMIC_HYBRID)", {"cudnn_benchmark": True}, {"MIOPEN_FIND_MODE": "NORMAL"}),
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
    if ctx.device is not None and ctx.device.is_gpu:
        cmd += ["--devices", str(ctx.device.index)]
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


def spread(values):
    """(max - min) / median of a run's repeated throughputs: the noise a speed-up must beat."""
    from .stats import median
    m = median(values)
    return (max(values) - min(values)) / m if m else float("inf")


def verdict(base_thr, knob_thr):
    """(speed-up, noise, helps): the median throughputs' ratio, the larger spread of the two runs' repeats, and
    whether the gain beats that noise (a knob that only matches the default's jitter does not help)."""
    from .stats import median
    speedup = median(knob_thr) / median(base_thr)
    noise = max(spread(base_thr), spread(knob_thr))
    return speedup, noise, speedup - 1.0 > noise


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
    repeats = int(ctx.param("repeats", 3))
    if repeats < 3:
        raise Failed("params.repeats must be at least 3 (the spread of fewer runs says nothing), got %d" % repeats)
    unknown = [n for n in names if n not in [k.name for k in KNOBS]]
    if unknown:
        raise Failed("unknown knob%s: %s" % ("s" if len(unknown) > 1 else "", ", ".join(unknown)),
                     "use: %s" % ", ".join(k.name for k in KNOBS))
    preset = ["%s=%s" % (k, os.environ[k]) for k in KNOB_ENV if k in os.environ]
    if preset:
        ctx.note("the default run goes without %s, which this environment sets" % ", ".join(preset))
    kind = devices.build_kind() if ctx.device.is_gpu else "cpu"
    runs = [("default", None, base, {})]
    order = []  # (label, the skip entry or None): the detail entries in KNOBS order, after the default's
    for knob in KNOBS:
        if knob.name not in names:
            continue
        params = dict(base, **knob.params)
        reason = skip_reason(knob, kind, base)
        if reason:
            order.append((knob.name, entry("tune/" + knob.name, "skip", reason, None, [], params,
                                           device=ctx.device_index)))
            continue
        order.append((knob.name, None))
        runs.append((knob.name, knob, params, knob.env))
    tmp = tempfile.mkdtemp(prefix="rocmenv-tune-")
    results = dict((label, []) for label, _, _, _ in runs)
    spent = dict((label, 0.0) for label, _, _, _ in runs)
    try:
        # Interleaved: round r runs the default and every knob once, so drift (clocks, heat) hits them alike.
        for r in range(repeats):
            for label, knob, params, env in runs:
                t0 = time.perf_counter()
                res = run_child(ctx, model, params, child_env(env, tmp), tmp, "%s-%d" % (label, r), timeout)
                spent[label] += time.perf_counter() - t0
                results[label].append(res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def throughputs(label):
        return [_value(x, "throughput") for x in results[label] if x["status"] == "pass"]

    base_thr = throughputs("default")
    failed = [x for x in results["default"] if x["status"] != "pass"]
    first = failed[0] if failed else results["default"][-1]
    ctx.emit_part(entry("tune/default", "fail" if failed else "pass",
                        first["reason"] if failed else "%d runs" % repeats, first["fix"] if failed else None,
                        _summary(base_thr, first), base, spent["default"], ctx.device_index))
    if failed or not all(base_thr):
        raise Failed("the default run of %s did not pass: %s" % (model, first["reason"]), first["fix"])
    ctx.metric("default_throughput", _median(base_thr), "images/s")
    helps, noise_only = [], []
    by_label = dict((r[0], r) for r in runs)
    for label, skipped in order:
        if skipped is not None:
            ctx.emit_part(skipped)
            continue
        _, knob, params, env = by_label[label]
        thr = throughputs(label)
        failed = [x for x in results[label] if x["status"] != "pass"]
        shown = dict(params, **dict(("env:" + k, v) for k, v in env.items()))
        if failed or not all(thr):
            why = failed[0]["reason"] if failed else "a run reported no throughput"
            ctx.fail("%s: %s" % (label, why), failed[0].get("fix") if failed else None)
            ctx.emit_part(entry("tune/" + label, "fail", why, failed[0].get("fix") if failed else None,
                                [], shown, spent[label], ctx.device_index))
            continue
        speedup, noise, good = verdict(base_thr, thr)
        metrics = _summary(thr, results[label][-1]) + [metric("speedup", speedup, "x"),
                                                       metric("noise_pct", 100.0 * noise, "%", "lower")]
        ctx.metric(label.replace("-", "_") + "_speedup", speedup, "x")
        ctx.metric(label.replace("-", "_") + "_noise_pct", 100.0 * noise, "%", "lower")
        (helps if good else noise_only).append(label)
        why = "%s; %s: speed-up %.3gx, spread %.1f%%" % (knob.what, "helps" if good else "within the noise",
                                                          speedup, 100.0 * noise)
        ctx.emit_part(entry("tune/" + label, "pass", why, None, metrics, shown, spent[label], ctx.device_index))
    ctx.note("helps: %s; within the noise: %s" % (", ".join(helps) or "none", ", ".join(noise_only) or "none"))
    ctx.note("speed-ups are the median throughput with the knob over the default's, over %d interleaved runs each "
             "(%s %s, batch %s, %s); a knob helps only when its gain exceeds the larger (max - min) / median of "
             "the two" % (repeats, model, base["mode"], base["batch"], base["precision"]))


def _median(values):
    from .stats import median
    return median(values)


def _summary(thr, last):
    """A run's metrics: the median throughput over its repeats, each repeat's, and the last run's other figures."""
    out = [metric("throughput", _median(thr), "images/s")] if thr else []
    out += [metric("throughput_run%d" % (i + 1), v, "images/s") for i, v in enumerate(thr)]
    out += [m for m in last.get("metrics", []) if m["name"] != "throughput"]
    return out
