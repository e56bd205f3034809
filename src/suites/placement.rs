//! Which host GPU a suite's device test ran on: torch numbers the devices its process sees from 0, while doctor and
//! `run --gpu` number the host's GPUs (AMD in KFD node order, NVIDIA in PCI bus order). A `--gpu` selection, a
//! container that maps one GPU, or a visible-devices variable make torch's 0 the host's GPU 3. The PCI address torch
//! reports settles it; without one, the mapping rocmenv made (or the variables the process inherited) do.

use super::result::{pci_address_parts, DeviceInfo, SuiteResult};
use crate::matrix::Vendor;

/// One of the host's GPUs of the run's vendor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGpu {
    /// Its number (doctor's `#`).
    pub index: usize,
    /// `0000:03:00.0`.
    pub pci_address: String,
    /// `0x744c`.
    pub device_id: String,
}

/// Torch's device numbers against the host's GPU numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    host: Vec<HostGpu>,
    /// The host's number of torch's device `i`, by position; `None` when the order is not known.
    by_position: Option<Vec<usize>>,
}

/// A visible-devices value of plain numbers (`3,1`); `None` for UUIDs, MIG names or anything else rocmenv cannot
/// place by number.
fn numbers(value: &str) -> Option<Vec<usize>> {
    value
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<Vec<usize>>>()
}

impl Placement {
    /// A container that was given exactly `mapped` (host numbers, in the order the runtime in it counts them).
    pub fn mapped(host: Vec<HostGpu>, mapped: Vec<usize>) -> Placement {
        Placement {
            host,
            by_position: Some(mapped),
        }
    }

