"""diffusion and sd15_unet: Stable Diffusion 1.5's UNet built from its published config with random weights
(never downloaded), one training step (or inference pass) per iteration."""
import torch
import torch.nn.functional as F

from . import stats
from .devices import amp_dtype, autocast, grad_scaler
from .models import check_precision, optimizer_step
from .numerics import check_losses, inject_nan
from .result import Failed, Skip

# Stable Diffusion 1.5's UNet, the values of its published config:
# https://huggingface.co/runwayml/stable-diffusion-v1-5/blob/main/unet/config.json
SD15_UNET = {
    "sample_size": 64,
    "in_channels": 4,
    "out_channels": 4,
    "center_input_sample": False,
    "flip_sin_to_cos": True,
    "freq_shift": 0,
    "down_block_types": ("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
    "up_block_types": ("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
    "block_out_channels": (320, 640, 1280, 1280),
    "layers_per_block": 2,
    "downsample_padding": 1,
    "mid_block_scale_factor": 1,
    "act_fn": "silu",
    "norm_num_groups": 32,
    "norm_eps": 1e-5,
    "cross_attention_dim": 768,
    "attention_head_dim": 8,
}

# The same architecture shrunk for a CPU smoke run: two levels, narrow channels, 16x16 latents.
TINY_UNET = dict(SD15_UNET, sample_size=16, block_out_channels=(32, 64), layers_per_block=1,
                 down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                 up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32)

CONFIGS = {"sd15": SD15_UNET, "tiny": TINY_UNET}
TEXT_TOKENS = 77  # CLIP's sequence length in SD 1.5


def make_unet_step(device, config_name, mode, precision, batch, seed=0):
    """(step closure, losses list): a UNet training step (noise-prediction MSE, AdamW) or an inference pass."""
    from diffusers import UNet2DConditionModel

    if config_name not in CONFIGS:
        raise Failed("params.config must be one of %s, got %r" % ("|".join(sorted(CONFIGS)), config_name))
    cfg = CONFIGS[config_name]
    torch.manual_seed(seed)
    model = UNet2DConditionModel(**cfg).to(device.torch)
    gen = torch.Generator().manual_seed(seed)
    size = cfg["sample_size"]
    latents = torch.randn(batch, cfg["in_channels"], size, size, generator=gen).to(device.torch)
    noise = torch.randn(latents.shape, generator=gen).to(device.torch)
    timesteps = torch.randint(0, 1000, (batch,), generator=gen).to(device.torch)
    text = torch.randn(batch, TEXT_TOKENS, cfg["cross_attention_dim"], generator=gen).to(device.torch)
    use_amp = precision == "amp"
    low = amp_dtype(device)
    if precision in ("fp16", "bf16"):
        dt = torch.float16 if precision == "fp16" else torch.bfloat16
        model = model.to(dt)
        latents, text = latents.to(dt), text.to(dt)

    def forward():
        out = model(latents, timesteps, encoder_hidden_states=text)
        return out.sample if hasattr(out, "sample") else out[0]

    losses = []
    if mode == "infer":
        model.eval()

        def infer():
            with torch.no_grad():
                if use_amp:
                    with autocast(device, low):
                        return forward()
                return forward()

        return infer, losses
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    scaler = grad_scaler() if use_amp and device.is_gpu and low == torch.float16 else None

    def train():
        opt.zero_grad(set_to_none=True)
        if use_amp:
            with autocast(device, low):
                pred = forward()
        else:
            pred = forward()
        loss = F.mse_loss(pred.float(), noise.float())
        optimizer_step(loss, opt, scaler)
        losses.append(loss.detach())

    return train, losses


def _run(ctx):
    device = ctx.device
    config = ctx.param("config", "tiny")
    batch = int(ctx.param("batch", 1))
    mode = ctx.param("mode", "train")
    precision = ctx.param("precision", "fp32")
    if precision == "int8":
        raise Skip("int8 dynamic quantisation is not measured for the UNet")
    note = check_precision(device, precision, mode)
    if note:
        ctx.note(note)
    device.reset_peak_memory()
    step, losses = make_unet_step(device, config, mode, precision, batch)
    times = device.time_iters(step, int(ctx.param("warmup", 1)), int(ctx.param("iters", 2)))
    what = "UNet %s %s" % (mode, precision)
    if losses:
        values = inject_nan([float(v.float().item()) for v in losses])
        # A few AdamW steps at lr 1e-5 on random weights need not lower the loss: every step finite is the check.
        reasons = check_losses(values, float("inf"), what, ctx.where)
        if reasons:
            raise Failed("; ".join(reasons))
        ctx.metric("loss_last", values[-1], "loss", "lower")
    else:
        out = step().float()
        if not bool(torch.isfinite(out).all()):
            raise Failed("%s on %s: the predicted noise has %d NaN or Inf of %d values"
                         % (what, ctx.where, int((~torch.isfinite(out)).sum()), out.numel()))
        spread = float(out.max() - out.min())
        if not spread > 0:
            raise Failed("%s on %s: the predicted noise is constant (%.4g everywhere)"
                         % (what, ctx.where, float(out.reshape(-1)[0])))
        ctx.metric("output_std", float(out.std()), "abs")
    ctx.note("UNet2DConditionModel, %s config (%s), random weights, batch %d, %s %s"
             % (config, "SD 1.5's published values" if config == "sd15" else "SD 1.5 shrunk for the CPU",
                batch, mode, precision))
    return times, batch


def test_diffusion(ctx):
    times, batch = _run(ctx)
    s = stats.summarize_seconds(times)
    ctx.metric("images_per_s", batch * s["n"] / s["total_s"], "images/s")
    ctx.metric("step_p50_ms", s["p50_ms"], "ms")
    ctx.metric("step_p99_ms", s["p99_ms"], "ms")
    name, value = ctx.device.peak_memory_metric("")
    ctx.metric(name, value, "bytes")


def bench_sd15_unet(ctx):
    from .perf import bench_metrics

    times, batch = _run(ctx)
    bench_metrics(ctx, times, batch, "images/s", ctx.device)
