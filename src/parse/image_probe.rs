//! The image probe's output (`checks::image::PROBE_SCRIPT`: marked `@@rocm`, `@@cuda` and `@@torch` sections) read
//! as facts about a built image. Whatever the image prints is read as facts, never a panic.

use serde::Deserialize;

/// What torch in the image says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct TorchFacts {
    /// `torch.__version__`.
    pub version: String,
    /// `torch.version.cuda`: the CUDA it was built with, `None` for CPU and ROCm builds.
    #[serde(default)]
    pub cuda: Option<String>,
    /// `torch.version.hip`: the HIP it was built with, `None` for CPU and CUDA builds.
    #[serde(default)]
    pub hip: Option<String>,
    /// The compiled arch list (`sm_80 sm_90 compute_90`, `gfx90a;gfx942`), split; `None` when torch has none.
    #[serde(default, deserialize_with = "split_flags")]
    pub arch_flags: Option<Vec<String>>,
}

fn split_flags<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    Ok(s.map(|s| {
        s.split([' ', ';', ','])
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect()
    })
    .filter(|v: &Vec<String>| !v.is_empty()))
}

impl TorchFacts {
    /// `CPU-only`, `ROCm (HIP 6.2)` or `CUDA 12.4`: what kind of build it is.
    pub fn kind(&self) -> String {
        match (&self.hip, &self.cuda) {
            (Some(h), _) => format!("ROCm (HIP {h})"),
            (None, Some(c)) => format!("CUDA {c}"),
            (None, None) => "CPU-only".into(),
        }
    }
}

/// What the probe found in an image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageFacts {
    /// `/opt/rocm/.info/version` as written (`6.2.0-66`), when present.
    pub rocm: Option<String>,
    /// The CUDA toolkit in `/usr/local/cuda` (`12.4.1`), when present.
    pub cuda: Option<String>,
    /// False when the image has no `python3`.
    pub python: bool,
    /// torch's facts, when it imports.
    pub torch: Option<TorchFacts>,
    /// Why torch did not import (or the probe's output could not be read).
    pub torch_error: Option<String>,
    /// The image's baked-in environment.
    pub env: Vec<(String, String)>,
}

impl ImageFacts {
    /// Reads the probe's output; `env` is the image's `Config.Env`.
    pub fn parse(output: &str, env: Vec<(String, String)>) -> ImageFacts {
        let mut sections: Vec<(&str, Vec<&str>)> = Vec::new();
        for line in output.lines() {
            match line.trim().strip_prefix("@@") {
                Some(name @ ("rocm" | "cuda" | "torch")) => sections.push((name, Vec::new())),
                _ => {
                    if let Some((_, body)) = sections.last_mut() {
                        body.push(line);
                    }
                }
            }
        }
        let body = |name: &str| {
            sections
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b.join("\n"))
                .unwrap_or_default()
        };
        let rocm = Some(body("rocm").trim().to_string()).filter(|s| !s.is_empty());
        let cuda_text = body("cuda");
        let cuda = serde_json::from_str::<serde_json::Value>(&cuda_text)
            .ok()
            .and_then(|v| v.pointer("/cuda/version")?.as_str().map(str::to_string))
            .or_else(|| {
                cuda_text
                    .trim()
                    .strip_prefix("CUDA Version ")
                    .map(|v| v.trim().to_string())
            });
        let torch_text = body("torch");
        let python = !torch_text.lines().any(|l| l.trim() == "@@nopython") && !sections.is_empty();
        let last_json = torch_text
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with('{'));
        let (torch, torch_error) = match last_json.map(serde_json::from_str::<serde_json::Value>) {
            Some(Ok(v)) if v.get("error").is_some() => {
                (None, v["error"].as_str().map(str::to_string))
            }
            Some(Ok(v)) => match serde_json::from_value::<TorchFacts>(v) {
                Ok(t) => (Some(t), None),
                Err(e) => (None, Some(format!("the probe's answer did not parse: {e}"))),
            },
            _ if !python => (None, None),
            _ => {
                let tail = torch_text
                    .lines()
                    .last()
                    .unwrap_or("no output")
                    .trim()
                    .to_string();
                (None, Some(format!("python3 printed no answer: {tail}")))
            }
        };
        ImageFacts {
            rocm,
            cuda,
            python,
            torch,
            torch_error,
            env,
        }
    }

    /// The ROCm version without its build suffix (`6.2.0`).
    pub fn rocm_version(&self) -> Option<&str> {
        self.rocm
            .as_deref()
            .and_then(|v| v.split(['-', ' ']).next())
            .filter(|v| !v.is_empty())
    }

    /// The CUDA the image runs: the toolkit's, else the one torch bundles.
    pub fn cuda_version(&self) -> Option<&str> {
        self.cuda
            .as_deref()
            .or_else(|| self.torch.as_ref()?.cuda.as_deref())
    }

    /// The last value the image's environment gives `name`.
    pub fn env(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = "@@rocm\n@@cuda\n@@torch\n{\"version\": \"1.13.0a0\", \"cuda\": null, \"hip\": null, \"arch_flags\": null}\n";

    #[test]
    fn the_probe_output_parses() {
        let f = ImageFacts::parse(DEBIAN, vec![]);
        assert!(f.python);
        assert_eq!(f.torch.as_ref().unwrap().kind(), "CPU-only");
        assert_eq!(f.rocm, None);
        let rocm = "@@rocm\n6.2.0-66\n@@cuda\n{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.4.1\"}}\n@@torch\nwarn: x\n{\"version\": \"2.3.0\", \"hip\": \"6.2.41133\", \"arch_flags\": \"gfx90a;gfx942\"}\n";
        let f = ImageFacts::parse(rocm, vec![]);
        assert_eq!(f.rocm_version(), Some("6.2.0"));
        assert_eq!(f.cuda_version(), Some("12.4.1"));
        assert_eq!(f.torch.unwrap().arch_flags.unwrap(), ["gfx90a", "gfx942"]);
        let f = ImageFacts::parse("@@rocm\n@@cuda\n@@torch\n@@nopython\n", vec![]);
        assert!(!f.python);
        let f = ImageFacts::parse("@@rocm\n@@cuda\n@@torch\n{\"error\": \"ModuleNotFoundError: No module named 'torch'\"}\n", vec![]);
        assert!(f.torch_error.unwrap().contains("No module named"));
    }
}
