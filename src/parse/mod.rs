//! Parsers for text that hosts and tools print. Each takes `&str` and returns typed values.

#![warn(missing_docs)]

pub mod grub;
pub mod image_probe;
pub mod kernel;
pub mod kfd;
pub mod modprobe;
pub mod nvidia_proc;
pub mod nvidia_smi;
pub mod nvidia_smi_xml;
pub mod os_release;
pub mod ras;
pub mod rocm_smi;
pub mod rocminfo;

#[cfg(test)]
mod robustness {
    //! Every parser on every capture, cut short and corrupted: none may panic.

    use super::*;

    /// Runs every parser on `s`, discarding results: the test is that nothing panics.
    fn all_parsers(s: &str) {
        let _ = kernel::parse_kernel_release(s);
        let _ = grub::select(&grub::menu_entries(s), "0");
        let _ = grub::assignments(s);
        let _ = modprobe::blocks_amdgpu(s);
        let _ = grub::kernel_of_linux_line(s);
        let _ = kernel::kernel_release_from_proc_version(s);
        let _ = os_release::parse_os_release(s).point_release();
        let n = kfd::parse_kfd_properties(s);
        let _ = (n.gfx(), n.bdf(), n.is_cpu());
        let _ = rocminfo::parse_rocminfo(s);
        let _ = nvidia_proc::parse_nvidia_proc_version(s);
        let _ = nvidia_smi::parse_nvidia_smi(s);
        let _ = nvidia_smi::nvidia_smi_error(s);
        let _ = nvidia_smi_xml::parse_nvidia_smi_xml(s);
        let _ = ras::parse_err_count(s);
        let _ = ras::parse_bad_pages(s);
        let _ = ras::parse_aer(s);
        let _ = ras::parse_xgmi_error(s);
        let _ = rocm_smi::parse_rocm_smi_concise(s);
        let f = image_probe::ImageFacts::parse(s, vec![]);
        let _ = (f.rocm_version(), f.cuda_version());
    }

    #[test]
    fn captures_truncated_and_corrupted() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/captures");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            files += 1;
            all_parsers(&text);
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            for k in 1..6 {
                let cut = bounds.get(bounds.len() * k / 6).copied().unwrap_or(0);
                all_parsers(&text[..cut]);
                let mut corrupted = text[..cut].to_string();
                corrupted.push_str("\u{FFFD}\0\u{1b}[0m");
                corrupted.push_str(&text[cut..]);
                all_parsers(&corrupted);
            }
        }
        assert!(files >= 60, "only {files} captures found");
    }

    #[test]
    fn binary_junk_and_huge_input() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        all_parsers(&String::from_utf8_lossy(&bytes));
        all_parsers(&"9".repeat(100_000));
        all_parsers(&"<a>".repeat(10_000));
        all_parsers(&"GPU[1] : x: y\n".repeat(1000));
        all_parsers(&format!("{{\"card0\": {}}}", "[".repeat(200)));
    }
}
