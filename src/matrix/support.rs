//! Support per GPU model: AMD's tables and footnotes name the models an OS version is supported for, not only
//! their gfx targets (RHEL 8.10 with 10.0.0: MI300X yes, MI325X no; both gfx942). A distro row may name the
//! models it covers (`gpus:`) or leaves out (`exclude_gpus:`); each host GPU is judged by its model first, then
//! by its gfx target.

use super::schema::{DistroSupport, GpuModel, Vendor};
use super::Matrices;
use crate::gfx::GfxTarget;

/// One host GPU as the OS and kernel rows judge it: its model, when gpus.yaml knows its PCI id, and its target.
#[derive(Debug, Clone, Copy)]
pub struct HostGpu<'m> {
    /// The gpus.yaml model, when its PCI id is listed.
    pub model: Option<&'m GpuModel>,
    /// Its gfx target.
    pub gfx: GfxTarget,
}

impl HostGpu<'_> {
    /// How a finding names it: `MI325X (gfx942)`, or the target alone when the model is not known.
    pub fn label(&self) -> String {
        match self.model {
            Some(m) => format!("{} ({})", m.short_name(), self.gfx),
            None => self.gfx.to_string(),
        }
    }

    /// True when both are the same model (or, models unknown, the same target): a host lists each once.
    pub fn same(&self, other: &HostGpu) -> bool {
        self.gfx == other.gfx && self.model.map(|m| &m.name) == other.model.map(|m| &m.name)
    }
}

impl Matrices {
    /// The host GPU with PCI device id `device_id` and target `gfx`, its model looked up in gpus.yaml.
    pub fn host_gpu(&self, device_id: &str, gfx: GfxTarget) -> HostGpu<'_> {
        HostGpu {
            model: self.gpu_by_pci(Vendor::Amd, device_id),
            gfx,
        }
    }

    /// The AMD model a distro row's `gpus:` / `exclude_gpus:` entry names, if gpus.yaml has one.
    pub fn model_named(&self, entry: &str) -> Option<&GpuModel> {
        self.gpus
            .gpus
            .iter()
            .find(|g| g.vendor == Vendor::Amd && g.answers_to(entry))
    }
}

impl GpuModel {
    /// The name a model goes by in AMD's tables: `MI325X` for "AMD Instinct MI325X", `Radeon RX 7900 XTX`.
    pub fn short_name(&self) -> &str {
        let n = self.name.as_str();
        ["AMD Instinct ", "AMD Radeon Instinct ", "AMD "]
            .iter()
            .find_map(|p| n.strip_prefix(p))
            .unwrap_or(n)
    }

    /// True when a matrix entry names this model: its full name, its short name, one of the alternatives a
    /// combined name lists (`MI250` of "MI250 / MI250X"), or one of its PCI ids (`0x74a5`).
    pub fn answers_to(&self, entry: &str) -> bool {
        let e = entry.trim();
        e == self.name
            || e == self.short_name()
            || self.short_name().split(" / ").any(|alt| alt == e)
            || self.pci_ids.iter().any(|id| id.eq_ignore_ascii_case(e))
    }
}

impl DistroSupport {
    /// True when the row covers this GPU: a model it excludes is out, a row naming models covers those only;
    /// otherwise (or with the model unknown) the row's gfx targets decide.
    pub fn covers(&self, g: &HostGpu) -> bool {
        if let Some(m) = g.model {
            if self.exclude_gpus.iter().any(|e| m.answers_to(e)) {
                return false;
            }
            if !self.gpus.is_empty() {
                return self.gpus.iter().any(|e| m.answers_to(e));
            }
        }
        self.supports_gfx(g.gfx)
    }

    /// True when the row limits support to some GPUs (by target or by model).
    pub fn limits_gpus(&self) -> bool {
        !self.gfx.is_empty() || !self.gpus.is_empty() || !self.exclude_gpus.is_empty()
    }

    /// Which GPUs the row is for, in words: `gfx950, gfx942 only (not MI350P)`, `MI300X, MI300A only`,
    /// `every GPU but Radeon PRO V620`; empty when it is for all.
    pub fn gpus_text(&self) -> String {
        let listed = if !self.gpus.is_empty() {
            self.gpus.join(", ")
        } else {
            self.gfx
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let not = self.exclude_gpus.join(", ");
        match (listed.is_empty(), not.is_empty()) {
            (true, true) => String::new(),
            (true, false) => format!("every GPU but {not}"),
            (false, true) => format!("{listed} only"),
            (false, false) => format!("{listed} only (not {not})"),
        }
    }
}
