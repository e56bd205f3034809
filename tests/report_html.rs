//! `rocmenv report html` in a real browser (issue 24): Debian's Chromium, headless, opens the page of a real CPU
//! run on this machine (doctor, smoke and bench with a saved baseline), of the eight-node merge in docs/fleet.md, and
//! of reports full of hostile strings; it takes a screenshot and the page is checked: not blank, the number of SVG
//! bars and grid cells the reports make, nothing loaded from outside the file, no page wider than 1280 px, text at a
//! readable size. `ROCMENV_UPDATE_SCREENSHOTS=1` copies the screenshots into docs/ (docs/fleet.md shows them).
//!
//! CI sets ROCMENV_REQUIRE_CHROMIUM (.ci/run installs `chromium`), so a missing browser fails there; elsewhere the
//! tests say they skipped. The CPU run needs Debian's torch (ROCMENV_REQUIRE_TORCH=1 makes its absence a failure).

#[path = "common/cli.rs"]
mod cli;
#[path = "common/fleet.rs"]
mod fleet;

use cli::rocmenv;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PYTHON: &str = "/usr/bin/python3";
const WIDTH: u32 = 1280;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ok(o: &Output, codes: &[i32]) {
    assert!(
        codes.contains(&o.status.code().unwrap_or(-1)),
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Debian's Chromium, or None after saying SKIP (a failure under ROCMENV_REQUIRE_CHROMIUM).
fn chromium(test: &str) -> Option<PathBuf> {
    match which::which("chromium") {
        Ok(p) => Some(p),
        Err(_) => {
            assert!(
                std::env::var_os("ROCMENV_REQUIRE_CHROMIUM").is_none(),
                "ROCMENV_REQUIRE_CHROMIUM is set but chromium is not on PATH (apt-get install chromium)"
            );
            eprintln!("SKIP {test}: chromium is not on PATH (apt-get install chromium)");
            None
        }
    }
}

/// Runs headless Chromium on `url` with a fresh profile and no way out: every host name resolves to nothing.
fn browse(browser: &Path, profile: &Path, extra: &[String], url: &str) -> Output {
    let o = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "chromium: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// What the page measured of itself in the browser.
#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Measured {
    scroll_width: f64,
    bars: usize,
    cells: usize,
    scripts: usize,
    resources: usize,
    outside: Vec<String>,
    title: String,
    body_font_px: f64,
    smallest_font_px: f64,
    grid_right: f64,
    scroll_height: f64,
    widest_box: f64,
}

/// A copy of the page with its policy removed and a measuring script added (the page itself has neither), so a
/// load the page tried would show in `resources`; dumped after the script ran.
const MEASURE: &str = r#"<script>
(function () {
  var px = function (el) { return parseFloat(getComputedStyle(el).fontSize); };
  var small = 100;
  document.querySelectorAll('td, th, p, span, text, li, figcaption').forEach(function (el) {
    if (el.textContent.trim()) { small = Math.min(small, px(el)); }
  });
  var outside = [];
  document.querySelectorAll('[src], [href], [srcset], [data], [poster], link').forEach(function (el) {
    outside.push(el.outerHTML.slice(0, 120));
  });
  var grid = document.querySelector('.scroll');
  var widest = 0;
  document.querySelectorAll('body *').forEach(function (el) {
    var o = getComputedStyle(el).overflowX;
    if (o === 'auto' || o === 'scroll') { widest = Math.max(widest, el.scrollWidth); }
  });
  var m = {
    scroll_width: document.documentElement.scrollWidth,
    bars: document.querySelectorAll('svg rect.bar').length,
    cells: document.querySelectorAll('table.grid td.cell').length,
    scripts: document.querySelectorAll('script').length,
    resources: performance.getEntriesByType('resource').length,
    outside: outside,
    title: document.title,
    body_font_px: px(document.body),
    smallest_font_px: small,
    grid_right: grid ? grid.getBoundingClientRect().right : 0,
    scroll_height: document.documentElement.scrollHeight,
    widest_box: widest
  };
  var pre = document.createElement('pre');
  pre.id = 'rocmenv-measured';
  pre.textContent = JSON.stringify(m);
  document.body.appendChild(pre);
})();
</script>"#;

struct Seen {
    shot: PathBuf,
    measured: Measured,
}

/// Screenshot of `page` at 1280 px wide (`height` tall), and its own measurements.
fn look(browser: &Path, dir: &Path, page: &Path, height: u32) -> Seen {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains("default-src 'none'"),
        "the page forbids loads"
    );
    let shot = dir.join(format!(
        "{}.png",
        page.file_stem().unwrap().to_string_lossy()
    ));
    browse(
        browser,
        &dir.join("profile-shot"),
        &[
            format!("--window-size={WIDTH},{height}"),
            format!("--screenshot={}", shot.display()),
        ],
        &format!("file://{}", page.display()),
    );
    let policy = html
        .lines()
        .find(|l| l.contains("Content-Security-Policy"))
        .unwrap();
    let probe = dir.join("measure.html");
    std::fs::write(
        &probe,
        html.replacen(policy, "", 1)
            .replacen("</body>", &format!("{MEASURE}</body>"), 1),
    )
    .unwrap();
    let o = browse(
        browser,
        &dir.join("profile-dom"),
        &[
            format!("--window-size={WIDTH},{height}"),
            "--dump-dom".into(),
        ],
        &format!("file://{}", probe.display()),
    );
    let dom = String::from_utf8_lossy(&o.stdout);
    let json = dom
        .split("<pre id=\"rocmenv-measured\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the measuring script did not run:\n{dom}"))
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Seen {
        shot,
        measured: serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}")),
    }
}

