//! `nvidia-smi -q -x`: the memory-health parts of each `<gpu>` (ECC counts, retired pages, row remapping).
//!
//! Element names as the driver's XML prints them across DTD versions v11–v13 (`ecc_errors/volatile/dram_uncorrectable`,
//! v13's `sram_uncorrectable_parity`/`_secded`, older `double_bit/total`; `retired_pages/pending_retirement`;
//! `remapped_rows/remapped_row_failure`), read from real captures (tests/fixtures/captures/INDEX.md).

/// What one GPU's XML says about its memory; `None` where it says `N/A` or has no such element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvidiaMemoryHealth {
    /// `<gpu id=…>`: the PCI bus id, `00000000:17:00.0`.
    pub bus_id: String,
    /// `<product_name>`.
    pub product_name: Option<String>,
    /// Uncorrectable ECC errors since the driver loaded (volatile), all sources summed.
    pub volatile_uncorrectable: Option<u64>,
    /// Uncorrectable ECC errors over the GPU's life (aggregate).
    pub aggregate_uncorrectable: Option<u64>,
    /// Correctable ECC errors since the driver loaded.
    pub volatile_correctable: Option<u64>,
    /// Pages retired for single-bit and double-bit errors (GPUs before Ampere retire pages; later ones remap rows).
    pub retired_pages: Option<u64>,
    /// `pending_retirement`: a page waits for the next reboot or reset to be retired.
    pub retirement_pending: Option<bool>,
    /// `remapped_row_pending`: a row remap waits for a GPU reset.
    pub remap_pending: Option<bool>,
    /// `remapped_row_failure`: a row could not be remapped.
    pub remap_failure: Option<bool>,
    /// `remapped_row_unc`: rows remapped for uncorrectable errors.
    pub remapped_uncorrectable: Option<u64>,
}

/// Parses the document; `Err` when it is not XML or has no `<nvidia_smi_log>` root.
pub fn parse_nvidia_smi_xml(text: &str) -> Result<Vec<NvidiaMemoryHealth>, String> {
    if nesting(text) > MAX_DEPTH {
        return Err(format!(
            "nests elements deeper than {MAX_DEPTH} levels, which nvidia-smi never does"
        ));
    }
    // The driver writes a DOCTYPE naming its DTD; roxmltree refuses DTDs unless asked, and never fetches them.
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text.trim_start(), opts)
        .map_err(|e| format!("is not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "nvidia_smi_log" {
        return Err(format!(
            "has <{}> where <nvidia_smi_log> was expected",
            root.tag_name().name()
        ));
    }
    Ok(root
        .children()
        .filter(|n| n.has_tag_name("gpu"))
        .map(gpu)
        .collect())
}

/// nvidia-smi's XML is about six levels deep; roxmltree recurses per level, so junk nested thousands deep would
/// overflow the stack before it could be refused.
const MAX_DEPTH: usize = 64;

/// The deepest element nesting in `text`, counted from its tags alone (a guard before parsing, not a parser).
fn nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let b = text.as_bytes();
    for (i, _) in text.match_indices('<') {
        match b.get(i + 1) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(b'!') | Some(b'?') | None => {}
            Some(_) => {
                // Only up to the next `<`, so the scan stays linear on junk without `>`.
                let rest = &text[i + 1..];
                let self_closing = rest
                    .find(['<', '>'])
                    .is_some_and(|end| rest[end..].starts_with('>') && rest[..end].ends_with('/'));
                if !self_closing {
                    depth += 1;
                    max = max.max(depth);
                    if max > MAX_DEPTH {
                        break;
                    }
                }
            }
        }
    }
    max
}

fn gpu(g: roxmltree::Node) -> NvidiaMemoryHealth {
    let ecc = child(g, "ecc_errors");
    let retired = child(g, "retired_pages");
    let remap = child(g, "remapped_rows");
    let retired_count = |kind: &str| {
        retired
            .and_then(|r| child(r, kind))
            .and_then(|k| number(child(k, "retired_count")?))
    };
    let retired_pages = match (
        retired_count("multiple_single_bit_retirement"),
        retired_count("double_bit_retirement"),
    ) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    NvidiaMemoryHealth {
        bus_id: g.attribute("id").unwrap_or_default().to_string(),
        product_name: child(g, "product_name").and_then(text),
        volatile_uncorrectable: ecc.and_then(|e| sum(child(e, "volatile")?, true)),
        aggregate_uncorrectable: ecc.and_then(|e| sum(child(e, "aggregate")?, true)),
        volatile_correctable: ecc.and_then(|e| sum(child(e, "volatile")?, false)),
        retired_pages,
        retirement_pending: retired.and_then(|r| yes_no(child(r, "pending_retirement")?)),
        remap_pending: remap.and_then(|r| yes_no(child(r, "remapped_row_pending")?)),
        remap_failure: remap.and_then(|r| yes_no(child(r, "remapped_row_failure")?)),
        remapped_uncorrectable: remap.and_then(|r| number(child(r, "remapped_row_unc")?)),
    }
}

