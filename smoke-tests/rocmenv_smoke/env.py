"""environment, no-cpu-fallback, arch-fit: is this torch able to use this GPU at all."""
import os
import re

import torch

from . import devices
from .result import Failed, Skip

HIDE_VALUES = ("", "-1", "none", "void", "nodevfiles")


def test_environment(ctx):
    """Reads versions, devices and variables; passes when it could."""
    vers = devices.versions()
    info = devices.device_info(ctx.vendor)
    ctx.metric("gpu_count", info["count"] if info["kind"] != "cpu" else 0, "devices")
    ctx.metric("cpu_threads", torch.get_num_threads(), "threads")
    for d in info["devices"]:
        ctx.metric("device%d_total_memory_bytes" % d["index"], d["total_memory_bytes"], "bytes")
    build = devices.build_kind()
    what = {"rocm": "ROCm/HIP %s" % vers["hip"], "cuda": "CUDA %s" % vers["cuda"], "cpu": "CPU-only"}[build]
    ctx.note("torch %s (%s build) on %s" % (vers["torch"], what, info["name"] or "no device"))
    for d in info["devices"]:
        if info["kind"] == "rocm" and not d["gfx"]:
            ctx.note("device %d: this torch does not report gcnArchName" % d["index"])


def gpu_facts(environ=None, root="/"):
    """What no-cpu-fallback looks at, gathered from torch, the environment and /dev."""
    environ = os.environ if environ is None else environ

    def path(p):
        return os.path.join(root, p.lstrip("/"))

    def dev(p):
        full = path(p)
        return {"exists": os.path.exists(full), "rw": os.access(full, os.R_OK | os.W_OK)}

    dri = sorted(os.path.basename(p) for p in _glob(path("/dev/dri/renderD*")))
    nv = sorted(os.path.basename(p) for p in _glob(path("/dev/nvidia[0-9]*")))
    return {
        "available": devices.gpu_available(),
        "hip": getattr(torch.version, "hip", None),
        "cuda": getattr(torch.version, "cuda", None),
        "torch": torch.__version__,
        "env": dict((k, environ.get(k)) for k in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                   "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")),
        "kfd": dev("/dev/kfd"),
        "dri_render": [dict(name=n, **dev("/dev/dri/" + n)) for n in dri],
        "nvidiactl": dev("/dev/nvidiactl"),
        "nvidia": nv,
    }


def _glob(pattern):
    import glob
    return glob.glob(pattern)


