//! The documentation a newcomer reads first (issue 25): docs/commands.md's table of contents matches its sections,
//! no command line is spliced into prose, each heading sits above its own text, and the README stays short with an
//! install section.

use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Headings outside code blocks, with their level.
fn headings(md: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for l in md.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let level = l.chars().take_while(|&c| c == '#').count();
        if (1..=4).contains(&level) && l[level..].starts_with(' ') {
            out.push((level, l[level..].trim().to_string()));
        }
    }
    out
}

/// Issue 25: the contents lacked smoke/bench, k8s and report merge; every `##` section is listed, every link lands.
#[test]
fn the_table_of_contents_matches_the_sections() {
    let md = read("docs/commands.md");
    let anchors: Vec<String> = headings(&md).iter().map(|(_, h)| slug(h)).collect();
    let toc: Vec<String> = md
        .split("](#")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap().to_string())
        .collect();
    for link in &toc {
        assert!(
            anchors.contains(link),
            "#{link} is no heading of docs/commands.md"
        );
    }
    for (level, h) in headings(&md) {
        if level == 2 {
            assert!(
                toc.contains(&slug(&h)),
                "section `{h}` is missing from the table of contents"
            );
        }
    }
}

/// Issue 25: a `run --result` example sat spliced into a sentence about datasheet peaks. A shell line (`$ …`) appears
/// only inside a code block.
#[test]
fn no_command_line_is_spliced_into_prose() {
    for doc in ["docs/commands.md", "README.md"] {
        let mut fenced = false;
        for (n, l) in read(doc).lines().enumerate() {
            if l.starts_with("```") {
                fenced = !fenced;
            } else if !fenced {
                assert!(
                    !l.starts_with("$ "),
                    "{doc}:{}: a shell line outside a code block: {l}",
                    n + 1
                );
            }
        }
    }
}

/// Issue 25: the `run --probe` heading sat above the text about `-v`; the first paragraph under it is about --probe.
#[test]
fn the_probe_heading_opens_the_probe_text() {
    let md = read("docs/commands.md");
    let after = md.split("### `rocmenv run --probe`").nth(1).unwrap();
    let first = after.trim_start().split("\n\n").next().unwrap();
    assert!(first.starts_with("`--probe`"), "{first}");
}

/// Issue 25: README's set-up was `cargo run` and the developer tests: it has an install section, and stays short.
#[test]
fn readme_has_an_install_section_and_stays_short() {
    let md = read("README.md");
    assert!(md.len() < 15_000, "README.md is {} bytes", md.len());
    let install = md
        .split("## Install")
        .nth(1)
        .expect("an `## Install` section");
    let install = install.split("\n## ").next().unwrap();
    assert!(install.contains("cargo install --path ."), "{install}");
    assert!(install.contains("scripts/build-portable"), "{install}");
}
