//! Invariants of the matrices' provenance: every `source` names a vendor's or project's own page
//! or file at a fixed commit (issue 22). Each rule is its own test and lists every offender.
//!
//! Rules (see matrices/README.md, "Sources that last"):
//! - no personal fork: an `owner/repo@...` reference or a `https://github.com/owner/...` URL names
//!   an owner on `PROJECT_OWNERS`;
//! - no moving branch: no `blob/master`-style path; a `/latest/` or `/develop/` docs page only
//!   beside a pinned `owner/repo@commit:path` in the same source;
//! - no tag in the commit position: `owner/repo@X` has X of 7 to 40 hex digits;
//! - no unnamed source: a source that admits an unread page or an unnamed third party ("not read",
//!   "seen in public ...", "origin not recorded") belongs to a record that lists fields under
//!   `unconfirmed:`; no repository file is named without a commit unless the record is wholly
//!   `unconfirmed: ["*"]`.

use serde_yaml_ng::Value;

const FILES: [(&str, &str); 6] = [
    ("rocm.yaml", include_str!("../matrices/rocm.yaml")),
    ("cuda.yaml", include_str!("../matrices/cuda.yaml")),
    ("ngc.yaml", include_str!("../matrices/ngc.yaml")),
    ("gpus.yaml", include_str!("../matrices/gpus.yaml")),
    ("firmware.yaml", include_str!("../matrices/firmware.yaml")),
    // lint's list of the variables each component reads (issue 35) follows the same rules.
    ("variables.yaml", include_str!("../matrices/variables.yaml")),
];

/// GitHub owners that are the vendor or the project itself, so their repositories are primary:
/// ROCm (AMD's ROCm organisation), NVIDIA, pytorch (PyTorch's own CI and builders), torvalds
/// (the kernel's KFD device table), llvm (the AMDGPU processor table), pciutils (pci.ids, what
/// lspci reads), and projects whose own test data are captures of real tool output: influxdata
/// (Telegraf's rocm-smi / nvidia-smi fixtures), ollama (its AMD discovery code). Anything else is
/// a person's copy of someone else's facts and is not cited, except a repository on `THIRD_PARTY`.
const PROJECT_OWNERS: [&str; 8] = [
    "ROCm",
    "NVIDIA",
    "pytorch",
    "torvalds",
    "llvm",
    "pciutils",
    "influxdata",
    "ollama",
];

/// Third-party repositories whose own captures back a value no vendor page gives (ms-swift's AMD guide: rocm-smi
/// output of its MI308X host): cited only at a commit, by a record that marks what rests on them `unconfirmed:`.
const THIRD_PARTY: [&str; 1] = ["modelscope/ms-swift"];

/// Words that introduce a repository in prose ("in modelscope/ms-swift", "from owner/repo").
const REPO_INTRO: [&str; 7] = ["in", "from", "per", "of", "see", "by", "at"];

/// Branch paths that move under a citation.
const MOVING: [&str; 11] = [
    "/blob/master/",
    "/blob/main/",
    "/blob/develop/",
    "/tree/master",
    "/tree/main",
    "/tree/develop",
    "/raw/master/",
    "/raw/main/",
    "@master:",
    // A repository's release list shows whatever is newest (issue 34: two TheRock citations).
    "/releases ",
    "/releases)",
];

/// Pages that show whatever is newest; allowed only beside a pinned file.
const LATEST_PAGES: [&str; 2] = ["/latest/", "/en/develop/"];

/// Phrases that admit the vendor's page was not read or the value comes from an unnamed third party.
const UNNAMED: [&str; 8] = [
    "not read",
    "seen in public",
    "origin not recorded",
    "transcribed",
    "public dockerfile",
    "public readme",
    "public project",
    "reported from the image",
];

/// File endings that mark `owner/repo path/file.ext` as a repository file.
const FILE_ENDINGS: [&str; 12] = [
    ".md", ".rst", ".csv", ".c", ".h", ".go", ".py", ".sh", ".json", ".xml", ".yaml", ".txt",
];

/// One `source` value with where it sits and whether its record is wholly unconfirmed.
struct Source {
    at: String,
    text: String,
    wholly_unconfirmed: bool,
    /// Whether the record (or one above it) lists anything under `unconfirmed:`.
    marks_unconfirmed: bool,
}

fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    for (file, text) in FILES {
        let doc: Value = serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        walk(&doc, file.to_string(), (false, false), &mut out);
    }
    assert!(
        out.len() > 100,
        "only {} sources found: the walk is broken",
        out.len()
    );
    out
}

fn walk(v: &Value, at: String, parent: (bool, bool), out: &mut Vec<Source>) {
    match v {
        Value::Mapping(m) => {
            let unconfirmed = m.get("unconfirmed").and_then(Value::as_sequence);
            let star =
                parent.0 || unconfirmed.is_some_and(|s| s.iter().any(|x| x.as_str() == Some("*")));
            let marks = parent.1 || unconfirmed.is_some_and(|s| !s.is_empty());
            let label = [
                "version",
                "target",
                "name",
                "tag",
                "release",
                "component",
                "major",
            ]
            .iter()
            .find_map(|k| m.get(*k).and_then(value_label));
            let here = match label {
                Some(l) => format!("{at} ({l})"),
                None => at,
            };
            for (k, val) in m {
                let key = k.as_str().unwrap_or("?");
                if key == "source" {
                    if let Some(s) = val.as_str() {
                        out.push(Source {
                            at: here.clone(),
                            text: s.to_string(),
                            wholly_unconfirmed: star,
                            marks_unconfirmed: marks,
                        });
                    }
                } else {
                    walk(val, format!("{here}.{key}"), (star, marks), out);
                }
            }
        }
        Value::Sequence(s) => {
            for (i, x) in s.iter().enumerate() {
                walk(x, format!("{at}[{i}]"), parent, out);
            }
        }
        _ => {}
    }
}

fn value_label(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Every `owner/repo@ref` in a text, as (owner, repo, ref).
fn pinned_refs(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('@') {
        let before = &text[..i];
        let start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !(is_name_char(c) || c == '/'))
            .map(|(j, c)| j + c.len_utf8())
            .unwrap_or(0);
        let name = &before[start..];
        let Some((owner, repo)) = name.split_once('/') else {
            continue;
        };
        if owner.is_empty() || repo.is_empty() || repo.contains('/') {
            continue;
        }
        let after = &text[i + 1..];
        let end = after
            .find(|c: char| !(is_name_char(c) || c == '/'))
            .unwrap_or(after.len());
        let reference = after[..end].trim_end_matches('.');
        if reference.is_empty() {
            continue;
        }
        out.push((owner.to_string(), repo.to_string(), reference.to_string()));
    }
    out
}

/// Every `https://github.com/<owner>/...` owner in a text.
fn github_owners(text: &str) -> Vec<String> {
    text.match_indices("https://github.com/")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest[..rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len())].to_string()
        })
        .collect()
}

fn is_commit(r: &str) -> bool {
    (7..=40).contains(&r.len()) && r.chars().all(|c| c.is_ascii_hexdigit())
}

/// `owner/repo path/to/file.ext` with no `@commit`: a repository file nobody can pin down.
fn unpinned_files(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for pair in words.windows(2) {
        let (name, path) = (pair[0].trim_start_matches('('), pair[1]);
        if name.contains("://") || name.contains('@') || name.matches('/').count() != 1 {
            continue;
        }
        let (owner, repo) = name.split_once('/').unwrap();
        if owner.is_empty() || repo.is_empty() || !name.chars().all(|c| is_name_char(c) || c == '/')
        {
            continue;
        }
        let path = path.trim_end_matches([',', ';', ')', '.']);
        if path.contains('/')
            && !path.contains("://")
            && FILE_ENDINGS.iter().any(|e| path.ends_with(e))
        {
            out.push(format!("{name} {path}"));
        }
    }
    out
}

fn report(rule: &str, offenders: Vec<String>) {
    assert!(
        offenders.is_empty(),
        "{rule}: {} offender(s):\n  {}",
        offenders.len(),
        offenders.join("\n  ")
    );
}

