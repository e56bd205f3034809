//! Topology: PCIe links narrower (or, idle, slower) than their maximum, and where the GPUs sit among NUMA nodes.

use super::{gpu_label, Context, Finding, Status};
use std::collections::BTreeMap;

const AREA: &str = "topology";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let mut out: Vec<Finding> = cx.facts.gpus.iter().map(pcie).collect();
    out.extend(super::aer::check(cx.facts));
    out.push(numa(cx));
    out
}

fn pcie(g: &crate::host::Gpu) -> Finding {
    const ID: &str = "pcie.link";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let Some(l) = &g.pcie else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("{label}: no PCIe link information in sysfs"),
        )
        .subject(sub);
    };
    let (Some(cs), Some(cw), Some(ms), Some(mw)) = (
        l.current_speed_gts,
        l.current_width,
        l.max_speed_gts,
        l.max_width,
    ) else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("{label}: PCIe link speed or width unreadable"),
        )
        .subject(sub);
    };
    let now = format!("{cs} GT/s x{cw}");
    let max = format!("{ms} GT/s x{mw}");
    if cw < mw {
        return Finding::new(ID, AREA, Status::Warn, format!("{label}: PCIe link runs at x{cw} of x{mw} lanes ({now}, max {max})"))
            .subject(sub)
            .detail("fewer lanes cut host↔GPU bandwidth for good: a riser, the slot or a BIOS bifurcation setting limits it")
            .fix(format!("reseat the card in a full x16 slot, check risers and the BIOS PCIe settings; `sudo lspci -vv -s {} | grep LnkSta`", g.pci_address));
    }
    if cs < ms {
        // Full width at a lower speed is what every idle GPU shows (power saving): a slow slot or riser also drops
        // the width or stays slow under load, which this one reading cannot tell, so it is a note, not a warning.
        return Finding::new(ID, AREA, Status::Pass, format!("{label}: PCIe {now}, max {max} (an idle GPU lowers its link speed; full width)"))
            .subject(sub)
            .detail("GPUs lower the link speed when idle to save power; a slot or riser that limits it shows under load")
            .fix(format!("to see the speed under load, run work on the GPU and check `sudo lspci -vv -s {} | grep LnkSta`", g.pci_address));
    }
    Finding::new(
        ID,
        AREA,
        Status::Pass,
        format!("{label}: PCIe {now} (full speed)"),
    )
    .subject(sub)
}

fn numa(cx: &Context) -> Finding {
    const ID: &str = "topology.numa";
    if cx.facts.gpus.len() < 2 {
        return Finding::new(ID, AREA, Status::Skip, "fewer than two GPUs");
    }
    let mut by_node: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let mut unknown = 0;
    for (i, g) in cx.facts.gpus.iter().enumerate() {
        match g.numa_node {
            Some(n) => by_node.entry(n).or_default().push(i),
            None => unknown += 1,
        }
    }
    if by_node.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "the platform reports no NUMA node for the GPUs (single node)",
        );
    }
    if by_node.len() == 1 && unknown == 0 {
        let n = by_node.keys().next().copied().unwrap_or(0);
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!("all {} GPUs sit on NUMA node {n}", cx.facts.gpus.len()),
        );
    }
    let text = by_node
        .iter()
        .map(|(n, gs)| {
            format!(
                "node {n}: GPU {}",
                gs.iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    // Two sockets with GPUs on both is how such servers are built: information, not a warning.
    let unknown_text = if unknown > 0 {
        format!("; {unknown} GPU(s) report no node")
    } else {
        String::new()
    };
    Finding::new(ID, AREA, Status::Pass, format!("GPUs sit on {} NUMA nodes ({text}{unknown_text})", by_node.len()))
        .detail("traffic between a GPU and memory or GPUs on the other socket crosses the inter-socket link")
        .fix("pin each worker to its GPU's node, e.g. `numactl --cpunodebind=<node> --membind=<node>`, and keep collective groups within a node where possible")
}
