//! What an executable needs from the system it runs on: its architecture, its dynamic loader, its libraries and the
//! newest glibc symbol version it asks for. `run --probe` reads this from the binary it is about to copy into an
//! image, so a mismatch (an arm64 image, an image whose glibc is older than the build's) is named before the
//! container starts, and the portable build can be checked by a test instead of by hand.

use object::elf;
use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader};
use object::{Architecture, FileKind, Object};
use std::fmt;

/// A glibc symbol version such as `2.17` or `2.3.4`: compared part by part.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GlibcVersion(pub Vec<u32>);

impl GlibcVersion {
    /// Parses the part after `GLIBC_` (`2.34`); `None` for other tags such as `GLIBC_PRIVATE`.
    pub fn parse(s: &str) -> Option<Self> {
        let parts: Option<Vec<u32>> = s.split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| !p.is_empty()).map(GlibcVersion)
    }
}

impl fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

/// The facts about one executable that decide where it can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executable {
    /// The architecture in the names images use (`amd64`, `arm64`, `ppc64le`, `s390x`), or the ELF's own name.
    pub arch: String,
    /// The dynamic loader (`PT_INTERP`), e.g. `/lib64/ld-linux-x86-64.so.2`; `None` for a static executable.
    pub interpreter: Option<String>,
    /// The `DT_NEEDED` libraries, in file order.
    pub needed: Vec<String>,
    /// The newest `GLIBC_x.y` version any needed symbol asks for; `None` when it asks for none.
    pub glibc: Option<GlibcVersion>,
}

impl Executable {
    /// True when the executable is statically linked (no dynamic loader).
    pub fn is_static(&self) -> bool {
        self.interpreter.is_none()
    }

    /// True when it is linked against musl (its loader is `ld-musl-*`).
    pub fn is_musl(&self) -> bool {
        self.interpreter
            .as_deref()
            .is_some_and(|i| i.contains("ld-musl"))
    }
}

/// Reads `bytes` as an ELF executable; the error says what is wrong in a few words.
pub fn inspect(bytes: &[u8]) -> Result<Executable, String> {
    match FileKind::parse(bytes) {
        Ok(FileKind::Elf64) => read::<elf::FileHeader64<object::Endianness>>(bytes),
        Ok(FileKind::Elf32) => read::<elf::FileHeader32<object::Endianness>>(bytes),
        Ok(other) => Err(format!("not an ELF executable ({other:?})")),
        Err(_) => Err("not an ELF executable".into()),
    }
}

fn read<H: FileHeader<Endian = object::Endianness>>(bytes: &[u8]) -> Result<Executable, String> {
    let bad = |e: object::read::Error| format!("malformed ELF: {e}");
    let file = ElfFile::<H>::parse(bytes).map_err(bad)?;
    let endian = file.endian();
    let arch = match file.architecture() {
        Architecture::X86_64 => "amd64".to_string(),
        Architecture::Aarch64 => "arm64".to_string(),
        Architecture::PowerPc64 => "ppc64le".to_string(),
        Architecture::S390x => "s390x".to_string(),
        Architecture::I386 => "386".to_string(),
        Architecture::Arm => "arm".to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    let mut interpreter = None;
    for ph in file.elf_program_headers() {
        if let Some(i) = ph.interpreter(endian, bytes).map_err(bad)? {
            interpreter = Some(String::from_utf8_lossy(i).into_owned());
        }
    }
    let sections = file.elf_section_table();
    let mut needed = Vec::new();
    if let Some((dynamic, link)) = sections.dynamic(endian, bytes).map_err(bad)? {
        let strings = sections.strings(endian, bytes, link).map_err(bad)?;
        for d in dynamic {
            if d.tag(endian) == elf::DT_NEEDED {
                let name = d.string(endian, strings).map_err(bad)?;
                needed.push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    let mut glibc: Option<GlibcVersion> = None;
    if let Some((mut needs, link)) = sections.gnu_verneed(endian, bytes).map_err(bad)? {
        let strings = sections.strings(endian, bytes, link).map_err(bad)?;
        while let Some((_, mut aux)) = needs.next().map_err(bad)? {
            while let Some(a) = aux.next().map_err(bad)? {
                let name = String::from_utf8_lossy(a.name(endian, strings).map_err(bad)?);
                let version = name.strip_prefix("GLIBC_").and_then(GlibcVersion::parse);
                if version.as_ref() > glibc.as_ref() {
                    glibc = version;
                }
            }
        }
    }
    Ok(Executable {
        arch,
        interpreter,
        needed,
        glibc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn this_test_binary() -> Vec<u8> {
        std::fs::read(std::env::current_exe().unwrap()).unwrap()
    }

    #[test]
    fn reads_the_running_test_binary() {
        let exe = inspect(&this_test_binary()).unwrap();
        assert_eq!(
            exe.arch,
            match std::env::consts::ARCH {
                "x86_64" => "amd64",
                "aarch64" => "arm64",
                other => other,
            }
        );
        if cfg!(all(target_env = "gnu", not(target_feature = "crt-static"))) {
            assert!(!exe.is_static() && !exe.is_musl(), "{exe:?}");
            assert!(exe.needed.iter().any(|n| n == "libc.so.6"), "{exe:?}");
            // Rust's std itself needs at least glibc 2.17 symbols; any real build asks for some.
            assert!(exe.glibc >= GlibcVersion::parse("2.2.5"), "{:?}", exe.glibc);
        }
    }

    #[test]
    fn glibc_versions_compare_part_by_part() {
        let v = |s| GlibcVersion::parse(s).unwrap();
        assert!(v("2.34") > v("2.17"));
        assert!(v("2.3.4") > v("2.3"));
        assert!(v("2.10") > v("2.9"));
        assert_eq!(v("2.17").to_string(), "2.17");
        assert_eq!(GlibcVersion::parse("PRIVATE"), None);
        assert_eq!(GlibcVersion::parse(""), None);
    }

    #[test]
    fn refuses_what_is_not_an_executable_without_panicking() {
        assert_eq!(
            inspect(b"#!/bin/sh\necho hi\n").unwrap_err(),
            "not an ELF executable"
        );
        assert!(inspect(&[]).is_err());
        let full = this_test_binary();
        // Every cut of the header and the first tables either parses or says it is malformed: never a panic.
        for len in (0..4096).step_by(7).chain([full.len() / 2, full.len() - 1]) {
            let _ = inspect(&full[..len]);
        }
        let mut corrupt = full.clone();
        for b in corrupt.iter_mut().skip(64).step_by(97).take(4000) {
            *b ^= 0x5a;
        }
        let _ = inspect(&corrupt);
    }
}
