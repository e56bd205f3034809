"""Pure logic: tolerances, gfx targets and wheel arch lists, the no-GPU diagnosis, profiler classes, plans."""
import json
import os
import types

import pytest
import torch
import torch.nn.functional as F

from rocmenv_smoke import devices, env, numerics, profiling
from rocmenv_smoke.plan import PlanError, parse_plan
from rocmenv_smoke.result import Context, entry_from_context, exception_line, fix_for_error, write_atomic


# --- tolerances -------------------------------------------------------------------------------------------

def test_rel_error_is_relative_to_the_output_scale():
    ref = torch.tensor([100.0, 0.0, -50.0])
    out = torch.tensor([100.0, 1.0, -50.0])
    assert numerics.rel_error(out, ref) == pytest.approx(0.01)
    assert numerics.rel_error(ref, ref) == 0.0
    # A zero reference falls back to the absolute error.
    assert numerics.rel_error(torch.tensor([0.5]), torch.tensor([0.0])) == pytest.approx(0.5)


def test_rtol_from_epsilon_and_reduction_length():
    # rtol = 4 eps(dtype) + 16 eps(fp32) sqrt(K)
    assert numerics.rtol_for("fp32", 64) == pytest.approx(4 * 2.0 ** -23 + 16 * 2.0 ** -23 * 8)
    assert numerics.rtol_for("fp16", 1) == pytest.approx(4 * 2.0 ** -10 + 16 * 2.0 ** -23)
    assert numerics.rtol_for("bf16", 256) == pytest.approx(4 * 2.0 ** -7 + 16 * 2.0 ** -23 * 16)
    # An fp32 matmul that runs as TF32 is judged with TF32's epsilon.
    assert numerics.rtol_for("fp32", 64, tf32=True) == pytest.approx(4 * 2.0 ** -10 + 16 * 2.0 ** -23 * 8)
    assert numerics.rtol_for("fp16", 1, {"eps_multiple": 1}) == pytest.approx(2.0 ** -10 + 16 * 2.0 ** -23)


def test_compare_is_element_wise_and_names_the_element():
    ref = torch.ones(4, 8, dtype=torch.float64)
    out = ref.clone()
    out[3, 5] = 1.5
    c = numerics.compare(out, ref, 1e-3)
    assert (c["bad"], c["total"], c["at"]) == (1, 32, "[3, 5]")
    assert numerics.describe(c) == "1 of 32 elements differ, worst [3, 5]: |out-ref| 0.5, bound 0.002 (250x)"
    out[0, 0] = float("nan")
    assert numerics.compare(out, ref, 1e-3)["bad"] == 2
    assert numerics.compare(ref, ref, 1e-3)["bad"] == 0


def test_bf16_error_would_fail_the_fp32_tolerance():
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 64, generator=gen), torch.randn(64, 64, generator=gen)
    ref = a.double() @ b.double()
    # bf16 as a GPU computes it: fp32 accumulation, one rounding (this host's CPU torch may add in bf16).
    bf = (a.bfloat16().float() @ b.bfloat16().float()).bfloat16().float()
    assert numerics.compare(bf, ref, numerics.rtol_for("fp32", 64))["bad"] > 0
    ref16 = a.bfloat16().double() @ b.bfloat16().double()
    assert numerics.compare(bf, ref16, numerics.rtol_for("bf16", 64))["bad"] == 0


def test_describe_names_the_worst_element_over_its_own_bound_and_the_largest_error_apart():
    # A large element with a large bound and a small one with a small bound: the small one is over its bound.
    ref = torch.ones(4, 8, dtype=torch.float64)
    ref[0, 0] = 100.0
    out = ref.clone()
    out[0, 0] += 0.5   # within 1e-2 * (rms + 100)
    out[2, 1] += 0.3   # over 1e-2 * (rms + 1)
    c = numerics.compare(out, ref, 1e-2)
    assert (c["bad"], c["worst_at"], c["at"]) == (1, "[2, 1]", "[0, 0]")
    text = numerics.describe(c)
    assert text.startswith("1 of 32 elements differ, worst [2, 1]: |out-ref| 0.3, bound %.2g (" % c["worst_bound"])
    assert text.endswith("; max |out-ref| 0.5 at [0, 0] (bound %.2g)" % c["bound_at"])
    assert c["worst_abs"] > c["worst_bound"] and c["max_abs"] <= c["bound_at"]


