//! The linker script build.rs makes from link/hot-text.txt (link/script.rs): what it places, in which order, and what
//! it keeps out. Whether a release build placed the functions is what `cargo bench --bench process` prints.

#[path = "../link/script.rs"]
mod script;

use script::{linker_script, listed, without_hash};

#[test]
fn hashes_become_wildcards() {
    assert_eq!(
        without_hash("_ZN7rocmenv4host5probe5probe17h49457d7d147ff488E"),
        "_ZN7rocmenv4host5probe5probe17h*"
    );
    assert_eq!(
        without_hash("_ZN4core3fmt5write17h0123456789abcdefE.llvm.1234567890"),
        "_ZN4core3fmt5write17h*.llvm.*"
    );
    assert_eq!(
        without_hash("_RNvMs0_NtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync4once5futexNtB5_4Once4call"),
        "_RNvMs0_NtNtNtNtCs*_3std3sys4sync4once5futexNtB5_4Once4call"
    );
    // Not a hash: too short, not hex, no `E`; a C function stays as it is.
    for name in [
        "_ZN3foo17habcE",
        "_ZN3foo17hxyz456789abcdefE",
        "_ZN3foo17h0123456789abcdefX",
        "ZSTD_decompressStream",
        "main",
    ] {
        assert_eq!(without_hash(name), name);
    }
}

#[test]
fn exact_names_come_first_then_names_without_hash_once_each() {
    let list = "# tier 1\n\
                _ZN7rocmenv4main17h776452cc7c5a9979E\n\
                main\n\
                \n\
                # tier 2\n\
                _ZN7rocmenv4main17haaaaaaaaaaaaaaaaE\n";
    let script = linker_script(list);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(
        lines,
        [
            "SECTIONS {",
            "  .text.hot : {",
            "    *(.text._ZN7rocmenv4main17h776452cc7c5a9979E .text.unlikely._ZN7rocmenv4main17h776452cc7c5a9979E)",
            "    *(.text.main .text.unlikely.main)",
            "    *(.text._ZN7rocmenv4main17haaaaaaaaaaaaaaaaE .text.unlikely._ZN7rocmenv4main17haaaaaaaaaaaaaaaaE)",
            "    *(.text._ZN7rocmenv4main17h* .text.unlikely._ZN7rocmenv4main17h*)",
            "  }",
            "}",
            "INSERT BEFORE .text;",
        ]
    );
}

#[test]
fn a_line_that_is_not_a_symbol_cannot_reach_the_script() {
    let list = "ok_name\n\
                evil) } SECTIONS { /DISCARD/ : { *(*) \n\
                with space\n\
                quote\"d\n\
                semi;colon\n\
                nul\u{0}\n\
                ünïcode\n";
    let script = linker_script(list);
    assert!(script.contains("*(.text.ok_name .text.unlikely.ok_name)"));
    assert_eq!(script.matches("*(").count(), 1, "{script}");
    assert!(!script.contains("DISCARD"), "{script}");
}

#[test]
fn the_checked_in_list_gives_a_script() {
    let list = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-text.txt"))
        .expect("link/hot-text.txt (scripts/hot-text writes it)");
    let names = listed(&list).len();
    assert!(names > 100, "{names} functions listed");
    let script = linker_script(&list);
    // Every line that is not a comment is a symbol name (none left out), and a doctor run's entry points are there.
    let lines = list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count();
    assert_eq!(names, lines);
    assert!(script.matches("*(").count() >= names, "{script}");
    for f in [
        "_ZN7rocmenv4host5probe5probe17h",
        "_ZN7rocmenv3ops6doctor6report17h",
    ] {
        assert!(
            script.contains(&format!("*(.text.{f}* ")),
            "{f} without hash"
        );
    }
}