/// The share of pixels that are not (near) white, and the number of distinct colours, of a PNG.
fn ink(png_path: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.width, WIDTH, "screenshot width");
    let step = info.color_type.samples();
    let mut inked = 0usize;
    let mut colours = std::collections::HashSet::new();
    let px = &buf[..info.buffer_size()];
    for p in px.chunks(step) {
        if p[..3].iter().any(|&c| c < 235) {
            inked += 1;
        }
        colours.insert((p[0] / 16, p[1] / 16, p[2] / 16));
    }
    (inked as f64 / (px.len() / step) as f64, colours.len())
}

/// The checks every page passes.
fn assert_sound(seen: &Seen) {
    let m = &seen.measured;
    assert!(
        m.outside.is_empty(),
        "elements that could load: {:?}",
        m.outside
    );
    assert_eq!(m.resources, 0, "the page loaded {} resources", m.resources);
    assert_eq!(m.scripts, 1, "only the measuring script runs: {m:?}");
    assert!(
        m.scroll_width <= WIDTH as f64,
        "the page is {} px wide at {WIDTH}: {m:?}",
        m.scroll_width
    );
    assert!(m.grid_right <= WIDTH as f64, "{m:?}");
    assert!(
        m.widest_box <= 1.5 * WIDTH as f64,
        "a scroll box is {} px wide, over 1.5 screens: {m:?}",
        m.widest_box
    );
    assert!(
        m.body_font_px >= 14.0 && m.smallest_font_px >= 11.0,
        "{m:?}"
    );
    let (share, colours) = ink(&seen.shot);
    assert!(
        share > 0.02 && colours >= 6,
        "the screenshot looks blank: {share:.4} inked, {colours} colours"
    );
}

fn update_docs(seen: &Seen, name: &str) {
    if std::env::var_os("ROCMENV_UPDATE_SCREENSHOTS").is_some() {
        std::fs::copy(&seen.shot, root().join("docs/images").join(name)).unwrap();
    }
}

