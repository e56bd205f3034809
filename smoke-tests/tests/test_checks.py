"""Each check fed a deliberately wrong result must fail, naming the device and the size of the difference; and the
FLOP and byte counts behind the figures. Everything here runs on the CPU (CI), none of it may skip."""
import os

import pytest
import torch

from conftest import plan
from rocmenv_smoke import faults, memory, models, numerics, onnxrt, perf, runner
from rocmenv_smoke.devices import Device
from rocmenv_smoke.result import Context, Failed, entry_from_context, metric

CPU = Device("cpu")


@pytest.fixture
def fault(monkeypatch):
    def _set(*names):
        monkeypatch.setenv(faults.VARIABLE, ",".join(names))
    monkeypatch.delenv(faults.VARIABLE, raising=False)
    return _set


# --- gemm: Freivalds over every row --------------------------------------------------------------------------

def test_gemm_clean_passes_every_row():
    _, check = perf.gemm_case(CPU, 512, torch.float32, 0, 1)
    assert check["ok"] and check["bad_rows"] == 0 and check["worst"] < 0.5 and check["products"] == 1


def test_every_product_is_checked_not_only_the_last(monkeypatch):
    # Issue 36: a matmul that corrupts one element of one product in four, into an output the next product
    # overwrites. Timed products (1 warm-up + 3) and the extra checked ones (up to 8) are each checked.
    real, calls = torch.mm, []

    def mm(a, b, out=None):
        r = real(a, b, out=out)
        calls.append(1)
        if len(calls) % 4 == 2:
            r[100, 3] += 1000.0
        return r

    monkeypatch.setattr(torch, "mm", mm)
    times, check = perf.gemm_case(CPU, 256, torch.float32, 1, 3, checked=8)
    assert len(calls) == 8 and len(times) == 3
    assert not check["ok"] and check["products"] == 8 and check["bad_products"] == 2
    assert check["reason"].startswith("2 of 8 products wrong; product 2: 1 of 65536 elements differ")


def test_a_product_that_writes_nothing_fails(monkeypatch):
    # The output is filled with NaN before each product: one that leaves it alone cannot pass on the last result.
    real, calls = torch.mm, []

    def mm(a, b, out=None):
        calls.append(1)
        return out if len(calls) == 3 else real(a, b, out=out)

    monkeypatch.setattr(torch, "mm", mm)
    _, check = perf.gemm_case(CPU, 128, torch.float32, 0, 4)
    assert not check["ok"] and check["reason"].startswith("1 of 4 products wrong; product 3: ")


def fp32_accumulating_mm(monkeypatch):
    """torch.mm as a GPU computes a bf16 product: fp32 accumulation, one rounding (the CPU torch may add in bf16)."""
    real = torch.mm

    def mm(a, b, out=None):
        if a.dtype != torch.bfloat16:
            return real(a, b, out=out)
        r = real(a.float(), b.float()).to(a.dtype)
        return out.copy_(r) if out is not None else r

    monkeypatch.setattr(torch, "mm", mm)


def test_one_wrong_element_far_from_the_first_rows_fails_gemm(fault, monkeypatch):
    fault("gemm-element")
    fp32_accumulating_mm(monkeypatch)
    for dtype in (torch.float32, torch.bfloat16):
        _, check = perf.gemm_case(CPU, 768, dtype, 0, 1)
        assert not check["ok"] and check["bad_rows"] == 1
        # Row 512 of 768: the old check (4 rows) could not see it. The worst element is the one named.
        assert check["reason"].startswith("1 of 1 products wrong; product 1: 1 of 589824 elements differ, "
                                          "worst [512, 17]: |out-ref| ")
        assert ", bound " in check["reason"] and "1 of 768 rows fail" in check["reason"]
        assert "max |out-ref|" not in check["reason"]  # the largest error is the worst element


def test_a_gemm_that_accumulates_in_bf16_is_judged_by_its_own_bound_and_nan_still_fails():
    gen = torch.Generator().manual_seed(5)
    n = 64
    a, b = torch.randn(n, n, generator=gen).bfloat16(), torch.randn(n, n, generator=gen).bfloat16()
    out = bf16_recursive_mm(a, b)
    gamma = numerics.dtype_accumulation_gamma("bf16", n)
    assert perf.freivalds(a, b, out, "bf16", gamma=gamma)["ok"]
    out[40, 3] = float("nan")
    check = perf.freivalds(a, b, out, "bf16", gamma=gamma)
    assert not check["ok"] and "worst [40, 3]: |out-ref| inf" in check["reason"]


