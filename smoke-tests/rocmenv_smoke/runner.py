"""run.py's main: read the plan, run each test, print a progress line per test, write the result document."""
import datetime
import importlib
import importlib.util
import os
import sys
import time
import traceback

from . import registry
from .plan import PlanError, load_plan
from .result import (SCHEMA_VERSION, Context, Failed, Skip, entry, entry_from_context, exception_line,
                     fix_for_error, print_progress, write_atomic)

USAGE = "usage: run.py --plan PLAN.json --out RESULT.json"


class UsageError(Exception):
    pass


def parse_args(argv):
    """argv -> (plan path, out path), or None for --help; raises UsageError."""
    opts = {}
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            return None
        key, sep, value = a.partition("=")
        if key not in ("--plan", "--out"):
            raise UsageError("unknown argument %r" % a)
        if not sep:
            if not args:
                raise UsageError("%s needs a value" % key)
            value = args.pop(0)
        if not value:
            raise UsageError("%s needs a value" % key)
        opts[key] = value
    for key in ("--plan", "--out"):
        if key not in opts:
            raise UsageError("%s is required" % key)
    return opts["--plan"], opts["--out"]


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def missing_modules(names):
    out = []
    for n in names:
        try:
            if importlib.util.find_spec(n) is None:
                out.append(n)
        except (ImportError, ValueError):
            out.append(n)
    return out


def _skip_missing(spec, missing):
    verb = "is" if len(missing) == 1 else "are"
    fix = " ".join(registry.INSTALL_HINTS.get(m, "pip install %s" % m) for m in missing)
    return entry(spec.name, "skip", "%s %s not installed in this image" % (" and ".join(missing), verb), fix,
                 params=spec.params)


