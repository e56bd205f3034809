//! `HostFacts`: what the probe learned about a host. Fields that could not be read are `None`, with a reason in `unavailable`.

use crate::gfx::GfxTarget;
use crate::vendor::Vendor;
use crate::version::{DriverVersion, Reported, Version};
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything the probe learned.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostFacts {
    /// `live` or `sysroot`.
    pub mode: String,
    /// The kernel.
    pub kernel: Option<KernelFacts>,
    /// The distribution, from os-release.
    pub os: Option<OsFacts>,
    /// AMD and NVIDIA GPUs, in PCI address order.
    pub gpus: Vec<Gpu>,
    /// The amdgpu kernel module; `None` when there is no AMD GPU and no module.
    pub amdgpu_driver: Option<AmdgpuDriver>,
    /// The NVIDIA kernel module, when loaded.
    pub nvidia_driver: Option<NvidiaDriver>,
    /// The ROCm install `/opt/rocm` points at (else the newest one).
    pub rocm: Option<RocmInstall>,
    /// Every ROCm install found under `/opt/rocm*`.
    pub rocm_installs: Vec<RocmInstall>,
    /// The CUDA toolkit `/usr/local/cuda` points at (else the newest one).
    pub cuda: Option<CudaInstall>,
    /// Every CUDA toolkit under `/usr/local/cuda*`.
    pub cuda_installs: Vec<CudaInstall>,
    /// `/dev/kfd`, render nodes and NVIDIA nodes.
    pub device_nodes: DeviceNodes,
    /// Who runs rocmenv.
    pub user: Option<UserFacts>,
    /// Tools found on PATH (`None` when absent).
    pub tools: BTreeMap<String, Option<String>>,
    /// Total memory in bytes.
    pub memory_bytes: Option<u64>,
    /// The CPU.
    pub cpu: Option<CpuFacts>,
    /// Seconds since boot (`/proc/uptime`): turns error counts since boot into rates.
    pub uptime_seconds: Option<f64>,
    /// The GPU-related environment variables that are set.
    pub env: BTreeMap<String, String>,
    /// True on Windows Subsystem for Linux 2.
    pub wsl: bool,
    /// Container-engine configuration found in files.
    pub container: ContainerConfig,
    /// Output of external tools, with `--deep`.
    pub evidence: Evidence,
    /// The boot: kernel command line, tuning, the kernel that boots next, Secure Boot, loaded GPU firmware.
    pub boot: BootFacts,
    /// Facts that could not be read, and why.
    pub unavailable: Vec<Unavailable>,
}

/// What the boot set up and what the next boot will do. Each field is `None` when its file could not be read; the
/// reason is in `unavailable` under the fact named on the field.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BootFacts {
    /// `/proc/cmdline`, split into words (fact `cmdline`).
    pub cmdline: Option<Vec<String>>,
    /// `/proc/sys/kernel/numa_balancing` (fact `numa_balancing`).
    pub numa_balancing: Option<String>,
    /// The parameters the loaded amdgpu module has, `/sys/module/amdgpu/parameters/` (fact `amdgpu parameters`).
    pub amdgpu_parameters: Option<Vec<String>>,
    /// The kernel that boots next (fact `next kernel`).
    pub next_kernel: Option<NextKernel>,
    /// The out-of-tree GPU modules and headers of the running kernel and of the next one.
    pub modules: Vec<KernelModules>,
    /// The UEFI `SecureBoot` variable: `Some(true)` when on (fact `secure boot`).
    pub secure_boot: Option<bool>,
    /// The firmware versions amdgpu loaded, per AMD GPU.
    pub firmware: Vec<GpuFirmware>,
    /// Where amdgpu is blacklisted: `FILE:LINE` with the line for each modprobe.d line (modprobe.d(5)), and each
    /// kernel parameter as `the kernel command line: PARAM`. Only doctor's driver check and fix read it, so it stays
    /// out of the JSON (and its schema).
    #[serde(skip)]
    pub amdgpu_blacklist: Vec<String>,
}