def bf16_recursive_mm(a, b):
    """a @ b as torch 1.13's CPU reference gemm computes bf16: every product and partial sum rounded to bf16."""
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.bfloat16)
    for k in range(a.shape[1]):
        acc = (acc.float() + (a[:, k:k + 1].float() * b[k:k + 1, :].float()).bfloat16().float()).bfloat16()
    return acc


def test_freivalds_finds_a_small_error_in_a_late_row():
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(600, 600, generator=gen), torch.randn(600, 600, generator=gen)
    out = a @ b
    out[599, 599] += 0.05  # about 2e-3 of the element's scale: far above fp32 rounding
    check = perf.freivalds(a, b, out, "fp32")
    assert not check["ok"] and "worst [599, 599]: " in check["reason"]


def test_gemm_test_reason_names_test_device_and_difference(fault):
    fault("gemm-element")
    ctx = Context("gemm", "smoke", "quick", "cpu", CPU, {"size": 384, "dtypes": ["fp32"], "iters": 1})
    perf.test_gemm(ctx)
    e = entry_from_context(ctx, 0)
    assert e["status"] == "fail" and e["device"] is None
    # Quick checks 8 products although it times 1 (and warms up 1): the fault is in each.
    assert e["reason"].startswith("gemm fp32 on cpu: 8 of 8 products wrong; product 1: 1 of 147456 elements differ, "
                                  "worst [256, 17]: |out-ref| ")
    assert e["checked"] == {"products": 8, "bytes": 0} and "--duration" in e["fix"]


# --- copies, memory --------------------------------------------------------------------------------------------

def test_a_wrong_last_byte_of_a_copy_fails(fault):
    runs, copies = perf.copy_times(CPU, 3 << 20, 0, 1)
    assert runs["device_copy"][1] == 6 << 20 and copies == 1
    fault("copy-last-byte")
    with pytest.raises(Failed) as e:
        perf.copy_times(CPU, 3 << 20, 0, 1)
    assert e.value.reason.startswith("device copy on cpu: 1 of 1 copies wrong; copy 1: 1 of 3145728 bytes differ, "
                                     "first at offset 3145727 (0x")


def test_every_copy_is_checked_not_only_the_last(monkeypatch):
    # Issue 36: a copy that corrupts one byte in one copy of eight; the quick level checks at least 8 copies.
    real, calls = torch.Tensor.copy_, []

    def copy_(self, src, non_blocking=False):
        r = real(self, src, non_blocking)
        calls.append(1)
        if len(calls) % 8 == 3:
            self[5:6].add_(1)
        return r

    monkeypatch.setattr(torch.Tensor, "copy_", copy_)
    with pytest.raises(Failed) as e:
        perf.copy_times(CPU, 1 << 20, 1, 5, checked=8)
    assert e.value.reason.startswith("device copy on cpu: 1 of 8 copies wrong; copy 3: 1 of 1048576 bytes differ, "
                                     "first at offset 5 ")


def test_a_copy_that_writes_nothing_fails(monkeypatch):
    # Copies alternate between two sources that differ in every byte: a skipped copy leaves the wrong bytes.
    real, calls = torch.Tensor.copy_, []

    def copy_(self, src, non_blocking=False):
        calls.append(1)
        return self if len(calls) == 4 else real(self, src, non_blocking)

    monkeypatch.setattr(torch.Tensor, "copy_", copy_)
    with pytest.raises(Failed) as e:
        perf.copy_times(CPU, 1 << 20, 0, 6)
    assert "1 of 6 copies wrong; copy 4: 1048576 of 1048576 bytes differ" in e.value.reason


def test_byte_diff_counts_every_byte():
    a = torch.arange(1000).to(torch.uint8)
    b = a.clone()
    assert perf.byte_diff(b, a) is None
    b[10] += 1
    b[999] += 1
    assert perf.byte_diff(b, a) == "2 of 1000 bytes differ, first at offset 10 (0x0b, expected 0x0a)"