def bf16_recursive_mm(a, b):
    """a @ b as torch 1.13's CPU reference gemm computes bf16: every product and partial sum rounded to bf16
    (float64 inputs, as the reference: exact)."""
    if a.dtype == torch.float64:
        return a @ b
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.bfloat16)
    for k in range(a.shape[1]):
        acc = (acc.float() + (a[:, k:k + 1].float() * b[k:k + 1, :].float()).bfloat16().float()).bfloat16()
    return acc


def bf16_four_lane_mm(a, b):
    """The same with four partial sums (as a vectorised kernel keeps them), added at the end."""
    if a.dtype == torch.float64:
        return a @ b
    lanes = [bf16_recursive_mm(a[:, i::4], b[i::4, :]) for i in range(4)]
    return ((lanes[0].float() + lanes[1].float()).bfloat16().float()
            + (lanes[2].float() + lanes[3].float()).bfloat16().float()).bfloat16()


def test_dtype_accumulation_gamma_is_the_rounding_bound_of_a_dot_product():
    u = 2.0 ** -8 + 2.0 ** -23
    assert numerics.unit_roundoff("bf16") == u
    assert numerics.dtype_accumulation_gamma("bf16", 64) == pytest.approx((1 + u) ** 64 - 1)
    assert 0.28 < numerics.dtype_accumulation_gamma("bf16", 64) < 0.29
    assert numerics.dtype_accumulation_gamma("fp16", 256) == pytest.approx((1 + 2.0 ** -11 + 2.0 ** -23) ** 256 - 1)
    # From K = 178 on, bf16's bound is 1 or more: it admits any sign.
    assert numerics.dtype_accumulation_gamma("bf16", 177) < 1 <= numerics.dtype_accumulation_gamma("bf16", 178)


def test_a_bf16_accumulating_matmul_passes_its_own_bound_and_a_wrong_element_still_fails():
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(64, 64, generator=gen), torch.randn(64, 64, generator=gen)]
    fn = lambda a, b: a @ b  # noqa: E731
    a, b = [t.bfloat16() for t in inputs]
    ref = a.double() @ b.double()
    rtol = numerics.rtol_for("bf16", 64)
    gamma, floor = numerics.dtype_accumulation_bound(fn, inputs, "bf16", 64)
    # The recursive sum (torch 1.13's order) is over the fp32-accumulation bound; four partial sums are not, here.
    assert numerics.compare(bf16_recursive_mm(a, b), ref, rtol)["bad"] > 0
    for out in (bf16_recursive_mm(a, b), bf16_four_lane_mm(a, b)):
        c = numerics.compare(out, ref, rtol, floor)
        assert c["bad"] == 0 and c["worst"] < 0.2                   # well inside its own
        wrong = out.clone()
        wrong[50, 7] = float(wrong[50, 7]) + 32.0 * float(ref.pow(2).mean().sqrt())
        c = numerics.compare(wrong, ref, rtol, floor)
        assert c["bad"] == 1 and c["worst_at"] == "[50, 7]"
        wrong[50, 7] = float("nan")
        assert numerics.compare(wrong, ref, rtol, floor)["bad"] == 1