/// The kernel that boots next, and how that was found.
#[derive(Debug, Clone, Serialize)]
pub struct NextKernel {
    /// Its release, as `uname -r` will print it.
    pub release: String,
    /// Where it came from (`saved_entry of /boot/grub/grubenv in /boot/grub/grub.cfg`, `newest /boot/vmlinuz-*`).
    pub how: String,
}

/// The out-of-tree GPU modules one kernel has, and its headers (what dkms needs to build them).
#[derive(Debug, Clone, Serialize)]
pub struct KernelModules {
    /// The kernel release.
    pub release: String,
    /// The path of its out-of-tree amdgpu module (`/lib/modules/K/updates/dkms/amdgpu.ko.zst`, a dkms build
    /// directory), when one exists.
    pub amdgpu: Option<String>,
    /// The path of its out-of-tree NVIDIA module, when one exists.
    pub nvidia: Option<String>,
    /// The path of its headers (`/lib/modules/K/build`, `/usr/src/linux-headers-K`), when installed.
    pub headers: Option<String>,
}

/// The loaded firmware of one AMD GPU, from `fw_version/*_fw_version` of its PCI device.
#[derive(Debug, Clone, Serialize)]
pub struct GpuFirmware {
    /// The GPU's PCI address.
    pub pci_address: String,
    /// Component (`mes`, `mes_kiq`, …) → version, as the file shows it (`0x00000083`) and as a number.
    pub versions: BTreeMap<String, FirmwareVersion>,
}

/// One firmware version: the text of the sysfs file and its value.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareVersion {
    /// The file that said it.
    pub path: String,
    /// As the file says it.
    pub text: String,
    /// Its value.
    pub value: u32,
}

/// A fact that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    /// Which fact (`kernel`, `os`, `gpu 0000:03:00.0 pcie`, …).
    pub fact: String,
    /// Why.
    pub reason: String,
}

/// The running kernel.
#[derive(Debug, Clone, Serialize)]
pub struct KernelFacts {
    /// As `uname -r` prints it.
    pub release: String,
    /// `major.minor.patch`.
    pub version: String,
    /// The flavour after the ABI (`generic`, `aws`, `el9_4`…), when there is one.
    pub flavour: Option<String>,
    /// `major.minor`, what the matrices list.
    pub series: String,
}

/// The distribution, from os-release.
#[derive(Debug, Clone, Serialize)]
pub struct OsFacts {
    /// `ID`.
    pub id: Option<String>,
    /// `ID_LIKE`.
    pub id_like: Vec<String>,
    /// `VERSION_ID`.
    pub version_id: Option<String>,
    /// The point release when the distro says it (Ubuntu `22.04.4`).
    pub point_release: Option<String>,
    /// `PRETTY_NAME`.
    pub pretty_name: Option<String>,
    /// `VERSION_CODENAME`.
    pub codename: Option<String>,
    /// `UBUNTU_CODENAME`: the Ubuntu a derivative is built on.
    pub ubuntu_codename: Option<String>,
}