def test_one_wrong_byte_in_a_memory_block_fails(fault):
    fault("memory-block")
    ctx = Context("memory", "smoke", "quick", "cpu", CPU, {"block_mb": 1, "total_mb": 4, "roundtrip_mb": 1})
    memory.test_memory(ctx)
    e = entry_from_context(ctx, 0)
    assert e["status"] == "fail"
    assert "memory on cpu: block 2 of 4 (1 MiB each): 1 of 1048576 bytes differ, first at offset 1048575" \
        in e["reason"]
    assert memory.block_diff(torch.full((8,), 7, dtype=torch.uint8), 7) is None


# --- training --------------------------------------------------------------------------------------------------

def test_a_nan_at_a_late_training_step_fails():
    losses = [1.0 - 0.01 * i for i in range(20)]
    assert numerics.check_losses(losses, 0.9, "training", "GPU 3") == []
    losses[16] = float("nan")  # the last loss is still finite, as after a GradScaler-skipped step
    reasons = numerics.check_losses(losses, 0.9, "training", "GPU 3")
    assert reasons == ["training on GPU 3: the loss at step 17 of 20 is nan (1 non-finite step)"]


def test_a_loss_that_does_not_fall_fails():
    reasons = numerics.check_losses([1.0, 1.2, 1.1, 1.05], 0.9, "training", "cpu")
    assert reasons and "did not fall" not in reasons[0] and "ratio 1.05" in reasons[0]


def test_numerics_training_with_a_late_nan_fails(run, fault):
    r = run(plan([{"name": "numerics", "params": {"dtypes": ["fp32"], "train_steps": 20}}]),
            env={faults.VARIABLE: "train-nan"})
    assert r.rc == 1
    assert "training on cpu: the loss at step 17 of 20 is nan" in r.test("numerics")["reason"]


class _Scaler(object):
    def __init__(self, scale):
        self.scale = scale

    def get_scale(self):
        return self.scale


def test_models_training_checks_every_step_and_the_loss_scale(fault):
    good = [torch.tensor(v) for v in (5.0, 4.0, 3.0, 2.0, 1.0, 0.5)]
    assert models.check_training(good, _Scaler(65536.0), "resnet50 train amp", "GPU 0") == []
    collapsed = models.check_training(good, _Scaler(2.0 ** -4), "resnet50 train amp", "GPU 0")
    assert collapsed == ["resnet50 train amp on GPU 0: the AMP loss scale collapsed to 0.0625 (overflowing fp16 "
                         "gradients at most steps)"]
    rising = [torch.tensor(v) for v in (1.0, 2.0, 3.0, 4.0, 5.0)]
    assert "the loss went from 1 to 5" in models.check_training(rising, None, "vit_b_16 train fp32", "cpu")[0]
    fault("train-nan")
    assert "the loss at step 5 of 6 is nan" in models.check_training(good, None, "resnet50 train fp32", "cpu")[0]


def test_resnet50_int8_is_not_reported_as_int8(run):
    r = run(plan([{"name": "resnet50", "params": {"precision": "int8", "mode": "infer", "iters": 1}}],
                 kind="bench"))
    e = r.test("resnet50")
    assert e["status"] == "skip" and "convolutions would run in fp32" in e["reason"] and e["metrics"] == []


def test_resnet50_trains_at_batch_1_on_the_cpu(run):
    r = run(plan([{"name": "resnet50", "params": {"batch": 1, "image_size": 32, "warmup": 1, "iters": 2}}],
                 kind="bench"))
    e = r.test("resnet50")
    assert r.rc == 0 and e["status"] == "pass", e["reason"]
    assert "image_size 32 raised to 64" in e["reason"]


# --- onnx ------------------------------------------------------------------------------------------------------