def diagnose(vendor, facts):
    """(ok, reason, fix) for a GPU vendor: is torch on the GPU, and if not, the likely causes."""
    hip, cuda = facts["hip"], facts["cuda"]
    want = "ROCm" if vendor == "amd" else "CUDA"
    if vendor == "amd" and not hip and cuda:
        return (False, "torch %s is a CUDA build (CUDA %s) on an AMD host" % (facts["torch"], cuda),
                "install a ROCm build of PyTorch (PyTorch's ROCm wheel index, or a rocm/pytorch image)")
    if vendor == "nvidia" and hip:
        return (False, "torch %s is a ROCm build (HIP %s) on an NVIDIA host" % (facts["torch"], hip),
                "install a CUDA build of PyTorch (PyTorch's CUDA wheel index, or an NGC pytorch image)")
    if facts["available"]:
        return True, None, None
    if not hip and not cuda:
        return (False, "torch %s is a CPU-only build: torch.version.hip and torch.version.cuda are both None"
                % facts["torch"],
                "install a %s build of PyTorch (PyTorch's %s wheel index, or a %s image)"
                % (want, want, "rocm/pytorch" if vendor == "amd" else "NGC pytorch"))
    causes, fixes = [], []
    hiding = [k for k in (("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
                          if vendor == "amd" else ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"))
              if facts["env"].get(k) is not None and facts["env"][k].strip().lower() in HIDE_VALUES]
    if hiding:
        causes.append(" and ".join("%s=%r" % (k, facts["env"][k]) for k in hiding) + " hides every GPU")
        fixes.append("unset %s or list the GPUs to use" % " and ".join(hiding))
    if vendor == "amd":
        if not facts["kfd"]["exists"]:
            causes.append("/dev/kfd is missing: the container was started without the GPU devices")
            fixes.append("start the container with --device /dev/kfd --device /dev/dri (rocmenv run does)")
        elif not facts["kfd"]["rw"]:
            causes.append("/dev/kfd is not readable and writable by this user")
            fixes.append("add the user to the device groups: --group-add video --group-add render")
        if facts["kfd"]["exists"] and not facts["dri_render"]:
            causes.append("no /dev/dri/renderD* node")
            fixes.append("pass --device /dev/dri as well as /dev/kfd")
        elif facts["dri_render"] and not any(d["rw"] for d in facts["dri_render"]):
            causes.append("no /dev/dri/renderD* node is readable and writable by this user")
            fixes.append("--group-add render (and video) with the host's group ids")
    else:
        if not facts["nvidiactl"]["exists"] or not facts["nvidia"]:
            causes.append("no /dev/nvidiactl or /dev/nvidia<N>: the container was started without GPUs")
            fixes.append("start it with --gpus all (NVIDIA Container Toolkit; rocmenv run does)")
    if not causes:
        causes.append("torch.cuda.is_available() is False although the %s build and the device nodes look right"
                      % want)
        fixes.append("run `rocmenv doctor` on the host: the driver, kernel or runtime may not match")
    return (False, "torch.cuda.is_available() is False: " + "; ".join(causes),
            "; ".join(fixes))


def test_no_cpu_fallback(ctx):
    """With a GPU vendor, torch must run on the GPU, not silently on the CPU."""
    if ctx.vendor == "cpu":
        raise Skip("vendor cpu: no GPU expected")
    ok, reason, fix = diagnose(ctx.vendor, gpu_facts())
    if not ok:
        raise Failed(reason, fix)
    x = torch.ones(16, device="cuda") * 2
    if x.device.type != "cuda" or float(x.sum().item()) != 32.0:
        raise Failed("a tensor on the GPU came back wrong: %r" % (x.device,), None)
    ctx.metric("gpu_count", torch.cuda.device_count(), "devices")


def device_target(vendor, gfx, cc, override):
    """The target the wheel must contain: the override's gfx if set, else the device's base gfx or sm_XY."""
    if vendor == "amd" or gfx:
        if override:
            return devices.gfx_from_version(override)
        return devices.base_gfx(gfx) if gfx else None
    if cc:
        return "sm_" + cc.replace(".", "")
    return None


def arch_fits(target, arch_list):
    """(fits, note) for a target against the wheel's compiled list.

    AMD code objects run only on their exact gfx target. For NVIDIA, a cubin runs on a later GPU of
    the same major version, and PTX (compute_XY) is JIT-compiled for any later one.
    """
    base = [a.split(":", 1)[0] for a in arch_list]
    if target in base:
        return True, None
    m = re.match(r"^sm_(\d+?)(\d)$", target or "")
    if not m:
        return False, None
    major, minor = int(m.group(1)), int(m.group(2))
    cubins = [(int(n.group(2)), a) for n, a in ((re.match(r"^sm_(\d+?)(\d)$", a), a) for a in base)
              if n and int(n.group(1)) == major and int(n.group(2)) <= minor]
    if cubins:
        return True, "%s runs %s code (same major version)" % (target, max(cubins)[1])
    ptx = [((int(n.group(1)), int(n.group(2))), a) for n, a in ((re.match(r"^compute_(\d+?)(\d)$", a), a)
                                                               for a in base)
           if n and (int(n.group(1)), int(n.group(2))) <= (major, minor)]
    if ptx:
        return True, "%s has no cubin; PTX %s is JIT-compiled on first use (slow start)" % (target, max(ptx)[1])
    return False, None


def test_arch_fit(ctx):
    """Each GPU's target is one the wheel was compiled for, and a kernel runs on it."""
    if ctx.vendor == "cpu":
        raise Skip("vendor cpu: no GPU architecture to check")
    if ctx.device is None:
        raise Failed("not run: no GPU visible to torch (no-cpu-fallback says why)")
    arch = devices.wheel_arch_list()
    ctx.metric("wheel_arch_count", len(arch), "targets")
    if arch:
        ctx.note("wheel targets: %s" % " ".join(arch))
    override = os.environ.get("HSA_OVERRIDE_GFX_VERSION") if devices.build_kind() == "rocm" else None
    if override:
        ctx.note("HSA_OVERRIDE_GFX_VERSION=%s (%s)" % (override, devices.gfx_from_version(override)))
    for d in devices.gpu_devices():
        target = device_target(ctx.vendor, d["gfx"], d["compute_capability"], override)
        if target is None:
            ctx.note("device %d: its architecture is not reported; checked by running a kernel only" % d["index"])
        elif not arch:
            ctx.note("this torch does not list its compiled targets; checked by running a kernel only")
        else:
            fits, note = arch_fits(target, arch)
            if note:
                ctx.note("device %d: %s" % (d["index"], note))
            if not fits:
                ctx.fail("device %d (%s) is %s, which this torch was not compiled for: kernels fail with %s"
                         % (d["index"], d["name"], target,
                            "'HIP error: invalid device function'" if target.startswith("gfx")
                            else "'no kernel image is available for execution on the device'"),
                         _arch_fix(target))
        try:
            x = torch.arange(1024, device=torch.device("cuda", d["index"]), dtype=torch.float32)
            total = float((x * 2).sum().item())
            if total != 1023 * 1024:
                ctx.fail("device %d: a kernel returned %r, expected %r" % (d["index"], total, 1023.0 * 1024))
        except RuntimeError as e:
            ctx.fail("device %d: a kernel failed: %s" % (d["index"], str(e).splitlines()[0]), _arch_fix(target))


def _arch_fix(target):
    if target and target.startswith("gfx"):
        return ("install a torch build compiled for %s; for a consumer RDNA2/RDNA3 GPU, set "
                "HSA_OVERRIDE_GFX_VERSION to a target of the same ISA that the wheel has (rocmenv env "
                "computes it)" % target)
    return "install a torch build whose CUDA version supports %s (a newer CUDA wheel)" % (target or "this GPU")