/// A GPU on the PCI bus. AMD GPUs carry `gfx`, NVIDIA GPUs `compute_capability`.
#[derive(Debug, Clone)]
pub struct Gpu {
    /// `amd` or `nvidia` (from the PCI id, so never `cpu`).
    pub vendor: Vendor,
    /// The GPU's number within its vendor, as the runtime counts: AMD in KFD topology node order (what
    /// `HIP_VISIBLE_DEVICES` / `ROCR_VISIBLE_DEVICES` index), NVIDIA in PCI bus order (what `nvidia-smi`,
    /// `docker run --gpus device=N` and `CUDA_DEVICE_ORDER=PCI_BUS_ID` index). See `number_gpus`.
    pub index: usize,
    /// PCI address, `0000:03:00.0`.
    pub pci_address: String,
    /// PCI device id, `0x744c`.
    pub device_id: String,
    /// Marketing name from the matrices, when the id is known.
    pub name: Option<String>,
    /// AMD gfx target, from KFD (or, with no KFD node, from the matrices: see `gfx_source`).
    pub gfx: Option<GfxTarget>,
    /// Where `gfx` came from: `kfd` or `pci-id`.
    pub gfx_source: Option<String>,
    /// NVIDIA compute capability, from the matrices.
    pub compute_capability: Option<String>,
    /// VRAM in bytes.
    pub vram_bytes: Option<u64>,
    /// `/dev/dri/renderD<n>`.
    pub render_node: Option<String>,
    /// KFD topology node index.
    pub kfd_node: Option<u32>,
    /// True for an APU's integrated GPU.
    pub integrated: Option<bool>,
    /// NUMA node (`None` when the platform does not say).
    pub numa_node: Option<i64>,
    /// PCIe link.
    pub pcie: Option<PcieLink>,
    /// The kernel driver bound to the device (`amdgpu`, `nvidia`, `vfio-pci`).
    pub driver: Option<String>,
    /// Health counters: amdgpu RAS, PCIe AER of the GPU and its bridges, NVIDIA memory health (`--deep`).
    pub health: GpuHealth,
}

impl Gpu {
    /// A GPU found at `pci_address` with `device_id`, nothing else known yet: the probes fill in the rest.
    pub fn new(vendor: Vendor, pci_address: String, device_id: String) -> Gpu {
        Gpu {
            vendor,
            index: 0,
            pci_address,
            device_id,
            name: None,
            gfx: None,
            gfx_source: None,
            compute_capability: None,
            vram_bytes: None,
            render_node: None,
            kfd_node: None,
            integrated: None,
            numa_node: None,
            pcie: None,
            driver: None,
            health: GpuHealth::default(),
        }
    }
}

/// A GPU's error counters, from sysfs (AMD RAS, PCIe AER) and, with `--deep`, from `nvidia-smi -q -x`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GpuHealth {
    /// amdgpu's `ras/` directory and `xgmi_error`; `None` when the GPU has neither (no RAS: consumer cards).
    pub ras: Option<AmdRas>,
    /// AER counters of the GPU, then of each bridge above it, nearest first; empty when the kernel keeps none.
    pub aer: Vec<AerDevice>,
    /// What `nvidia-smi -q -x` says of this GPU's memory (`--deep`, or a recorded run); `None` when not read.
    pub nvidia: Option<NvidiaMemory>,
}

/// The amdgpu module parameter that sets the bad-page threshold (`-1`/`-2`: the driver's formula, `0`: retirement
/// off, `N > 0`: N pages).
pub const AMDGPU_BAD_PAGE_THRESHOLD: &str = "/sys/module/amdgpu/parameters/bad_page_threshold";

/// The `--deep` tool run whose XML gives NVIDIA memory health (and the key its recorded output has in a tree).
pub const NVIDIA_SMI_XML: &str = "nvidia-smi -q -x";

/// amdgpu's RAS counters of one GPU (`/sys/bus/pci/devices/<BDF>/ras/`, which is `/sys/class/drm/cardN/device/ras/`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct AmdRas {
    /// The `ras/` directory read; `None` when the GPU has none (only `xgmi_error` was found).
    pub dir: Option<String>,
    /// Each readable `<block>_err_count` file.
    pub blocks: Vec<RasBlock>,
    /// `gpu_vram_bad_pages`; `None` when absent (bad-page retirement off, or a GPU without it).
    pub bad_pages: Option<RasBadPages>,
    /// `xgmi_error` next to `ras/` (`None` when absent): XGMI link errors since it was last read.
    pub xgmi_error: Option<u64>,
    /// `/sys/module/amdgpu/parameters/bad_page_threshold`, when readable.
    pub bad_page_threshold_param: Option<i64>,
    /// Files that exist but could not be read or parsed: `path: why`.
    pub unreadable: Vec<String>,
}