    /// A process on this host that inherits the variables `env` reads: HIP and CUDA count only the devices
    /// `ROCR_VISIBLE_DEVICES`, then `HIP_VISIBLE_DEVICES` (or `CUDA_VISIBLE_DEVICES`) leave, in the order they list.
    pub fn on_host(
        vendor: Vendor,
        host: Vec<HostGpu>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Placement {
        let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let mut order: Option<Vec<usize>> = Some(host.iter().map(|g| g.index).collect());
        let pick = |order: Option<Vec<usize>>, value: Option<String>| match value {
            None => order,
            Some(v) => {
                let order = order?;
                numbers(&v)?
                    .into_iter()
                    .map(|i| order.get(i).copied())
                    .collect::<Option<Vec<_>>>()
            }
        };
        match vendor {
            Vendor::Amd => {
                order = pick(order, set("ROCR_VISIBLE_DEVICES"));
                order = pick(
                    order,
                    set("HIP_VISIBLE_DEVICES").or_else(|| set("CUDA_VISIBLE_DEVICES")),
                );
            }
            Vendor::Nvidia => {
                // CUDA's default order puts the fastest first; it equals PCI order only when every GPU is alike.
                let alike = host.windows(2).all(|w| w[0].device_id == w[1].device_id);
                if env("CUDA_DEVICE_ORDER").as_deref() != Some("PCI_BUS_ID") && !alike {
                    order = None;
                }
                order = pick(order, set("CUDA_VISIBLE_DEVICES"));
            }
            // No GPU is used: the host list stays in its order.
            Vendor::Cpu => {}
        }
        Placement {
            host,
            by_position: order,
        }
    }

    /// The host's number of torch's device `torch`: by the PCI address torch reports when a host GPU has it, else by
    /// position; `None` when neither tells.
    pub fn gpu_for(&self, torch: u32, infos: &[DeviceInfo]) -> Option<usize> {
        let info = infos.iter().find(|d| d.index == Some(torch));
        if let Some(addr) = info.and_then(DeviceInfo::pci) {
            if let Some(g) = self
                .host
                .iter()
                .find(|g| pci_address_parts(&g.pci_address) == Some(addr))
            {
                return Some(g.index);
            }
        }
        self.by_position.as_ref()?.get(torch as usize).copied()
    }

    /// Torch's number of the host's GPU `gpu` by position, for `run.py --devices`; `None` when the process does not
    /// see it (or the order is not known).
    pub fn torch_for(&self, gpu: usize) -> Option<u32> {
        let pos = self.by_position.as_ref()?.iter().position(|g| *g == gpu)?;
        u32::try_from(pos).ok()
    }

    /// Puts the host's number on every device test of `r` that can be placed.
    pub fn place(&self, r: &mut SuiteResult) {
        let infos = r.device.infos();
        for t in &mut r.tests {
            if let Some(d) = t.device {
                t.gpu = self.gpu_for(d, &infos);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(addrs: &[&str]) -> Vec<HostGpu> {
        addrs
            .iter()
            .enumerate()
            .map(|(i, a)| HostGpu {
                index: i,
                pci_address: a.to_string(),
                device_id: "0x740f".into(),
            })
            .collect()
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn info(index: u32, bus: Option<u32>) -> DeviceInfo {
        DeviceInfo {
            index: Some(index),
            pci_bus_id: bus.map(Into::into),
            pci_domain_id: bus.map(|_| 0.into()),
            pci_device_id: bus.map(|_| 0.into()),
            ..DeviceInfo::default()
        }
    }

    const MI210X4: [&str; 4] = [
        "0000:e3:00.0",
        "0000:c3:00.0",
        "0000:03:00.0",
        "0000:06:00.0",
    ];

    /// Issue 21: a container given GPU 3 alone sees it as torch's 0; failures must say GPU 3.
    #[test]
    fn a_container_with_one_gpu_names_the_hosts_number() {
        let p = Placement::mapped(host(&MI210X4), vec![3]);
        assert_eq!(p.gpu_for(0, &[]), Some(3));
        assert_eq!(p.gpu_for(1, &[]), None);
        assert_eq!(p.torch_for(3), Some(0));
    }

    /// The PCI address torch reports wins over position: torch's 0 at bus 0x03 is the host's GPU 2.
    #[test]
    fn the_pci_address_places_a_device_whatever_the_order() {
        let p = Placement::mapped(host(&MI210X4), vec![0, 1, 2, 3]);
        assert_eq!(p.gpu_for(0, &[info(0, Some(0x03))]), Some(2));
        assert_eq!(p.gpu_for(1, &[info(1, None)]), Some(1));
        // An address no host GPU has falls back to position.
        assert_eq!(p.gpu_for(1, &[info(1, Some(0x99))]), Some(1));
    }

    #[test]
    fn visible_device_variables_on_the_host() {
        let amd = |pairs| Placement::on_host(Vendor::Amd, host(&MI210X4), &env(pairs));
        assert_eq!(amd(&[]).gpu_for(2, &[]), Some(2));
        let p = amd(&[("HIP_VISIBLE_DEVICES", "3,1")]);
        assert_eq!((p.gpu_for(0, &[]), p.gpu_for(1, &[])), (Some(3), Some(1)));
        assert_eq!(p.torch_for(1), Some(1));
        assert_eq!(p.torch_for(0), None);
        // ROCR filters first; HIP then counts among what is left.
        let p = amd(&[
            ("ROCR_VISIBLE_DEVICES", "2,3"),
            ("HIP_VISIBLE_DEVICES", "1"),
        ]);
        assert_eq!(p.gpu_for(0, &[]), Some(3));
        // UUIDs cannot be placed by number: only the PCI address can.
        let p = amd(&[("HIP_VISIBLE_DEVICES", "GPU-abc")]);
        assert_eq!(p.gpu_for(0, &[]), None);
        assert_eq!(p.gpu_for(0, &[info(0, Some(0xc3))]), Some(1));
        // A number past the host's GPUs places nothing.
        assert_eq!(amd(&[("HIP_VISIBLE_DEVICES", "7")]).gpu_for(0, &[]), None);
    }

    #[test]
    fn nvidia_order_is_known_only_in_pci_order_or_among_alike_gpus() {
        let mut mixed = host(&["0000:01:00.0", "0000:02:00.0"]);
        mixed[1].device_id = "0x2684".into();
        let p = Placement::on_host(Vendor::Nvidia, mixed.clone(), &env(&[]));
        assert_eq!(p.gpu_for(0, &[]), None);
        let p = Placement::on_host(
            Vendor::Nvidia,
            mixed,
            &env(&[
                ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
                ("CUDA_VISIBLE_DEVICES", "1"),
            ]),
        );
        assert_eq!(p.gpu_for(0, &[]), Some(1));
        let p = Placement::on_host(
            Vendor::Nvidia,
            host(&["0000:01:00.0", "0000:02:00.0"]),
            &env(&[]),
        );
        assert_eq!(p.gpu_for(1, &[]), Some(1));
    }
}