def test_a_cpu_only_onnx_session_on_a_gpu_vendor_fails(fault):
    class Ort(object):
        @staticmethod
        def get_available_providers():
            return ["ROCMExecutionProvider", "CPUExecutionProvider"]

    assert onnxrt.available_providers(Ort) == ["ROCMExecutionProvider", "CPUExecutionProvider"]
    fault("onnx-cpu-only")
    available = onnxrt.available_providers(Ort)
    assert available == ["CPUExecutionProvider"]
    reason, fix = onnxrt.judge_providers("amd", ["CPUExecutionProvider"], available, "GPU 1")
    assert reason.startswith("onnx on GPU 1: no GPU execution provider ran (ran: CPUExecutionProvider")
    assert "onnxruntime-rocm" in fix
    assert onnxrt.judge_providers("nvidia", [], available, "GPU 0") is not None
    assert onnxrt.judge_providers("amd", ["MIGraphXExecutionProvider", "CPUExecutionProvider"], available,
                                  "GPU 0") is None
    assert onnxrt.judge_providers("cpu", ["CPUExecutionProvider"], available, "cpu") is None


def test_onnx_needs_torchvision():
    from rocmenv_smoke import registry
    assert "torchvision" in registry.SMOKE["onnx"].requires and "torchvision" in registry.BENCH["onnx"].requires


# --- the hook itself, devices, metrics -------------------------------------------------------------------------

def test_unknown_fault_is_a_usage_error(run):
    r = run(plan([{"name": "gemm"}]), env={faults.VARIABLE: "gemm-element,nonsense"})
    assert r.rc == 2 and r.doc is None
    assert r.stderr.strip() == ("run.py: ROCMENV_SMOKE_FAULTS: unknown fault nonsense (known: copy-last-byte, "
                                "d2h-byte, gemm-element, h2d-byte, memory-block, onnx-cpu-only, train-nan)")
    assert faults.active({}) == set()


def test_devices_argument():
    assert runner.parse_args(["--plan", "p", "--out", "o", "--devices", "0,2"]) == ("p", "o", [0, 2])
    assert runner.parse_args(["--plan", "p", "--out", "o"]) == ("p", "o", None)
    for bad in ("0,0", "a", "", "1,-1"):
        with pytest.raises(runner.UsageError):
            runner.parse_args(["--plan", "p", "--out", "o", "--devices=" + bad])


def test_times_are_lower_is_better():
    assert metric("p99_ms", 3.0, "ms") == {"name": "p99_ms", "value": 3.0, "unit": "ms", "better": "lower"}
    assert metric("throughput", 3.0, "images/s") == {"name": "throughput", "value": 3.0, "unit": "images/s"}
    assert metric("err", 0.1, "ratio", "lower")["better"] == "lower"
    with pytest.raises(ValueError):
        metric("x", 1, "x", "sideways")


# --- FLOP and byte counts --------------------------------------------------------------------------------------

def test_flop_counts():
    # n x n x n: n^2 outputs, n multiplies and n adds each.
    assert perf.tflops(1000, 1.0) == pytest.approx(2e9 / 1e12)
    assert perf.tflops(8192, 2 * 8192 ** 3 / 1e12) == pytest.approx(1.0)


def test_byte_counts():
    runs, _ = perf.copy_times(CPU, 2 << 20, 0, 2)
    times, moved = runs["device_copy"]
    assert moved == 2 * (2 << 20) and len(times) == 2  # read + write
    assert set(runs) == {"device_copy"}  # no h2d/d2h on the CPU


# --- every selected GPU: one entry each, concurrently for "each" tests -----------------------------------------

def test_a_per_gpu_test_yields_one_entry_per_selected_gpu_from_threads(monkeypatch):
    import contextlib
    import threading

    from rocmenv_smoke import devices, registry, stats
    from rocmenv_smoke.plan import parse_plan

    seen = []

    def fake(ctx):
        seen.append((ctx.device.index, threading.current_thread().name))
        ctx.metric("index", ctx.device.index, "devices")
        if ctx.device.index == 2:
            ctx.fail("fake on %s: 1 of 4 elements differ" % ctx.where)

    monkeypatch.setattr(stats, "fake_gpu_test", fake, raising=False)
    monkeypatch.setattr(registry, "lookup",
                        lambda kind, name: registry.TestDef("stats", "fake_gpu_test", (), True, "each"))
    monkeypatch.setattr(torch.cuda, "device", lambda i: contextlib.nullcontext())
    p = parse_plan('{"schema_version": 1, "kind": "smoke", "level": "quick", "vendor": "nvidia", '
                   '"tests": [{"name": "gemm"}]}')
    r = runner.Runner(p, "run.py", stdout=open(os.devnull, "w"))
    r.devices = [devices.Device("cuda", 0), devices.Device("cuda", 2)]
    entries = r.run_one(p.tests[0])
    assert [(e["name"], e["device"], e["status"]) for e in entries] == [("gemm", 0, "pass"), ("gemm", 2, "fail")]
    assert entries[1]["reason"] == "fake on torch device 2: 1 of 4 elements differ"
    assert sorted(i for i, _ in seen) == [0, 2] and all(name.startswith("gemm-gpu") for _, name in seen)