/// One `<block>_err_count` file.
#[derive(Debug, Clone, Serialize)]
pub struct RasBlock {
    /// `umc`, `gfx`, `xgmi_wafl`, …
    pub block: String,
    /// The file read.
    pub path: String,
    /// Uncorrectable errors.
    pub ue: u64,
    /// Correctable errors.
    pub ce: u64,
}

/// `gpu_vram_bad_pages`: retired VRAM pages by flag.
#[derive(Debug, Clone, Serialize)]
pub struct RasBadPages {
    /// The file read.
    pub path: String,
    /// `R`: reserved.
    pub reserved: u64,
    /// `P`: pending reservation.
    pub pending: u64,
    /// `F`: could not be reserved.
    pub failed: u64,
    /// True when the file went past the read cap: the counts are a lower bound.
    pub truncated: bool,
}

impl RasBadPages {
    /// Every page listed.
    pub fn total(&self) -> u64 {
        self.reserved + self.pending + self.failed
    }
}

/// The AER counters of one PCI device (a GPU or a bridge above it).
#[derive(Debug, Clone, Serialize)]
pub struct AerDevice {
    /// Its PCI address.
    pub pci_address: String,
    /// True for the GPU itself, false for an upstream bridge.
    pub is_gpu: bool,
    /// `aer_dev_fatal`.
    pub fatal: Option<AerFile>,
    /// `aer_dev_nonfatal`.
    pub nonfatal: Option<AerFile>,
    /// `aer_dev_correctable`.
    pub correctable: Option<AerFile>,
    /// Files that exist but could not be read or parsed: `path: why`.
    pub unreadable: Vec<String>,
}

/// One `aer_dev_*` file.
#[derive(Debug, Clone, Serialize)]
pub struct AerFile {
    /// The file read.
    pub path: String,
    /// Its `TOTAL_ERR_*` count.
    pub total: u64,
    /// Kinds with a non-zero count (`Receiver Error 2`).
    pub kinds: Vec<(String, u64)>,
}

/// NVIDIA memory health from `nvidia-smi -q -x`; `None` fields said `N/A`.
#[derive(Debug, Clone, Serialize)]
pub struct NvidiaMemory {
    /// Where it came from (`nvidia-smi -q -x`, exit 0 / recorded).
    pub source: String,
    /// Uncorrectable ECC errors since the driver loaded.
    pub volatile_uncorrectable: Option<u64>,
    /// Uncorrectable ECC errors over the GPU's life.
    pub aggregate_uncorrectable: Option<u64>,
    /// Pages retired (single- and double-bit), on GPUs that retire pages.
    pub retired_pages: Option<u64>,
    /// A page waits for a reset to be retired.
    pub retirement_pending: Option<bool>,
    /// A row remap waits for a GPU reset.
    pub remap_pending: Option<bool>,
    /// A row could not be remapped.
    pub remap_failure: Option<bool>,
}

impl Gpu {
    /// How every message names a GPU: its number, as `--gpu`, `--device` and `HIP_VISIBLE_DEVICES` take it, with
    /// the name and the PCI address (`GPU 0 (AMD Instinct MI210, 0000:e3:00.0)`).
    pub fn label(&self) -> String {
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", self.vendor.label(), self.device_id));
        format!("GPU {} ({name}, {})", self.index, self.pci_address)
    }
}