def test_the_probe_finds_a_sum_kept_in_the_dtype_in_any_order_and_never_runs_on_a_gpu():
    cpu = devices.Device("cpu")
    shapes = [torch.empty(64, 64), torch.empty(64, 64)]
    reversed_mm = lambda a, b: bf16_recursive_mm(a.flip(1), b.flip(0))  # noqa: E731 (the sum in reverse order)
    for fn in (bf16_recursive_mm, bf16_four_lane_mm, reversed_mm):
        found = numerics.dtype_accumulation(cpu, fn, "matmul", shapes, "bf16")
        assert found is not None and found["got"] != found["want"]
    found = numerics.dtype_accumulation(cpu, bf16_recursive_mm, "matmul", shapes, "bf16")
    assert (found["want"], found["got"], found["at"]) == (1.125, 1.0, "[0, 0]")  # 1 + 63 * 2^-9, then rounded
    fp32_acc = lambda a, b: (a.float() @ b.float()).to(a.dtype)  # noqa: E731
    assert numerics.dtype_accumulation(cpu, fp32_acc, "matmul", shapes, "bf16") is None
    assert numerics.dtype_accumulation(cpu, fp32_acc, "matmul", shapes, "fp16") is None

    def never(*_):
        raise AssertionError("a GPU is never probed")

    assert numerics.dtype_accumulation(devices.Device("cuda", 0), never, "matmul", shapes, "bf16") is None
    assert numerics.dtype_accumulation(cpu, never, "matmul", shapes, "fp32") is None
    assert numerics.dtype_accumulation(cpu, never, "softmax", shapes, "bf16") is None  # no probe: not a gemm


def test_the_conv2d_probe_finds_a_sum_kept_in_bf16():
    x, w = torch.empty(2, 8, 16, 16), torch.empty(8, 8, 3, 3)
    cpu = devices.Device("cpu")

    def im2col_bf16(x, w):  # the CPU's slow_conv2d: im2col, then the gemm that adds in bf16
        if x.dtype == torch.float64:
            return F.conv2d(x, w, padding=1)
        cols = F.unfold(x.float(), 3, padding=1).bfloat16()
        return torch.stack([bf16_recursive_mm(w.reshape(w.shape[0], -1), c) for c in cols]).reshape(
            x.shape[0], w.shape[0], x.shape[2], x.shape[3])

    assert numerics.dtype_accumulation(cpu, im2col_bf16, "conv2d", [x, w], "bf16") is not None
    fp32_conv = lambda x, w: F.conv2d(x.float(), w.float(), padding=1).to(x.dtype)  # noqa: E731
    assert numerics.dtype_accumulation(cpu, fp32_conv, "conv2d", [x, w], "bf16") is None


def test_an_fp16_accumulating_matmul_fails_where_fp32_accumulation_passes():
    gen = torch.Generator().manual_seed(1)
    n = 256
    a, b = torch.randn(n, n, generator=gen).half(), torch.randn(n, n, generator=gen).half()
    ref = a.double() @ b.double()
    acc = torch.zeros(n, n, dtype=torch.float16)
    for k in range(n):  # every partial sum rounded to fp16
        acc = acc + (a[:, k:k + 1].float() * b[k:k + 1, :].float()).half()
    rtol = numerics.rtol_for("fp16", n)
    assert numerics.compare(acc, ref, rtol)["bad"] > 0
    assert numerics.compare((a.float() @ b.float()).half(), ref, rtol)["bad"] == 0


def test_training_losses_fall():
    losses = numerics.train_losses(devices.Device("cpu"), steps=20, seed=0, lr=0.05)
    assert len(losses) == 20
    assert losses[-1] < 0.9 * losses[0]


# --- gfx targets and arch lists ---------------------------------------------------------------------------

def test_gfx_names():
    assert devices.base_gfx("gfx90a:sramecc+:xnack-") == "gfx90a"
    assert devices.base_gfx("gfx1100") == "gfx1100"
    assert devices.gfx_from_version("10.3.0") == "gfx1030"
    assert devices.gfx_from_version("11.0.0") == "gfx1100"
    assert devices.gfx_from_version("9.0.10") == "gfx90a"
    assert devices.gfx_from_version("9.4.2") == "gfx942"
    assert devices.gfx_from_target_version(90010) == "gfx90a"
    assert devices.gfx_from_target_version(110001) == "gfx1101"
    for bad in ("10.3", "gfx1030", "", "9.0.16"):
        with pytest.raises(ValueError):
            devices.gfx_from_version(bad)