#[test]
fn no_source_cites_a_personal_fork() {
    let mut bad = Vec::new();
    for s in sources() {
        let third_party_ok = |o: &str, r: &str| {
            s.marks_unconfirmed && THIRD_PARTY.contains(&format!("{o}/{r}").as_str())
        };
        let owners = pinned_refs(&s.text)
            .into_iter()
            .filter(|(o, r, _)| !third_party_ok(o, r))
            .map(|(o, _, _)| o)
            .chain(github_owners(&s.text));
        for owner in owners {
            if !PROJECT_OWNERS.contains(&owner.as_str()) {
                bad.push(format!(
                    "{}: owner `{owner}` is not a vendor or project organisation",
                    s.at
                ));
            }
        }
    }
    report("personal fork", bad);
}

#[test]
fn no_source_cites_a_moving_branch() {
    let mut bad = Vec::new();
    for s in sources() {
        for m in MOVING {
            if s.text.contains(m) {
                bad.push(format!("{}: `{m}` moves; pin a commit", s.at));
            }
        }
        if s.text.trim_end().ends_with("/releases") {
            bad.push(format!("{}: a release list moves; pin a commit", s.at));
        }
        let pinned = pinned_refs(&s.text).iter().any(|(_, _, r)| is_commit(r));
        for page in LATEST_PAGES {
            if s.text.contains(page) && !pinned {
                bad.push(format!(
                    "{}: a `{page}` page with no pinned file beside it",
                    s.at
                ));
            }
        }
    }
    report("moving branch", bad);
}

#[test]
fn no_source_puts_a_tag_where_a_commit_belongs() {
    let mut bad = Vec::new();
    for s in sources() {
        for (owner, repo, r) in pinned_refs(&s.text) {
            if !is_commit(&r) {
                bad.push(format!(
                    "{}: `{owner}/{repo}@{r}` is not a 7-40 hex commit",
                    s.at
                ));
            }
        }
    }
    report("tag in the commit position", bad);
}

#[test]
fn no_source_is_unnamed() {
    let mut bad = Vec::new();
    for s in sources() {
        let lower = s.text.to_lowercase();
        for p in UNNAMED {
            if lower.contains(p) && !s.marks_unconfirmed {
                bad.push(format!("{}: \"{p}\" with nothing under unconfirmed:", s.at));
            }
        }
        if s.wholly_unconfirmed {
            continue;
        }
        for f in unpinned_files(&s.text) {
            bad.push(format!(
                "{}: `{f}` names a repository file without a commit",
                s.at
            ));
        }
        if !s.text.contains("https://") && pinned_refs(&s.text).is_empty() {
            bad.push(format!(
                "{}: neither a URL nor owner/repo@commit:path",
                s.at
            ));
        }
    }
    report("unnamed source", bad);
}

/// `owner/repo` named in prose ("in modelscope/ms-swift") with no `@commit`, whose owner is not the vendor's or
/// the project's: a third-party repository nobody can pin down.
fn unpinned_third_party(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for pair in words.windows(2) {
        let intro = pair[0].trim_start_matches('(').to_lowercase();
        if !REPO_INTRO.contains(&intro.as_str()) || pair[1].contains('@') || pair[1].contains("://")
        {
            continue;
        }
        let name =
            pair[1].trim_matches(|c: char| matches!(c, '.' | ',' | ';' | ':' | '(' | ')' | '"'));
        let Some((owner, repo)) = name.split_once('/') else {
            continue;
        };
        let word = |w: &str| {
            w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && w.chars().all(is_name_char)
        };
        if word(owner) && word(repo) && !PROJECT_OWNERS.contains(&owner) {
            out.push(name.to_string());
        }
    }
    out
}

/// Issue 34: a third-party repository is cited at a commit, and what rests on it is marked unconfirmed.
#[test]
fn no_source_cites_a_third_party_repository_without_a_commit() {
    let mut bad = Vec::new();
    for s in sources() {
        for name in unpinned_third_party(&s.text) {
            bad.push(format!(
                "{}: `{name}` is a third-party repository named without @commit",
                s.at
            ));
        }
        for (o, r, _) in pinned_refs(&s.text) {
            if THIRD_PARTY.contains(&format!("{o}/{r}").as_str()) && !s.marks_unconfirmed {
                bad.push(format!(
                    "{}: `{o}/{r}` is third-party evidence; mark what rests on it unconfirmed",
                    s.at
                ));
            }
        }
    }
    report("third-party repository without a commit", bad);
}