impl Serialize for Gpu {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("vendor", &self.vendor)?;
        m.serialize_entry("index", &self.index)?;
        m.serialize_entry("pci_address", &self.pci_address)?;
        m.serialize_entry("device_id", &self.device_id)?;
        m.serialize_entry("name", &self.name)?;
        match self.vendor {
            Vendor::Amd => {
                m.serialize_entry("gfx", &self.gfx)?;
                m.serialize_entry("gfx_source", &self.gfx_source)?;
            }
            Vendor::Nvidia => m.serialize_entry("compute_capability", &self.compute_capability)?,
            // Never probed: a GPU's vendor comes from its PCI id (`Vendor::from_pci`).
            Vendor::Cpu => {}
        }
        m.serialize_entry("vram_bytes", &self.vram_bytes)?;
        m.serialize_entry("render_node", &self.render_node)?;
        m.serialize_entry("kfd_node", &self.kfd_node)?;
        m.serialize_entry("integrated", &self.integrated)?;
        m.serialize_entry("numa_node", &self.numa_node)?;
        m.serialize_entry("pcie", &self.pcie)?;
        m.serialize_entry("driver", &self.driver)?;
        m.serialize_entry("health", &self.health)?;
        m.end()
    }
}

/// A PCIe link, current and maximum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PcieLink {
    /// GT/s now.
    pub current_speed_gts: Option<f64>,
    /// Lanes now.
    pub current_width: Option<u32>,
    /// GT/s the device and slot can do.
    pub max_speed_gts: Option<f64>,
    /// Lanes the device and slot can do.
    pub max_width: Option<u32>,
}

/// The amdgpu kernel module.
#[derive(Debug, Clone, Serialize)]
pub struct AmdgpuDriver {
    /// True when `/sys/module/amdgpu` exists.
    pub loaded: bool,
    /// `/sys/module/amdgpu/version`: present for amdgpu-dkms, absent for the in-tree driver.
    pub version: Option<Reported<Version>>,
    /// `dkms` or `in-tree`.
    pub kind: Option<String>,
    /// `/sys/module/amdgpu/initstate` (`live`).
    pub initstate: Option<String>,
}

/// The NVIDIA kernel module.
#[derive(Debug, Clone, Serialize)]
pub struct NvidiaDriver {
    /// Driver version, `550.127.05`.
    pub version: DriverVersion,
    /// True for the open kernel module.
    pub open: bool,
    /// True under WSL 2: the driver is the Windows one, as `/usr/lib/wsl/lib/nvidia-smi` names it (`546.33`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_windows: bool,
}

/// A ROCm install.
#[derive(Debug, Clone, Serialize)]
pub struct RocmInstall {
    /// `6.2.0` (from `.info/version`, build suffix removed).
    pub version: Reported<Version>,
    /// `/opt/rocm-6.2.0`, or `/opt/rocm/core-10.1` for the ROCm Core SDK.
    pub path: String,
    /// `legacy` (`/opt/rocm-X.Y.Z`) or `core-sdk` (`/opt/rocm/core-X.Y`, amdrocm-* packages).
    pub stream: &'static str,
    /// Where the version came from: `.info/version`, or the dpkg database (`amdrocm-core10.1 10.1.0-3`).
    pub evidence: String,
}

/// A CUDA toolkit.
#[derive(Debug, Clone, Serialize)]
pub struct CudaInstall {
    /// `12.6.2`.
    pub version: Reported<Version>,
    /// `/usr/local/cuda-12.6`.
    pub path: String,
}

/// Device nodes a GPU workload opens.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceNodes {
    /// `/dev/kfd`.
    pub kfd: Option<DeviceNode>,
    /// `/dev/dri/renderD*`.
    pub render: Vec<DeviceNode>,
    /// `/dev/dri/card*`: only `fix`'s CDI spec needs them, so they stay out of the JSON (and its schema).
    #[serde(skip)]
    pub card: Vec<DeviceNode>,
    /// `/dev/nvidiactl`, `/dev/nvidia<N>`.
    pub nvidia: Vec<DeviceNode>,
    /// `/dev/dxg` (WSL2).
    pub dxg: bool,
    /// Which of `DXG_CONTAINER_LIBS` exist (only when `/dev/dxg` does): only run and doctor's container check read
    /// them, so they stay out of the JSON (and its schema).
    #[serde(skip)]
    pub dxg_libs: Vec<String>,
}

