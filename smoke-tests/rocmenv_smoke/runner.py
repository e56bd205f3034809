"""run.py's main: read the plan, run each test, print a progress line per test, write the result document."""
import datetime
import importlib
import importlib.util
import os
import sys
import threading
import time
import traceback

from . import deadlines, faults, registry
from .plan import PlanError, load_plan
from .result import (SCHEMA_VERSION, Context, Failed, Skip, device_label, entry, entry_from_context,
                     exception_line, where, fix_for_error, print_progress, write_atomic)

USAGE = "usage: run.py --plan PLAN.json --out RESULT.json [--devices 0,2]"


class UsageError(Exception):
    pass


def parse_devices(text):
    """"0,2" -> [0, 2]: torch's GPU indices, unique, in the order given; raises UsageError."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise UsageError("--devices %r: expected torch GPU indices like 0,2" % text)
        if int(part) in out:
            raise UsageError("--devices %r: GPU %s is listed twice" % (text, part))
        out.append(int(part))
    return out


def parse_args(argv):
    """argv -> (plan path, out path, devices or None), or None for --help; raises UsageError."""
    opts = {}
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            return None
        key, sep, value = a.partition("=")
        if key not in ("--plan", "--out", "--devices"):
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
    devices = parse_devices(opts["--devices"]) if "--devices" in opts else None
    return opts["--plan"], opts["--out"], devices


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
    return entry(spec.name, "skip", "%s %s not installed %s" % (" and ".join(missing), verb, where()), fix,
                 params=spec.params)


class Runner(object):
    """Runs a plan's tests in order; each ends as one entry, whatever it raises."""

    def __init__(self, plan, run_py, stdout=None, device_indices=None):
        self.plan = plan
        self.run_py = run_py
        self.stdout = stdout or sys.stdout
        self.entries = []
        self.device_indices = device_indices  # --devices: torch indices, None for every visible GPU
        self.devices = []  # the selected devices: the CPU, or one Device per selected GPU
        self.no_gpu = None  # (reason, fix) when a GPU vendor has no GPU
        self._lock = threading.Lock()
        self.stuck = {}  # device label -> the reason its later tests are not run (it did not recover)
        self.abandoned = []  # the threads of tests that outlived their deadline, still running

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
            self.devices = [devices.Device("cpu")]
        elif devices.gpu_available():
            import torch
            count = torch.cuda.device_count()
            wanted = self.device_indices if self.device_indices is not None else list(range(count))
            beyond = [i for i in wanted if i >= count]
            if beyond:
                raise UsageError("--devices %s: torch sees %d GPU%s (indices 0-%d)"
                                 % (",".join(map(str, wanted)), count, "" if count == 1 else "s", count - 1))
            self.devices = [devices.Device(devices.build_kind(), i) for i in wanted]
        else:
            ok, reason, fix = env.diagnose(vendor, env.gpu_facts())
            self.no_gpu = ("no GPU visible to torch: %s" % reason, fix)
        for err in errors:
            sys.stderr.write("run.py: reading the device: %s\n" % err)
        for spec in self.plan.tests:
            for e in self.run_one(spec):
                self.emit(e)
        return self.document(started, info, vers, devices.env_snapshot())

    def run_one(self, spec):
        """The test's entries: one, or one per selected GPU for a per-device test."""
        td = registry.lookup(self.plan.kind, spec.name)
        gpus = [d for d in self.devices if d.is_gpu]
        if td is None or td.scope not in ("each", "serial") or not gpus:
            return [self.run_single(spec, self.devices[0] if self.devices else None, False)]
        if td.scope == "serial" or len(gpus) == 1:
            return [self.run_single(spec, d, True) for d in gpus]
        results = [None] * len(gpus)

        def work(i, d):
            try:
                results[i] = self.run_single(spec, d, True)
            except BaseException as e:  # a thread must hand back an entry whatever happens
                results[i] = entry(spec.name, "fail", exception_line(e), None, params=spec.params, device=d.index)

        threads = [threading.Thread(target=work, args=(i, d), name="%s-gpu%d" % (spec.name, d.index))
                   for i, d in enumerate(gpus)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    def run_single(self, spec, device, per_device):
        """The test's entry on `device`, waited for until its deadline (deadlines.py); past it, a failed entry that
        names the test and the device as possibly stuck, and the run goes on."""
        td = registry.lookup(self.plan.kind, spec.name)
        label = device_label(device)
        index = device.index if (per_device and device is not None and device.is_gpu) else None
        if td is not None and td.needs_device and label in self.stuck:
            return entry(spec.name, "fail", "not run: %s" % self.stuck[label], STUCK_FIX, params=spec.params,
                         device=index)
        limit = deadlines.deadline_s(spec.name, spec.params, self.plan.level, device is not None and device.is_gpu)
        box = {}
        gate = {"open": True}  # closed when the deadline passes: a late test adds nothing to the document

        def emit(part):
            if gate["open"]:
                self.emit(part)

        def work():
            try:
                if device is not None and device.is_gpu:
                    import torch
                    with torch.cuda.device(device.index):
                        box["entry"] = self._run_test(spec, device, per_device, emit)
                else:
                    box["entry"] = self._run_test(spec, device, per_device, emit)
            except BaseException as e:  # the thread must hand back an entry whatever happens
                box["entry"] = entry(spec.name, "fail", exception_line(e), None, params=spec.params, device=index)

        name = threading.current_thread().name
        t = threading.Thread(target=work, name=name if name != "MainThread" else "%s-%s" % (spec.name, label))
        t.daemon = True
        t0 = time.perf_counter()
        t.start()
        t.join(limit)
        if not t.is_alive():
            return box["entry"]
        gate["open"] = False
        self.abandoned.append(t)
        return self._stuck_entry(spec, device, label, index, limit, time.perf_counter() - t0)

    def _stuck_entry(self, spec, device, label, index, limit, took):
        """The entry of a test that outlived its deadline; marks the device stuck unless a small matmul on it
        still returns."""
        reason = ("%s on %s: still running after its deadline of %.0f s (%s level%s); possibly a stuck device"
                  % (spec.name, label, limit, self.plan.level, _params_words(spec.params)))
        if device is not None:
            if _answers(device, min(30.0, max(limit / 4, 2.0))):
                reason += "; the device still answers a small matmul, so the run goes on"
            else:
                self.stuck[label] = ("%s did not answer after %s outlived its deadline (possibly a stuck device)"
                                     % (label, spec.name))
                reason += "; it does not answer a small matmul either: its later tests are not run"
        sys.stderr.write("run.py: %s\n" % reason)
        return entry(spec.name, "fail", reason, STUCK_FIX, params=spec.params, duration_s=took, device=index)

    def _run_test(self, spec, device, per_device, emit):
        kind = self.plan.kind
        td = registry.lookup(kind, spec.name)
        if td is None:
            known = sorted(registry.SMOKE if kind == "smoke" else registry.BENCH)
            return entry(spec.name, "fail", "unknown test",
                         "use one of the %s tests: %s" % (kind, ", ".join(known)), params=spec.params)
        missing = missing_modules(list(td.requires) + [r for r in spec.requires if r not in td.requires])
        if missing:
            return _skip_missing(spec, missing)
        if td.needs_device and device is None:
            return entry(spec.name, "fail", "not run: " + self.no_gpu[0], self.no_gpu[1], params=spec.params)
        ctx = Context(spec.name, kind, self.plan.level, self.plan.vendor, device, spec.params, spec.criteria,
                      self.run_py, emit, per_device=per_device, devices=self.devices)
        at = ctx.device_index
        t0 = time.perf_counter()
        try:
            import torch
            with self._lock:
                torch.manual_seed(int(spec.params.get("seed", 0)))
            fn = getattr(importlib.import_module("rocmenv_smoke." + td.module), td.function)
            fn(ctx)
            result = entry_from_context(ctx, time.perf_counter() - t0)
        except Skip as s:
            result = entry(spec.name, "skip", "; ".join([s.reason] + ctx.notes), s.fix, ctx.metrics,
                           ctx.effective_params(), time.perf_counter() - t0, at, ctx.checked)
        except Failed as f:
            result = entry(spec.name, "fail", "; ".join([f.reason] + ctx.failures + ctx.notes),
                           f.fix or (" ".join(ctx.fixes) or None), ctx.metrics, ctx.effective_params(),
                           time.perf_counter() - t0, at, ctx.checked)
        except Exception as e:
            line = exception_line(e)
            sys.stderr.write("run.py: test %s on %s raised:\n%s" % (spec.name, ctx.where, traceback.format_exc()))
            if device is not None and td.needs_device:
                line = "%s (on %s)" % (line, ctx.where)
            result = entry(spec.name, "fail", "; ".join([line] + ctx.failures + ctx.notes),
                           fix_for_error(line) or (" ".join(ctx.fixes) or None) or CRASH_FIX, ctx.metrics,
                           ctx.effective_params(), time.perf_counter() - t0, at, ctx.checked)
        finally:
            if device is not None:
                try:
                    device.free_memory()
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
        if where() == "on this host":
            fix = "install PyTorch for this interpreter, or name one that has it with --python PATH"
        else:
            fix = "use an image with PyTorch (rocm/pytorch, an NGC pytorch image, or pip install torch)"
        for spec in self.plan.tests:
            self.emit(entry(spec.name, "fail", "torch cannot be imported %s: %s" % (where(), line), fix,
                            params=spec.params))
        import platform
        vers = dict.fromkeys(("python", "torch", "hip", "cuda", "miopen", "cudnn", "onnxruntime", "torchvision"))
        vers["python"] = platform.python_version()
        info = {"kind": "cpu", "name": None, "gfx": None, "compute_capability": None, "count": 0, "devices": []}
        env_vars = dict((k, os.environ.get(k)) for k in ENV_FALLBACK)
        return self.document(started, info, vers, env_vars)


# What to do about a test that outlived its deadline.
STUCK_FIX = ("check the kernel log (dmesg) for a GPU hang or reset; reset the GPU (rocm-smi --gpureset -d N / "
             "nvidia-smi -r -i N) or reboot the node; if the test is only slow here, raise every deadline with "
             "ROCMENV_DEADLINE_SCALE=2")
# What to do about a test that raised an error no known cause explains.
CRASH_FIX = "the suite's stderr above has the traceback; rerun this test alone with --only NAME to reproduce it"


def _params_words(params):
    """", size 256, iters 3": the parameters that set a test's work, for the deadline line."""
    keys = ("size", "size_mb", "total_mb", "iters", "checked", "seconds", "batch")
    words = ["%s %s" % (k, params[k]) for k in keys if k in params]
    return (", " + ", ".join(words)) if words else ""


def _answers(device, wait_s):
    """True when a small matmul on `device` finishes within wait_s seconds (after a test outlived its deadline)."""
    done = threading.Event()

    def probe():
        try:
            import torch
            x = torch.ones(64, 64, device=device.torch)
            torch.mm(x, x)
            device.sync()
            done.set()
        except Exception:
            pass

    t = threading.Thread(target=probe, name="probe-%s" % device_label(device))
    t.daemon = True
    t.start()
    return done.wait(wait_s)


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
    plan_path, out_path, device_indices = parsed
    try:
        plan = load_plan(plan_path)
    except PlanError as e:
        sys.stderr.write("run.py: invalid plan %s: %s\n" % (plan_path, e))
        return 2
    try:
        faults.active()
        deadlines.scale()
    except (faults.FaultError, deadlines.ScaleError) as e:
        sys.stderr.write("run.py: %s\n" % e)
        return 2
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        sys.stderr.write("run.py: --out %s: directory %s does not exist\n" % (out_path, out_dir))
        return 2
    runner = Runner(plan, run_py, device_indices=device_indices)
    try:
        doc = runner.run()
    except UsageError as e:
        sys.stderr.write("run.py: %s\n" % e)
        return 2
    write_atomic(out_path, doc)
    code = 1 if any(t["status"] == "fail" for t in doc["tests"]) else 0
    if any(t.is_alive() for t in runner.abandoned):
        # A test that outlived its deadline is still running in its thread (a stuck device): the document is
        # written; leave without waiting for it, or for torch's exit handlers on that device.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