# --- deadlines: a test that never returns fails as a possibly stuck device, and the run goes on ------------------

def _hanging_runner(monkeypatch, answers):
    import threading

    from rocmenv_smoke import deadlines, registry, runner as runner_mod, stats
    from rocmenv_smoke.plan import parse_plan

    forever = threading.Event()

    def hangs(ctx):
        forever.wait()

    def quick(ctx):
        ctx.metric("x", 1, "x")

    monkeypatch.setattr(stats, "fake_hangs", hangs, raising=False)
    monkeypatch.setattr(stats, "fake_quick", quick, raising=False)
    monkeypatch.setattr(registry, "lookup", lambda kind, name: registry.TestDef(
        "stats", "fake_hangs" if name == "gemm" else "fake_quick", (), True, "each"))
    monkeypatch.setattr(deadlines, "deadline_s", lambda name, params, level, is_gpu: 0.5)
    monkeypatch.setattr(runner_mod, "_answers", lambda device, wait_s: answers)
    p = parse_plan('{"schema_version": 1, "kind": "smoke", "level": "quick", "vendor": "cpu", '
                   '"tests": [{"name": "gemm", "params": {"size": 256}}, {"name": "bandwidth"}]}')
    r = runner.Runner(p, "run.py", stdout=open(os.devnull, "w"))
    r.devices = [CPU]
    return r, p, forever


def test_a_test_past_its_deadline_fails_and_the_run_goes_on(monkeypatch):
    r, p, forever = _hanging_runner(monkeypatch, True)
    try:
        (g,), (b,) = r.run_one(p.tests[0]), r.run_one(p.tests[1])
    finally:
        forever.set()
    assert g["status"] == "fail" and g["fix"].startswith("check the kernel log (dmesg)")
    assert g["reason"].startswith("gemm on cpu: still running after its deadline of 0 s (quick level, size 256); "
                                  "possibly a stuck device; the device still answers")
    assert b["status"] == "pass" and len(r.abandoned) == 1


def test_a_device_that_does_not_recover_runs_no_more_tests(monkeypatch):
    r, p, forever = _hanging_runner(monkeypatch, False)
    try:
        (g,), (b,) = r.run_one(p.tests[0]), r.run_one(p.tests[1])
    finally:
        forever.set()
    assert g["status"] == "fail" and "does not answer a small matmul either" in g["reason"]
    assert b["status"] == "fail"
    assert b["reason"] == "not run: cpu did not answer after gemm outlived its deadline (possibly a stuck device)"


def test_deadlines_follow_level_and_params(monkeypatch):
    from rocmenv_smoke import deadlines
    monkeypatch.delenv(deadlines.SCALE_VARIABLE, raising=False)
    quick = deadlines.deadline_s("gemm", {"size": 256, "dtypes": ["fp32"], "warmup": 1, "iters": 3}, "quick", False)
    big = deadlines.deadline_s("gemm", {"size": 4096, "dtypes": ["fp32"], "warmup": 1, "iters": 3}, "quick", False)
    standard = deadlines.deadline_s("gemm", {"size": 256, "dtypes": ["fp32"]}, "standard", False)
    assert 30 < quick < 40 and big > quick + 1000 and standard > quick
    assert deadlines.deadline_s("models", {}, "standard", True) == 2400
    monkeypatch.setenv(deadlines.SCALE_VARIABLE, "0.5")
    assert deadlines.deadline_s("models", {}, "standard", True) == 1200
    for bad in ("0", "-1", "x", "nan"):
        monkeypatch.setenv(deadlines.SCALE_VARIABLE, bad)
        with pytest.raises(deadlines.ScaleError):
            deadlines.scale()