/// Issue 34: every record carries a source of its own (an image may lean on its release's), so no fact is
/// unattributed; a `source:` that is empty counts as none.
#[test]
fn every_record_has_a_source() {
    let mut bad = Vec::new();
    let lists: [(&str, &str, &[&str]); 4] = [
        (
            "rocm.yaml",
            include_str!("../matrices/rocm.yaml"),
            &["releases", "left_out", "wsl"],
        ),
        (
            "cuda.yaml",
            include_str!("../matrices/cuda.yaml"),
            &["releases", "families"],
        ),
        (
            "ngc.yaml",
            include_str!("../matrices/ngc.yaml"),
            &["releases"],
        ),
        (
            "gpus.yaml",
            include_str!("../matrices/gpus.yaml"),
            &["gfx_targets", "gpus"],
        ),
    ];
    let has_source = |m: &serde_yaml_ng::Mapping| {
        m.get("source")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    let mut seen = 0;
    for (file, text, keys) in lists {
        let doc: Value = serde_yaml_ng::from_str(text).unwrap();
        for key in keys {
            for (i, rec) in doc[*key].as_sequence().into_iter().flatten().enumerate() {
                let Some(m) = rec.as_mapping() else { continue };
                seen += 1;
                let label = ["version", "release", "target", "name", "major"]
                    .iter()
                    .find_map(|k| m.get(*k).and_then(value_label))
                    .unwrap_or_default();
                if !has_source(m) {
                    bad.push(format!("{file} {key}[{i}] ({label}): no source"));
                }
                // A release's `built:` entries and `wheels:` are facts of their own.
                for b in m
                    .get("built")
                    .and_then(Value::as_sequence)
                    .into_iter()
                    .flatten()
                {
                    if !b.as_mapping().is_some_and(has_source) {
                        bad.push(format!(
                            "{file} {key}[{i}] ({label}).built: an entry has no source"
                        ));
                    }
                }
                if let Some(w) = m.get("wheels").and_then(Value::as_mapping) {
                    if !has_source(w) {
                        bad.push(format!("{file} {key}[{i}] ({label}).wheels: no source"));
                    }
                }
            }
        }
    }
    assert!(seen > 150, "only {seen} records found: the walk is broken");
    report("record without a source", bad);
}

/// Issue 34: a ROCm-on-WSL record rests on AMD's own word (its documentation, or AMD's replies in ROCm's
/// repositories), read at a fixed address: anything else there is unconfirmed as a whole.
fn wsl_source_problems(source: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let addresses: Vec<&str> = source
        .split(|c: char| c.is_whitespace() || c == ';' || c == ',' || c == '(' || c == ')')
        .filter(|w| w.starts_with("https://"))
        .collect();
    if addresses.is_empty() && pinned_refs(source).is_empty() {
        bad.push("names no address and no owner/repo@commit:path".to_string());
    }
    for a in addresses {
        let amd = a.starts_with("https://github.com/ROCm/")
            || a.starts_with("https://rocm.docs.amd.com/")
            || a.starts_with("https://www.amd.com/");
        if !amd {
            bad.push(format!("{a} is not AMD's"));
        }
        if a.contains("/latest/") {
            bad.push(format!("{a} is a moving page (name the versioned one)"));
        }
    }
    for (owner, repo, _) in pinned_refs(source) {
        if owner != "ROCm" {
            bad.push(format!("{owner}/{repo} is not AMD's"));
        }
    }
    bad
}

#[test]
fn wsl_records_rest_on_amds_word() {
    let doc: Value = serde_yaml_ng::from_str(include_str!("../matrices/rocm.yaml")).unwrap();
    let wsl = doc["wsl"].as_sequence().expect("rocm.yaml has a wsl: list");
    assert!(!wsl.is_empty());
    let mut bad = Vec::new();
    for rec in wsl {
        let release = rec["release"].as_str().unwrap_or("?");
        let whole = rec["unconfirmed"]
            .as_sequence()
            .is_some_and(|u| u.iter().any(|f| f.as_str() == Some("*")));
        let source = rec["source"].as_str().unwrap_or("");
        if whole {
            continue;
        }
        for p in wsl_source_problems(source) {
            bad.push(format!("rocm.yaml wsl {release}: {p}"));
        }
    }
    report("WSL record not resting on AMD's word", bad);
    // The rule catches what it is for.
    assert!(
        wsl_source_problems("https://github.com/daMustermann/rocm-wsl-ai (README)")
            .iter()
            .any(|p| p.contains("not AMD's"))
    );
    assert!(wsl_source_problems(
        "https://rocm.docs.amd.com/projects/radeon/en/latest/docs/compatibility/wsl/wsl_compatibility.html"
    )
    .iter()
    .any(|p| p.contains("moving")));
    assert!(!wsl_source_problems("seen somewhere").is_empty());
    assert!(
        wsl_source_problems("https://github.com/ROCm/legacy-rocm-build/issues/3402 (AMD)")
            .is_empty()
    );
}

/// Issue 34: an NGC record whose own release-notes page was not read confirms none of the fields only that page
/// would give: its Ubuntu, Python, CUDA, driver floor and data-center branches are marked unconfirmed.
#[test]
fn an_unread_ngc_page_confirms_nothing() {
    let doc: Value = serde_yaml_ng::from_str(include_str!("../matrices/ngc.yaml")).unwrap();
    let mut bad = Vec::new();
    let mut unread = 0;
    for r in doc["releases"].as_sequence().unwrap() {
        let source = r["source"].as_str().unwrap_or("");
        if !(source.contains("(not read") || source.contains("page not read")) {
            continue;
        }
        unread += 1;
        let marked: Vec<&str> = r["unconfirmed"]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for field in ["ubuntu", "python", "cuda", "min_driver"] {
            if !marked.contains(&field) && !marked.contains(&"*") {
                bad.push(format!(
                    "NGC {:?}: page not read, `{field}` not marked unconfirmed",
                    r["release"]
                ));
            }
        }
    }
    assert!(
        unread >= 20,
        "only {unread} unread records: the filter is broken"
    );
    report("unread page, field presented as confirmed", bad);
}

#[test]
fn the_rules_catch_what_they_are_for() {
    // Each detector on a line it must flag, so a rule cannot pass by matching nothing.
    let fork = pinned_refs("alanina/ROCm@c6bf8d20:docs/x.csv");
    assert_eq!(fork, [("alanina".into(), "ROCm".into(), "c6bf8d20".into())]);
    assert!(!PROJECT_OWNERS.contains(&"alanina"));
    assert_eq!(
        github_owners("see https://github.com/thamada/nvidia-smi"),
        ["thamada"]
    );
    let tag = pinned_refs("ROCm/ROCm@rocm-5.7.1:docs/release/gpu_os_support.md (OS)");
    assert!(!is_commit(&tag[0].2), "{tag:?}");
    assert!(is_commit("365b31728d384bafa59208777e4cc2fb2d2e69ca"));
    assert_eq!(
        unpinned_files("in ROCm/device-metrics-exporter internal/metricsmap.md; more"),
        ["ROCm/device-metrics-exporter internal/metricsmap.md"]
    );
    assert!(unpinned_files("ROCm/ROCm@e396b48:docs/a.csv (column 6.3.2)").is_empty());
    assert!(MOVING
        .iter()
        .any(|m| "https://github.com/torvalds/linux/blob/master/x.c".contains(m)));
    // Issue 34: the MI308X source as it was, and the pinned form it has now.
    assert_eq!(
        unpinned_third_party(
            "rocm-smi output of 8x MI308X on ROCm 7.2.0 in modelscope/ms-swift (0x74a2)"
        ),
        ["modelscope/ms-swift"]
    );
    assert!(unpinned_third_party(
        "output, modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9:docs/x.md; in ROCm/TheRock"
    )
    .is_empty());
    assert!(unpinned_third_party("see ROCm/ROCm#2720 and the rocm/pytorch repository").is_empty());
    assert!(MOVING
        .iter()
        .any(|m| "https://github.com/ROCm/TheRock/releases (x)".contains(m)));
}