/// One device node: mode, owner and whether the user can open it read-write.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceNode {
    /// Host path.
    pub path: String,
    /// Mode bits, `0660`.
    pub mode: Option<String>,
    /// Owning group id.
    pub gid: Option<u32>,
    /// Owning group name, from `/etc/group`.
    pub group: Option<String>,
    /// Whether the user can read and write it; `None` when the user is unknown.
    pub accessible: Option<bool>,
}

/// Who runs rocmenv.
#[derive(Debug, Clone, Serialize)]
pub struct UserFacts {
    /// Login name.
    pub name: Option<String>,
    /// User id.
    pub uid: u32,
    /// Group ids (primary and supplementary).
    #[serde(skip)]
    pub gids: Vec<u32>,
    /// Group names.
    pub groups: Vec<String>,
}

/// The CPU.
#[derive(Debug, Clone, Serialize)]
pub struct CpuFacts {
    /// Model name.
    pub model: Option<String>,
    /// Logical CPUs.
    pub logical_cores: usize,
}

/// Container-engine configuration read from files.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ContainerConfig {
    /// Runtimes named in `/etc/docker/daemon.json`.
    pub docker_runtimes: Vec<String>,
    /// `default-runtime` in daemon.json.
    pub docker_default_runtime: Option<String>,
    /// CDI spec files in `/etc/cdi` and `/var/run/cdi`, with their kinds.
    pub cdi_specs: Vec<CdiSpec>,
}

/// A CDI spec file.
#[derive(Debug, Clone, Serialize)]
pub struct CdiSpec {
    /// Host path.
    pub path: String,
    /// `kind:` (`nvidia.com/gpu`, `amd.com/gpu`) when readable.
    pub kind: Option<String>,
}

/// Outputs of external tools (with `--deep`), parsed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    /// `rocminfo`.
    pub rocminfo: Option<ToolEvidence>,
    /// `rocm-smi` (its default concise table).
    pub rocm_smi: Option<ToolEvidence>,
    /// `nvidia-smi`.
    pub nvidia_smi: Option<ToolEvidence>,
    /// The HIP runtime's own device list: asked only under WSL when rocminfo named no GPU.
    pub hip: Option<HipSeen>,
}

/// What the HIP runtime listed. Under WSL the runtime reaches the GPU through `/dev/dxg` and names it as PyTorch does
/// (`torch.cuda.get_device_name` is HIP's device name), so it names a GPU rocminfo's capture may lack. A host tree
/// records it as `hip:` in `.rocmenv/recorded.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HipSeen {
    /// `hipRuntimeGetVersion`, decoded (`6.1.40093`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_version: Option<String>,
    /// The devices, in HIP's order.
    #[serde(default)]
    pub devices: Vec<HipSeenDevice>,
    /// The error that stopped the listing (`hipErrorNoDevice: no ROCm-capable device is detected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One device as HIP lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HipSeenDevice {
    /// `hipDeviceProp_t.name` (`AMD Radeon RX 6800 XT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `hipDeviceGetPCIBusId`, when it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// `hipDeviceTotalMem`, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total: Option<u64>,
}

/// What one tool said.
#[derive(Debug, Clone, Serialize)]
pub struct ToolEvidence {
    /// GPU agents or devices it listed (gfx names or product names).
    pub devices: Vec<String>,
    /// Errors it printed, in rocmenv's words.
    pub errors: Vec<String>,
    /// How it ended (shown as `exit 0`, `timed out after 10 s`, `recorded`, or why it was not run).
    pub outcome: ToolOutcome,
}

/// How running an external tool ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutcome {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signalled,
    /// It ran past the timeout and was killed.
    TimedOut {
        /// The timeout, in seconds.
        seconds: u64,
    },
    /// Waiting for it failed.
    WaitFailed(String),
    /// Its output was recorded in the host tree (`--sysroot`), not run.
    Recorded,
    /// It was not run, and why.
    NotRun(String),
}

impl ToolOutcome {
    /// True when its output is worth reading: it exited (with any code) or was recorded.
    pub fn has_output(&self) -> bool {
        matches!(self, ToolOutcome::Exited(_) | ToolOutcome::Recorded)
    }