class Runner(object):
    """Runs a plan's tests in order; each ends as one entry, whatever it raises."""

    def __init__(self, plan, run_py, stdout=None):
        self.plan = plan
        self.run_py = run_py
        self.stdout = stdout or sys.stdout
        self.entries = []
        self.device = None
        self.no_gpu = None  # (reason, fix) when a GPU vendor has no GPU

    def emit(self, test_entry):
        self.entries.append(test_entry)
        print_progress(test_entry, self.stdout)

    def run(self):
        started = now()
        try:
            import torch  # noqa: F401
        except Exception as e:
            return self._without_torch(started, exception_line(e))
        from . import devices, env

        vendor = self.plan.vendor
        errors = []
        info = _safe(lambda: devices.device_info(vendor), errors,
                     {"kind": "cpu", "name": None, "gfx": None, "compute_capability": None, "count": 0,
                      "devices": []})
        vers = _safe(devices.versions, errors, dict.fromkeys(
            ("python", "torch", "hip", "cuda", "miopen", "cudnn", "onnxruntime", "torchvision")))
        if vendor == "cpu":
            self.device = devices.Device("cpu")
        elif devices.gpu_available():
            self.device = devices.Device(devices.build_kind(), 0)
        else:
            ok, reason, fix = env.diagnose(vendor, env.gpu_facts())
            self.no_gpu = ("no GPU visible to torch: %s" % reason, fix)
        for err in errors:
            sys.stderr.write("run.py: reading the device: %s\n" % err)
        for spec in self.plan.tests:
            self.emit(self.run_one(spec))
        return self.document(started, info, vers, devices.env_snapshot())

    def run_one(self, spec):
        kind = self.plan.kind
        td = registry.lookup(kind, spec.name)
        if td is None:
            known = sorted(registry.SMOKE if kind == "smoke" else registry.BENCH)
            return entry(spec.name, "fail", "unknown test",
                         "use one of the %s tests: %s" % (kind, ", ".join(known)), params=spec.params)
        missing = missing_modules(list(td.requires) + [r for r in spec.requires if r not in td.requires])
        if missing:
            return _skip_missing(spec, missing)
        if td.needs_device and self.device is None:
            return entry(spec.name, "fail", "not run: " + self.no_gpu[0], self.no_gpu[1], params=spec.params)
        ctx = Context(spec.name, kind, self.plan.level, self.plan.vendor, self.device, spec.params, spec.criteria,
                      self.run_py, self.emit)
        t0 = time.perf_counter()
        try:
            import torch
            torch.manual_seed(int(spec.params.get("seed", 0)))
            fn = getattr(importlib.import_module("rocmenv_smoke." + td.module), td.function)
            fn(ctx)
            result = entry_from_context(ctx, time.perf_counter() - t0)
        except Skip as s:
            result = entry(spec.name, "skip", "; ".join([s.reason] + ctx.notes), s.fix, ctx.metrics,
                           ctx.effective_params(), time.perf_counter() - t0)
        except Failed as f:
            result = entry(spec.name, "fail", "; ".join([f.reason] + ctx.failures + ctx.notes),
                           f.fix or (" ".join(ctx.fixes) or None), ctx.metrics, ctx.effective_params(),
                           time.perf_counter() - t0)
        except Exception as e:
            line = exception_line(e)
            sys.stderr.write("run.py: test %s raised:\n%s" % (spec.name, traceback.format_exc()))
            result = entry(spec.name, "fail", "; ".join([line] + ctx.failures + ctx.notes),
                           fix_for_error(line) or (" ".join(ctx.fixes) or None), ctx.metrics,
                           ctx.effective_params(), time.perf_counter() - t0)
        finally:
            if self.device is not None:
                try:
                    self.device.free_memory()
                except Exception:
                    pass
        return result

    def document(self, started, info, vers, env_vars):
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.plan.kind,
            "level": self.plan.level,
            "vendor": self.plan.vendor,
            "device": info,
            "versions": vers,
            "env": env_vars,
            "tests": self.entries,
            "started_at": started,
            "finished_at": now(),
        }

    def _without_torch(self, started, line):
        fix = "use an image with PyTorch (rocm/pytorch, an NGC pytorch image, or pip install torch)"
        for spec in self.plan.tests:
            self.emit(entry(spec.name, "fail", "torch cannot be imported in this image: " + line, fix,
                            params=spec.params))
        import platform
        vers = dict.fromkeys(("python", "torch", "hip", "cuda", "miopen", "cudnn", "onnxruntime", "torchvision"))
        vers["python"] = platform.python_version()
        info = {"kind": "cpu", "name": None, "gfx": None, "compute_capability": None, "count": 0, "devices": []}
        env_vars = dict((k, os.environ.get(k)) for k in ENV_FALLBACK)
        return self.document(started, info, vers, env_vars)


# The same names as devices.ENV_VARS, for the document written when torch (and so devices.py) cannot load.
ENV_FALLBACK = ("HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                "GPU_DEVICE_ORDINAL", "NVIDIA_VISIBLE_DEVICES", "PYTORCH_ROCM_ARCH", "TORCH_CUDA_ARCH_LIST",
                "PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "MIOPEN_FIND_MODE",
                "MIOPEN_USER_DB_PATH", "HSA_XNACK", "OMP_NUM_THREADS")


def _safe(fn, errors, default):
    try:
        return fn()
    except Exception as e:
        errors.append(exception_line(e))
        return default


def main(argv, run_py):
    """Exit status: 0 no test failed, 1 a test failed, 2 bad usage or plan."""
    try:
        parsed = parse_args(argv)
    except UsageError as e:
        sys.stderr.write("run.py: %s (%s)\n" % (e, USAGE))
        return 2
    if parsed is None:
        sys.stdout.write(USAGE + "\n")
        return 0
    plan_path, out_path = parsed
    try:
        plan = load_plan(plan_path)
    except PlanError as e:
        sys.stderr.write("run.py: invalid plan %s: %s\n" % (plan_path, e))
        return 2
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        sys.stderr.write("run.py: --out %s: directory %s does not exist\n" % (out_path, out_dir))
        return 2
    doc = Runner(plan, run_py).run()
    write_atomic(out_path, doc)
    return 1 if any(t["status"] == "fail" for t in doc["tests"]) else 0
