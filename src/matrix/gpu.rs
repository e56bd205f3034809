//! `matrix gpu NAME|PCI-ID`: the GPU models gpus.yaml lists under a name or device id, and for an AMD model how its
//! gfx target runs on each ROCm release (the `matrix gfx` answer).

use super::schema::GpuModel;
use super::Matrices;
use super::{GfxAnswer, MatrixAnswer, MatrixQuery};
use crate::vendor::Vendor;
use serde::Serialize;

/// How a query names a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuKey {
    /// A PCI device id, normalised to `0x744c` (a `1002:` or `10de:` vendor prefix picks the vendor).
    PciId(Option<Vendor>, String),
    /// Part of a marketing name, compared without case or spaces.
    Name(String),
}

/// A validated `matrix gpu` question: what was typed and how it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuQuery {
    /// The query as given.
    pub text: String,
    /// How it names the GPU.
    pub key: GpuKey,
}

impl GpuQuery {
    /// Reads the query: `0x744c`, `744c` and `1002:744c` are device ids; anything else is a name. The error says
    /// what is wrong with it.
    pub fn parse(q: &str) -> Result<GpuQuery, String> {
        let text = q.to_string();
        let q = q.trim();
        let hex4 = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit());
        let (vendor, id) = match q.split_once(':') {
            Some((v, id)) if hex4(v) => {
                let vendor = match v.to_ascii_lowercase().as_str() {
                    "1002" => Vendor::Amd,
                    "10de" => Vendor::Nvidia,
                    _ => {
                        return Err(format!(
                            "`{q}`: PCI vendor {v} is neither AMD (1002) nor NVIDIA (10de)"
                        ))
                    }
                };
                (Some(vendor), id)
            }
            _ => (None, q),
        };
        let bare = id
            .strip_prefix("0x")
            .or_else(|| id.strip_prefix("0X"))
            .unwrap_or(id);
        let is_id = vendor.is_some() || id.len() == 6 || bare.bytes().any(|b| b.is_ascii_digit());
        if hex4(bare) && is_id {
            let key = GpuKey::PciId(vendor, format!("0x{}", bare.to_ascii_lowercase()));
            return Ok(GpuQuery { text, key });
        }
        if q.is_empty() {
            return Err("give a GPU name (MI300X) or PCI device id (0x744c)".into());
        }
        Ok(GpuQuery {
            text,
            key: GpuKey::Name(squash(q)),
        })
    }
}

/// Lower case without spaces or dashes: `RX 7900XTX` finds `Radeon RX 7900 XTX`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// `matrix gpu`: the models the query names (none is an answer too), each with its target's `matrix gfx` answer.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct GpuAnswer<'m> {
    /// The models, in gpus.yaml order.
    pub models: Vec<&'m GpuModel>,
    /// Beside each model, its gfx target's answer: only for the first model of a target (one table is enough
    /// when several share it), and only where the matrices answer it.
    #[serde(skip)]
    pub gfx: Vec<Option<GfxAnswer<'m>>>,
    /// How many models gpus.yaml lists.
    #[serde(skip)]
    pub listed: usize,
}

impl Matrices {
    /// The models `key` names, in gpus.yaml order.
    fn gpus_named(&self, key: &GpuKey) -> Vec<&GpuModel> {
        self.gpus
            .gpus
            .iter()
            .filter(|g| match key {
                GpuKey::PciId(v, id) => {
                    v.is_none_or(|v| v == g.vendor) && g.pci_ids.iter().any(|p| p == id)
                }
                GpuKey::Name(n) => squash(&g.name).contains(n.as_str()),
            })
            .collect()
    }

    /// The models `q` names: as a device id first; a bare four-digit `7900` that is no id is then read as a name.
    pub fn gpu_models(&self, q: &GpuQuery) -> Vec<&GpuModel> {
        let found = self.gpus_named(&q.key);
        let bare = !q.text.trim().to_ascii_lowercase().starts_with("0x");
        if found.is_empty() && bare && matches!(q.key, GpuKey::PciId(None, _)) {
            return self.gpus_named(&GpuKey::Name(squash(&q.text)));
        }
        found
    }

    /// The answer to `matrix gpu`.
    pub(super) fn gpu_answer(&self, q: &GpuQuery) -> GpuAnswer<'_> {
        let models = self.gpu_models(q);
        let gfx = models
            .iter()
            .enumerate()
            .map(|(n, g)| {
                let first = models.iter().position(|x| x.gfx == g.gfx) == Some(n);
                let t = g.gfx.filter(|_| first)?;
                match self.answer(&MatrixQuery::Gfx(t)).ok()? {
                    MatrixAnswer::Gfx(a) => Some(a),
                    _ => None,
                }
            })
            .collect();
        GpuAnswer {
            models,
            gfx,
            listed: self.gpus.gpus.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: `rocmenv matrix gpu "MI300X"` was an unrecognised subcommand. A name part, an id with or without
    /// `0x`, and a vendor-prefixed id each find the model.
    #[test]
    fn a_gpu_is_found_by_name_or_pci_id() {
        let m = Matrices::load(None).unwrap();
        let names = |q: &str| -> Vec<String> {
            m.gpu_models(&GpuQuery::parse(q).unwrap())
                .iter()
                .map(|g| g.name.clone())
                .collect()
        };
        assert!(
            names("mi300x").iter().any(|n| n.contains("MI300X")),
            "{:?}",
            names("mi300x")
        );
        let xtx = names("RX 7900XTX");
        assert!(xtx.iter().any(|n| n.contains("7900 XTX")), "{xtx:?}");
        assert_eq!(names("0x744c"), names("744c"));
        assert_eq!(names("1002:744C"), names("744c"));
        assert!(names("744c").iter().any(|n| n.contains("7900 XTX")));
        assert!(names("10de:744c").is_empty());
        assert!(names("nosuchgpu").is_empty());
        assert!(
            names("7900").iter().any(|n| n.contains("7900 XTX")),
            "a bare number that is no id is a name"
        );
        assert!(GpuQuery::parse("abcd:744c").is_err());
    }
}