fn read(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

use fleet::EIGHT;

/// Grid cells a merge JSON makes: a cell per row and node.
fn cells_of(merge: &serde_json::Value) -> usize {
    merge["checks"].as_array().unwrap().len() * merge["nodes"].as_array().unwrap().len()
}

#[test]
fn the_eight_node_merge_renders() {
    let Some(browser) = chromium("eight-node merge") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, tree) in EIGHT.iter().enumerate() {
        let t = root().join("tests/fixtures/hosts").join(tree);
        let node = format!("gpu-node-{}", i + 1);
        let o = rocmenv(
            &["doctor", "--sysroot", t.to_str().unwrap(), "--json"],
            Some(&node),
        );
        ok(&o, &[0, 1]);
        let f = dir.path().join(format!("{node}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let page = dir.path().join("fleet-merge.html");
    let json = dir.path().join("merged.json");
    let mut args: Vec<&str> = vec!["report", "merge", "--format", "json", "-o"];
    args.push(json.to_str().unwrap());
    args.extend(["--html", page.to_str().unwrap()]);
    args.extend(files.iter().map(String::as_str));
    ok(&rocmenv(&args, None), &[1]);
    let seen = look(&browser, dir.path(), &page, 2300);
    assert_sound(&seen);
    assert_eq!(seen.measured.cells, cells_of(&read(&json)));
    assert!(seen.measured.cells >= 8 * 20, "{:?}", seen.measured);
    assert_eq!(seen.measured.bars, 0, "doctor reports have no benchmarks");
    update_docs(&seen, "report-fleet-merge.png");
}

#[test]
fn a_real_cpu_run_renders_with_its_charts() {
    let Some(browser) = chromium("real CPU run") else {
        return;
    };
    let torch = Command::new(PYTHON)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !torch {
        assert!(std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"));
        eprintln!("SKIP a_real_cpu_run_renders_with_its_charts: {PYTHON} cannot import torch");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let node = Some("ci-cpu-1");
    let o = rocmenv(&["doctor", "--json"], node);
    ok(&o, &[0, 1]);
    std::fs::write(d("doctor.json"), &o.stdout).unwrap();
    let smoke = [
        "smoke",
        "--host",
        "--python",
        PYTHON,
        "--vendor",
        "cpu",
        "--only",
        "environment,numerics,gemm,bandwidth",
        "--json",
    ];
    let mut args = smoke.to_vec();
    let smoke_json = d("smoke.json");
    args.push(&smoke_json);
    ok(&rocmenv(&args, node), &[0]);
    let bench = [
        "bench", "--host", "--python", PYTHON, "--vendor", "cpu", "--model", "gemm", "--iters", "3",
    ];
    let base = d("baseline.yaml");
    let mut first = bench.to_vec();
    first.extend(["--save-baseline", &base]);
    ok(&rocmenv(&first, node), &[0]);
    let bench_json = d("bench.json");
    let mut second = bench.to_vec();
    let bench_html = d("bench.html");
    second.extend([
        "--baseline",
        &base,
        "--json",
        &bench_json,
        "--html",
        &bench_html,
    ]);
    ok(&rocmenv(&second, node), &[0]);
    // `bench --html` writes the same page of its one report: its cells and its bars.
    let page_of_bench = std::fs::read_to_string(&bench_html).unwrap();
    assert!(
        page_of_bench.contains("<rect class=\"bar m\"")
            && page_of_bench.contains("<td class=\"cell pass\"")
    );
    let comparisons = read(Path::new(&bench_json))["comparisons"]
        .as_array()
        .unwrap()
        .len();
    assert!(comparisons >= 1, "gemm against the baseline");
    let page = d("cpu-run.html");
    let o = rocmenv(
        &[
            "report",
            "html",
            "--title",
            "rocmenv on a CPU runner",
            "-o",
            &page,
            &d("doctor.json"),
            &smoke_json,
            &bench_json,
        ],
        None,
    );
    ok(&o, &[0, 1]);
    let merged = d("merged.json");
    ok(
        &rocmenv(
            &[
                "report",
                "merge",
                "--format",
                "json",
                "-o",
                &merged,
                &d("doctor.json"),
                &smoke_json,
                &bench_json,
            ],
            None,
        ),
        &[0, 1],
    );
    let seen = look(&browser, dir.path(), Path::new(&page), 1900);
    assert_sound(&seen);
    assert_eq!(seen.measured.cells, cells_of(&read(Path::new(&merged))));
    // Each comparison: the measured bar and the baseline's (a CPU has no datasheet peak).
    assert_eq!(seen.measured.bars, comparisons * 2, "{:?}", seen.measured);
    assert_eq!(seen.measured.title, "rocmenv on a CPU runner");
    update_docs(&seen, "report-cpu-run.png");
}

#[test]
fn hostile_strings_stay_text_and_keep_the_layout() {
    let Some(browser) = chromium("hostile strings") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let evil =
        "<script>document.title='pwned'</script>\"'><img src=x onerror=\"document.title='pwned'\">";
    let long = "x".repeat(4000);
    let doc = serde_json::json!({
        "schema_version": 1, "node": format!("{evil}{long}"), "host": {"os": {"pretty_name": long}}, "summary": {},
        "checks": [
            {"id": "gpu.present", "status": "fail", "summary": format!("{evil} {long}"), "fix": format!("{long}</td></tr></table>")},
            {"id": "devices.kfd", "status": "warn", "summary": evil, "fix": evil}
        ]
    });
    let bench = serde_json::json!({
        "schema_version": 1, "kind": "bench", "level": "standard", "node": "n2",
        "device": {"kind": "cpu", "name": evil, "count": 1, "devices": []},
        "tests": [{"name": long, "status": "pass", "params": {}, "metrics": [{"name": evil, "value": 3.5, "unit": "GB/s"}]}]
    });
    let a = dir.path().join("evil.json");
    let b = dir.path().join("bench.json");
    std::fs::write(&a, doc.to_string()).unwrap();
    std::fs::write(&b, bench.to_string()).unwrap();
    let page = dir.path().join("hostile.html");
    let o = rocmenv(
        &[
            "report",
            "html",
            "--title",
            evil,
            "-o",
            page.to_str().unwrap(),
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        None,
    );
    ok(&o, &[1]);
    let seen = look(&browser, dir.path(), &page, 1200);
    assert_sound(&seen);
    assert_ne!(seen.measured.title, "pwned");
    assert!(
        seen.measured.title.starts_with("<script>"),
        "the title is the text"
    );
    assert_eq!(seen.measured.cells, 6, "3 rows × 2 nodes, the grid intact");
    assert_eq!(seen.measured.bars, 1);
}

/// Issue 36: 2,000 doctor reports make a page a person can read: failures first, grouped, naming every node that
/// failed or warned; no grid; no scroll box wider than 1.5 screens; under 20,000 px tall at 1280 px.
#[test]
fn two_thousand_nodes_make_a_readable_page() {
    let Some(browser) = chromium("2,000 nodes") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let files = fleet::write_fleet(&reports, 2000);
    let page = dir.path().join("fleet-2000.html");
    let mut args: Vec<&str> = vec!["report", "html", "-o", page.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    ok(&rocmenv(&args, None), &[1]);
    let html = std::fs::read_to_string(&page).unwrap();
    let problems =
        &html[html.find("id=\"problems\"").unwrap()..html.find("id=\"counts\"").unwrap()];
    let troubled = fleet::troubled(&files);
    assert!(troubled.len() >= 1000, "{}", troubled.len());
    for node in &troubled {
        assert!(
            problems.contains(node.as_str()),
            "{node} is not named among the failures"
        );
    }
    assert!(html.contains("<code>doctor docker.gpu-runtime</code> <span class=\"count\">250 nodes</span><span class=\"msg\">&lt;node&gt;: Docker"));
    let seen = look(&browser, dir.path(), &page, 1000);
    assert_sound(&seen);
    let m = &seen.measured;
    assert_eq!(m.cells, 0, "no grid over 32 nodes");
    assert!(
        m.scroll_height < 20000.0,
        "the page is {} px tall: {m:?}",
        m.scroll_height
    );
    eprintln!("2,000 nodes: {} bytes, {m:?}", html.len());
    update_docs(&seen, "report-fleet-2000.png");
}