/// The counts under `volatile` or `aggregate`: `*_uncorrectable*` (or the old `double_bit/total`) when
/// `uncorrectable`, else `*_correctable` (or `single_bit/total`). `None` when every one is `N/A`.
fn sum(scope: roxmltree::Node, uncorrectable: bool) -> Option<u64> {
    let mut total: Option<u64> = None;
    for c in scope.children().filter(|c| c.is_element()) {
        let name = c.tag_name().name();
        let n = match name {
            "double_bit" if uncorrectable => child(c, "total").and_then(number),
            "single_bit" if !uncorrectable => child(c, "total").and_then(number),
            _ if uncorrectable && name.contains("_uncorrectable") => number(c),
            _ if !uncorrectable && name.ends_with("_correctable") => number(c),
            _ => None,
        };
        if let Some(n) = n {
            total = Some(total.unwrap_or(0).saturating_add(n));
        }
    }
    total
}

fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    n.children().find(|c| c.has_tag_name(name))
}

fn text(n: roxmltree::Node) -> Option<String> {
    let t = n.text()?.trim();
    (!t.is_empty() && t != "N/A").then(|| t.to_string())
}

fn number(n: roxmltree::Node) -> Option<u64> {
    text(n)?.parse().ok()
}

fn yes_no(n: roxmltree::Node) -> Option<bool> {
    match text(n)?.as_str() {
        "Yes" => Some(true),
        "No" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capture without its `# source:` line (INDEX.md names where it came from).
    const A10G: &str = include_str!("../../tests/fixtures/captures/nvidia-smi_-q-x_a10g.txt");

    fn without_source_line(t: &str) -> &str {
        t.split_once('\n').map_or(t, |(first, rest)| {
            if first.starts_with("# source") {
                rest
            } else {
                t
            }
        })
    }

    #[test]
    fn a10g_reads_ecc_and_row_remapping() {
        let gpus = parse_nvidia_smi_xml(without_source_line(A10G)).unwrap();
        assert_eq!(gpus.len(), 1);
        let g = &gpus[0];
        assert_eq!(g.bus_id, "00000000:00:1E.0");
        assert_eq!(g.product_name.as_deref(), Some("NVIDIA A10G"));
        assert_eq!(g.volatile_uncorrectable, Some(0));
        assert_eq!(g.aggregate_uncorrectable, Some(0));
        assert_eq!(g.volatile_correctable, Some(0));
        // Ampere remaps rows and retires no pages: the page counts are N/A.
        assert_eq!(g.retired_pages, None);
        assert_eq!(g.retirement_pending, None);
        assert_eq!(
            (g.remap_pending, g.remap_failure),
            (Some(false), Some(false))
        );
        assert_eq!(g.remapped_uncorrectable, Some(0));
    }

    #[test]
    fn older_and_newer_layouts_and_junk() {
        let old = "<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><ecc_errors><volatile><single_bit><total>3</total></single_bit><double_bit><total>1</total></double_bit></volatile></ecc_errors><retired_pages><multiple_single_bit_retirement><retired_count>2</retired_count></multiple_single_bit_retirement><double_bit_retirement><retired_count>1</retired_count></double_bit_retirement><pending_retirement>Yes</pending_retirement></retired_pages></gpu></nvidia_smi_log>";
        let g = &parse_nvidia_smi_xml(old).unwrap()[0];
        assert_eq!(
            (g.volatile_uncorrectable, g.volatile_correctable),
            (Some(1), Some(3))
        );
        assert_eq!(
            (g.retired_pages, g.retirement_pending),
            (Some(3), Some(true))
        );
        let v13 = "<nvidia_smi_log><gpu id=\"x\"><ecc_errors><aggregate><sram_correctable>N/A</sram_correctable><sram_uncorrectable_parity>1</sram_uncorrectable_parity><sram_uncorrectable_secded>2</sram_uncorrectable_secded><dram_uncorrectable>N/A</dram_uncorrectable><sram_threshold_exceeded>No</sram_threshold_exceeded></aggregate></ecc_errors></gpu></nvidia_smi_log>";
        let g = &parse_nvidia_smi_xml(v13).unwrap()[0];
        assert_eq!(g.aggregate_uncorrectable, Some(3));
        assert_eq!(g.volatile_uncorrectable, None);
        assert!(parse_nvidia_smi_xml("NVIDIA-SMI has failed").is_err());
        assert!(parse_nvidia_smi_xml("<other/>").is_err());
        assert!(parse_nvidia_smi_xml("<nvidia_smi_log><gpu>").is_err());
        assert!(parse_nvidia_smi_xml(&"<a>".repeat(10_000))
            .unwrap_err()
            .contains("deeper than 64"));
        assert_eq!(nesting("<a><b/><c>x</c></a>"), 2);
    }
}