    /// True when it exited 0 or was recorded.
    pub fn succeeded(&self) -> bool {
        matches!(self, ToolOutcome::Exited(0) | ToolOutcome::Recorded)
    }

    /// True when it was killed for running past the timeout.
    pub fn timed_out(&self) -> bool {
        matches!(self, ToolOutcome::TimedOut { .. })
    }
}

impl std::fmt::Display for ToolOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolOutcome::Exited(c) => write!(f, "exit {c}"),
            ToolOutcome::Signalled => f.write_str("killed by a signal"),
            ToolOutcome::TimedOut { seconds } => write!(f, "timed out after {seconds} s"),
            ToolOutcome::WaitFailed(e) => write!(f, "could not be waited for: {e}"),
            ToolOutcome::Recorded => f.write_str("recorded"),
            ToolOutcome::NotRun(why) => f.write_str(why),
        }
    }
}

/// The JSON report keeps the outcome as the one string it always was.
impl Serialize for ToolOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl HostFacts {
    /// Records a fact that could not be read.
    pub fn unavailable(&mut self, fact: impl Into<String>, reason: impl Into<String>) {
        self.unavailable.push(Unavailable {
            fact: fact.into(),
            reason: reason.into(),
        });
    }

    /// The reason a fact is missing, if recorded.
    pub fn why_unavailable(&self, fact: &str) -> Option<&str> {
        self.unavailable
            .iter()
            .find(|u| u.fact == fact)
            .map(|u| u.reason.as_str())
    }

    /// AMD GPUs.
    pub fn amd_gpus(&self) -> impl Iterator<Item = &Gpu> {
        self.gpus.iter().filter(|g| g.vendor == Vendor::Amd)
    }

    /// NVIDIA GPUs.
    pub fn nvidia_gpus(&self) -> impl Iterator<Item = &Gpu> {
        self.gpus.iter().filter(|g| g.vendor == Vendor::Nvidia)
    }

    /// The vendor the host's GPUs suggest: AMD first (a ROCm tool), then NVIDIA, else the CPU.
    pub fn vendor(&self) -> Vendor {
        if self.amd_gpus().next().is_some() {
            Vendor::Amd
        } else if self.nvidia_gpus().next().is_some() {
            Vendor::Nvidia
        } else {
            Vendor::Cpu
        }
    }
}

/// The one check of a GPU number (`run --gpu`, `env --device`, `smoke --gpu`, the engine's device map): GPU `n` of
/// `vendor` (`None`: of any vendor) among the GPUs `have` names in order (`GPU 0 (…, 0000:03:00.0)`), or why there is
/// none. Every command says the same words for the same mistake.
pub fn check_gpu_number(n: usize, vendor: Option<Vendor>, have: &[String]) -> Result<(), String> {
    if n < have.len() {
        return Ok(());
    }
    let whose = vendor
        .map(|v| format!("{} ", v.label()))
        .unwrap_or_default();
    Err(match vendor {
        Some(Vendor::Cpu) => format!("the CPU uses no GPU, so GPU {n} cannot be given"),
        _ if have.is_empty() => format!("GPU {n} does not exist; this host has no {whose}GPU"),
        _ => format!(
            "GPU {n} does not exist; this host's {whose}GPUs are {}",
            have.join(", ")
        ),
    })
}

impl HostFacts {
    /// GPU `n` of `vendor`, by its number within the vendor (doctor's `#`), checked by [`check_gpu_number`].
    pub fn gpu_number(&self, vendor: Vendor, n: usize) -> Result<&Gpu, String> {
        let gpus: Vec<&Gpu> = self.gpus.iter().filter(|g| g.vendor == vendor).collect();
        let have: Vec<String> = gpus.iter().map(|g| g.label()).collect();
        check_gpu_number(n, Some(vendor), &have)?;
        Ok(gpus[n])
    }
}