def test_kfd_topology(tmp_path):
    for node, version in (("0", "0"), ("1", "110000"), ("2", "110000")):
        d = tmp_path / "sys/class/kfd/kfd/topology/nodes" / node
        d.mkdir(parents=True)
        (d / "properties").write_text("cpu_cores_count 0\ngfx_target_version %s\nvendor_id 4098\n" % version)
    assert devices.kfd_gfx_targets(str(tmp_path)) == ["gfx1100", "gfx1100"]
    assert devices.kfd_gfx_targets(str(tmp_path / "nothing")) == []


def test_device_target_prefers_the_override():
    assert env.device_target("amd", "gfx1031", None, None) == "gfx1031"
    assert env.device_target("amd", "gfx1031", None, "10.3.0") == "gfx1030"
    assert env.device_target("amd", "gfx90a:sramecc+:xnack-", None, None) == "gfx90a"
    assert env.device_target("nvidia", None, "9.0", None) == "sm_90"
    assert env.device_target("nvidia", None, "12.0", None) == "sm_120"


def test_arch_fits():
    rocm = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
    assert env.arch_fits("gfx90a", rocm) == (True, None)
    assert env.arch_fits("gfx1031", rocm)[0] is False  # ISA-exact on AMD: needs the override
    assert env.arch_fits("gfx1030", rocm)[0] is True
    cuda = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert env.arch_fits("sm_90", cuda) == (True, None)
    fits, note = env.arch_fits("sm_89", cuda)
    assert fits and "sm_86" in note  # same major: the sm_86 cubin runs
    assert env.arch_fits("sm_120", cuda)[0] is False  # Blackwell on a wheel without it
    fits, note = env.arch_fits("sm_120", cuda + ["compute_90"])
    assert fits and "PTX" in note
    assert env.arch_fits("sm_80", ["sm_86"])[0] is False  # a newer minor's cubin does not run on an older GPU


# --- no-cpu-fallback's diagnosis --------------------------------------------------------------------------

def facts(**kw):
    base = {"available": False, "hip": "6.2.41133", "cuda": None, "torch": "2.5.1+rocm6.2",
            "env": {"HIP_VISIBLE_DEVICES": None, "ROCR_VISIBLE_DEVICES": None, "CUDA_VISIBLE_DEVICES": None,
                    "NVIDIA_VISIBLE_DEVICES": None},
            "kfd": {"exists": True, "rw": True}, "dri_render": [{"name": "renderD128", "exists": True, "rw": True}],
            "nvidiactl": {"exists": False, "rw": False}, "nvidia": []}
    base.update(kw)
    return base


def test_diagnose_ok():
    assert env.diagnose("amd", facts(available=True)) == (True, None, None)


def test_diagnose_cpu_wheel():
    ok, reason, fix = env.diagnose("amd", facts(hip=None, torch="2.5.1+cpu"))
    assert not ok and "CPU-only build" in reason and "ROCm build" in fix


def test_diagnose_cuda_wheel_on_amd():
    ok, reason, fix = env.diagnose("amd", facts(hip=None, cuda="12.4", available=True))
    assert not ok and "CUDA build" in reason and "ROCm" in fix


def test_diagnose_missing_kfd():
    ok, reason, fix = env.diagnose("amd", facts(kfd={"exists": False, "rw": False}, dri_render=[]))
    assert not ok and "/dev/kfd is missing" in reason and "--device /dev/kfd" in fix


def test_diagnose_groups():
    ok, reason, fix = env.diagnose("amd", facts(kfd={"exists": True, "rw": False},
                                                dri_render=[{"name": "renderD128", "exists": True, "rw": False}]))
    assert not ok and "not readable" in reason and "--group-add" in fix


def test_diagnose_visible_devices_hiding_everything():
    e = dict(facts()["env"], HIP_VISIBLE_DEVICES="")
    ok, reason, fix = env.diagnose("amd", facts(env=e))
    assert not ok and "HIP_VISIBLE_DEVICES=''" in reason and "unset HIP_VISIBLE_DEVICES" in fix
    e = dict(facts()["env"], CUDA_VISIBLE_DEVICES="-1")
    ok, reason, _ = env.diagnose("nvidia", facts(hip=None, cuda="12.4", env=e, nvidiactl={"exists": True, "rw": True},
                                                 nvidia=["nvidia0"]))
    assert not ok and "CUDA_VISIBLE_DEVICES='-1'" in reason


