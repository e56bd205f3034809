//! The commented `rocmenv.yaml` that `rocmenv init` writes, filled in from the host it runs on.

use super::schema::Stack;
use std::fmt::Write as _;

/// What `rocmenv init` found, to fill the example in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleInput {
    /// The stack to write.
    pub stack: Stack,
    /// `rocm-7.2.4` / `cuda-12.4`: the doctor's default target for this host.
    pub target: Option<String>,
    /// Why that target (the doctor's first line says the same).
    pub target_why: String,
    /// The ROCm release of the rocm stack (`7.2`), the target's series.
    pub rocm: Option<String>,
    /// The AMD GPUs' gfx targets.
    pub gfx: Vec<String>,
    /// The NVIDIA GPUs' compute capabilities, as `sm_90`.
    pub cuda_arch: Vec<String>,
    /// The NVIDIA driver, when one is loaded.
    pub nvidia_driver: Option<String>,
    /// One line about the host (`2 GPUs: gfx942`, `no GPU`).
    pub host: String,
}

impl ExampleInput {
    /// The stack as the file names it.
    pub fn stack_name(&self) -> &'static str {
        self.stack.name()
    }
}

fn list(v: &[String]) -> String {
    format!("[{}]", v.join(", "))
}

/// The file's text. Every value written loads back with [`super::Config::parse`].
pub fn render(i: &ExampleInput) -> String {
    let mut s = String::new();
    write_host(&mut s, i);
    s.push_str(
        "
# The smoke suite runs on a machine with a GPU; on one without, validate skips it and says so.
smoke:
  level: quick      # quick | standard | full
  timeout: 1800     # seconds

# The images to validate, in order: each takes the choices `rocmenv build --stack` takes as flags.
stacks:
",
    );
    write_stack(&mut s, i);
    s.push_str(
        "    # base: debian:bookworm-slim   # start from this image instead (a mirror; validate --base overrides it)
    # pip: [\"numpy==1.26.4\"]     # extra pip packages, checked like `build --pip`
    # apt: [python3-scipy]       # extra Debian/Ubuntu packages, checked like `build --apt`

# Benchmarks on a machine with a GPU, compared with a baselines file.
# benchmarks:
#   - model: resnet50          # resnet50 | vit_b_16 | gemm | bandwidth | onnx | sd15_unet
#     batch: 64
#     precision: fp16          # fp32 | fp16 | bf16 | amp | int8
#     baseline: baselines.yaml # from `rocmenv bench --save-baseline baselines.yaml`, relative to this file
#     threshold: 10            # percent below the baseline that counts as a regression
#     fail_on_regression: true

# Check ids whose failure only warns (ids as `rocmenv doctor --json` and the reports print them).
allow_warn: []
",
    );
    s
}

/// Writes the header and the `host:` section: the target doctor picked and the NVIDIA driver, when known.
fn write_host(s: &mut String, i: &ExampleInput) {
    let _ = write!(
        s,
        "# rocmenv.yaml: what `rocmenv validate` checks before an image reaches the GPU hosts.
# Written by `rocmenv init` on a host with {host}. Reference: docs/validate.md.
# Unknown keys and wrong types are errors naming their line.
schema_version: 1

# The GPU hosts the images deploy to: doctor checks this machine against it, and the image checks compare the
# image's ROCm (driver window) and CUDA (driver floor) with it. rocm-X.Y[.Z], cuda-X.Y or ngc-YY.MM.
host:
",
        host = i.host
    );
    match &i.target {
        Some(t) => {
            let _ = writeln!(s, "  target: {t}   # {}", i.target_why);
        }
        None => s.push_str("  # target: rocm-6.2\n"),
    }
    match &i.nvidia_driver {
        Some(d) => {
            let _ = writeln!(s, "  nvidia_driver: \"{d}\"   # the hosts' NVIDIA driver");
        }
        None => s.push_str(
            "  # nvidia_driver: \"550.54.15\"   # the hosts' NVIDIA driver, when they have one\n",
        ),
    }
}

/// Writes the one stack entry: its name and kind, and the choices that kind takes, filled in from the host.
fn write_stack(s: &mut String, i: &ExampleInput) {
    let stack = i.stack.name();
    let _ = writeln!(s, "  - name: {stack}");
    let _ = writeln!(s, "    stack: {stack}      # rocm | ngc | cpu");
    match i.stack {
        Stack::Rocm => {
            match &i.rocm {
                Some(r) => {
                    let _ = writeln!(s, "    rocm: \"{r}\"");
                }
                None => s.push_str("    # rocm: \"6.2\"\n"),
            }
            s.push_str("    # pytorch: \"2.3\"   # a prefix of the image's PyTorch version\n");
            if i.gfx.is_empty() {
                s.push_str("    # gfx: [gfx942]   # the gfx targets the image must run on\n");
            } else {
                let _ = writeln!(
                    s,
                    "    gfx: {}   # the gfx targets the image must run on",
                    list(&i.gfx)
                );
            }
        }
        Stack::Ngc => {
            s.push_str(
                "    # ngc: \"24.05\"   # default: the newest release whose CUDA the driver runs\n",
            );
            if i.cuda_arch.is_empty() {
                s.push_str(
                    "    # cuda_arch: [sm_90]   # the compute capabilities the image must run on\n",
                );
            } else {
                let _ = writeln!(
                    s,
                    "    cuda_arch: {}   # the compute capabilities the image must run on",
                    list(&i.cuda_arch)
                );
            }
        }
        Stack::Cpu => {
            s.push_str("    # gfx: [gfx942]       # claim a GPU target: validate then checks the torch wheel's arch list\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    fn input(stack: Stack) -> ExampleInput {
        ExampleInput {
            stack,
            target: Some("rocm-6.2.4".into()),
            target_why: "newest release that builds gfx942".into(),
            rocm: Some("6.2".into()),
            gfx: vec!["gfx942".into(), "gfx90a".into()],
            cuda_arch: vec!["sm_90".into()],
            nvidia_driver: Some("550.54.15".into()),
            host: "2 GPUs".into(),
        }
    }

    #[test]
    fn every_stack_loads_back() {
        for stack in [Stack::Rocm, Stack::Ngc, Stack::Cpu] {
            let text = render(&input(stack));
            let c = Config::parse(Path::new("rocmenv.yaml"), &text)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(c.file.stacks[0].stack, stack);
            assert_eq!(c.file.host.target.as_deref(), Some("rocm-6.2.4"));
        }
        let mut bare = input(Stack::Rocm);
        bare.target = None;
        bare.rocm = None;
        bare.gfx.clear();
        bare.nvidia_driver = None;
        let c = Config::parse(Path::new("x.yaml"), &render(&bare)).unwrap();
        assert!(c.file.host.target.is_none());
        assert!(c.file.stacks[0].gfx.is_empty());
    }
}