def test_diagnose_nvidia_without_gpus_flag():
    ok, reason, fix = env.diagnose("nvidia", facts(hip=None, cuda="12.4"))
    assert not ok and "/dev/nvidiactl" in reason and "--gpus all" in fix


def test_diagnose_unknown_cause_points_at_doctor():
    ok, reason, fix = env.diagnose("amd", facts())
    assert not ok and "rocmenv doctor" in fix


def test_gpu_facts_reads_a_tree(tmp_path):
    (tmp_path / "dev/dri").mkdir(parents=True)
    (tmp_path / "dev/kfd").write_text("")
    (tmp_path / "dev/dri/renderD128").write_text("")
    f = env.gpu_facts(environ={"HIP_VISIBLE_DEVICES": "0"}, root=str(tmp_path))
    assert f["kfd"]["exists"] and [d["name"] for d in f["dri_render"]] == ["renderD128"]
    assert f["env"]["HIP_VISIBLE_DEVICES"] == "0" and not f["nvidia"]


# --- profiler classes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,cls", [
    ("aten::mkldnn_convolution", "convolution"),
    ("aten::convolution_backward", "convolution"),
    ("aten::miopen_convolution", "convolution"),
    ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", "convolution"),
    ("igemm_fwd_gtcx3_nhwc_fp16_bx0_ex1", "convolution"),
    ("aten::addmm", "matmul"),
    ("aten::mm", "matmul"),
    ("Cijk_Ailk_Bljk_SB_MT128x128x16_MI32x32x2x1", "matmul"),
    ("ampere_sgemm_128x64_tn", "matmul"),
    ("Memcpy HtoD (Pageable -> Device)", "memory_copy"),
    ("aten::copy_", "memory_copy"),
    ("cudaDeviceSynchronize", "synchronisation"),
    ("hipStreamSynchronize", "synchronisation"),
    ("aten::relu_", "other"),
    ("aten::native_batch_norm", "other"),
    ("aten::sum", "other"),
])
def test_classify(name, cls):
    assert profiling.classify(name) == cls


def test_class_times_on_gpu_count_device_events_and_host_sync():
    def evt(name, device, cpu=0.0, dev=0.0):
        return types.SimpleNamespace(name=name, device_type="DeviceType." + device, self_cpu_time_total=cpu,
                                     self_cuda_time_total=dev)

    events = [evt("aten::conv2d", "CPU", cpu=50, dev=400),  # the launching op: not counted twice
              evt("implicit_gemm_kernel", "CUDA", dev=400),
              evt("Cijk_Ailk_Bljk", "CUDA", dev=300),
              evt("Memcpy DtoD", "CUDA", dev=100),
              evt("cudaDeviceSynchronize", "CPU", cpu=100),
              evt("elementwise_kernel", "CUDA", dev=100)]
    pct = profiling.shares(profiling.class_times(events, on_gpu=True))
    assert pct == {"convolution": 40.0, "matmul": 30.0, "memory_copy": 10.0, "synchronisation": 10.0, "other": 10.0}
    assert sum(pct.values()) == pytest.approx(100.0)


# --- result and plan --------------------------------------------------------------------------------------

def test_context_records_defaults_and_unused_params():
    ctx = Context("gemm", "smoke", "quick", "cpu", None, params={"size": 64, "sise": 1})
    assert ctx.param("size", 256) == 64
    assert ctx.param("iters", 3) == 3
    ctx.metric("gemm_fp32_tflops", 0.12345678, "TFLOP/s")
    e = entry_from_context(ctx, 1.23456)
    assert e["status"] == "pass" and e["duration_s"] == 1.235
    assert e["params"] == {"size": 64, "sise": 1, "iters": 3}
    assert e["metrics"] == [{"name": "gemm_fp32_tflops", "value": 0.123457, "unit": "TFLOP/s"}]
    assert "params not used by this test: sise" in e["reason"]


def test_soft_failure_makes_a_fail():
    ctx = Context("numerics", "smoke", "quick", "cpu", None)
    ctx.note("a note")
    ctx.fail("matmul fp16: too far", "do this")
    e = entry_from_context(ctx, 0)
    assert (e["status"], e["reason"], e["fix"]) == ("fail", "matmul fp16: too far; a note", "do this")


def test_exception_line_and_fix():
    try:
        raise RuntimeError("HIP error: invalid device function\nHIP kernel errors might be asynchronously reported")
    except RuntimeError as e:
        line = exception_line(e)
    assert line == "RuntimeError: HIP error: invalid device function"
    assert "HSA_OVERRIDE_GFX_VERSION" in fix_for_error(line)
    assert fix_for_error("ValueError: nothing known") is None


def test_write_atomic_replaces_and_leaves_no_tmp(tmp_path):
    path = str(tmp_path / "result.json")
    with open(path, "w") as f:
        f.write("old")
    write_atomic(path, {"a": 1})
    assert json.load(open(path)) == {"a": 1}
    assert os.listdir(str(tmp_path)) == ["result.json"]
    # A document JSON cannot hold (NaN) fails before anything replaces the old file, and no .tmp stays.
    with pytest.raises(ValueError):
        write_atomic(path, {"a": float("nan")})
    assert json.load(open(path)) == {"a": 1}
    assert os.listdir(str(tmp_path)) == ["result.json"]


def good_plan(**kw):
    p = {"schema_version": 1, "kind": "smoke", "level": "quick", "vendor": "cpu",
         "tests": [{"name": "gemm", "params": {"size": 64}, "criteria": {}, "requires": []}]}
    p.update(kw)
    return p


def test_parse_plan():
    p = parse_plan(json.dumps(good_plan()))
    assert (p.kind, p.level, p.vendor) == ("smoke", "quick", "cpu")
    assert [(t.name, t.params) for t in p.tests] == [("gemm", {"size": 64})]


@pytest.mark.parametrize("text,message", [
    ("{", "not JSON"),
    ("[]", "must be a JSON object"),
    (json.dumps(good_plan(schema_version=2)), "schema_version must be 1"),
    (json.dumps(good_plan(kind="stress")), "kind must be one of"),
    (json.dumps(good_plan(level="extreme")), "level must be one of"),
    (json.dumps(good_plan(vendor="intel")), "vendor must be one of"),
    (json.dumps(good_plan(tests=[])), "tests must be a non-empty list"),
    (json.dumps(good_plan(extra=1)), "unknown key 'extra'"),
    (json.dumps(good_plan(tests=[{"params": {}}])), "tests[0].name"),
    (json.dumps(good_plan(tests=[{"name": "gemm", "params": []}])), "tests[0].params must be an object"),
    (json.dumps(good_plan(tests=[{"name": "gemm", "requires": "onnx"}])), "tests[0].requires"),
    (json.dumps(good_plan(tests=[{"name": "gemm"}, {"name": "gemm"}])), "listed twice"),
    (json.dumps(good_plan(tests=[{"name": "gemm", "timeout": 5}])), "tests[0]: unknown key 'timeout'"),
])
def test_parse_plan_errors(text, message):
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_missing_module_is_named_on_this_host_or_in_this_image(monkeypatch):
    # Issue 25: `smoke --host` said "in this image" about the host's own interpreter.
    from rocmenv_smoke import runner

    spec = types.SimpleNamespace(name="onnx", params={})
    monkeypatch.setenv("ROCMENV_SMOKE_WHERE", "host")
    e = runner._skip_missing(spec, ["onnxruntime"])
    assert e["status"] == "skip"
    assert e["reason"] == "onnxruntime is not installed on this host", e
    monkeypatch.delenv("ROCMENV_SMOKE_WHERE")
    assert runner._skip_missing(spec, ["onnxruntime"])["reason"] == "onnxruntime is not installed in this image"
