//! The HTML report in a real headless browser (Debian's `chromium`): the page loads without
//! console messages, the SVG charts are in the DOM, and a screenshot shows them (not a blank
//! page: many non-white pixels, and pixels in the charts' bar colour).
//!
//! Chromium is required: when it is missing the test runs `scripts/install-deps --test`
//! (as root), and fails loudly if it is still missing, unless FSLAB_SKIP_BROWSER=1 is set on
//! purpose.

mod common;
#[path = "common/report_fixtures.rs"]
mod fixtures;

use std::path::{Path, PathBuf};
use std::process::Command;

fn find_chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {name}"))
            .output()
            .ok()?;
        let p = String::from_utf8(out.stdout).ok()?;
        let p = p.trim();
        (!p.is_empty()).then(|| PathBuf::from(p))
    })
}

/// The browser, installing it when missing; `None` only when skipped on purpose.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = find_chromium() {
        return Some(p);
    }
    if std::env::var("FSLAB_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("SKIPPED report_browser: chromium missing (FSLAB_SKIP_BROWSER=1)");
        return None;
    }
    if common::is_root() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-deps");
        let st = Command::new(&script).arg("--test").status();
        eprintln!("ran {} --test: {st:?}", script.display());
    }
    match find_chromium() {
        Some(p) => Some(p),
        None => panic!(
            "the HTML report test needs chromium; install it with `sudo scripts/install-deps --test` (or apt-get install chromium), or set FSLAB_SKIP_BROWSER=1 to skip on purpose"
        ),
    }
}

struct Page {
    dom: String,
    log: String,
    png: Vec<u8>,
}

/// Load `url` headless in a window 1400 px wide: the DOM after load, the browser's log, a
/// screenshot.
fn load(chromium: &Path, url: &str, work: &Path) -> Page {
    load_at(chromium, url, work, 1400)
}

/// Load `url` headless in a window `width` px wide.
fn load_at(chromium: &Path, url: &str, work: &Path, width: u32) -> Page {
    let profile = tempfile::tempdir_in(work).unwrap();
    let shot = work.join("shot.png");
    let _ = std::fs::remove_file(&shot);
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={width},6000"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {log}");
    Page {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        png: std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}): {log}")),
        log,
    }
}

/// Lines the page logged to the console (errors, warnings, anything).
fn console_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// (pixels that are not near-white, pixels near the charts' second colour #e69f00, which
/// nothing but the charts uses, all pixels).
fn pixel_counts(png: &[u8]) -> (usize, usize, usize) {
    let dec = png::Decoder::new(png);
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    let mut ink = 0;
    let mut orange = 0;
    for px in buf[..info.buffer_size()].chunks(step) {
        let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
        if r < 235 || g < 235 || b < 235 {
            ink += 1;
        }
        if (r - 230).abs() < 12 && (g - 159).abs() < 12 && b < 24 {
            orange += 1;
        }
    }
    (ink, orange, (info.width * info.height) as usize)
}

/// A temporary directory holding the fixtures' results database.
fn fixture_store() -> (tempfile::TempDir, fixtures::Ids) {
    let dir = tempfile::tempdir().unwrap();
    let ids = fixtures::build(&dir.path().join("results.db"));
    (dir, ids)
}

/// `fslab report ID --format html` written to `dir/report-ID.html`.
fn html_report(dir: &Path, id: i64) -> PathBuf {
    let html = dir.join(format!("report-{id}.html"));
    let out = common::fslab(dir)
        .args(["report", &id.to_string(), "--format", "html", "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    html
}

#[test]
fn html_report_renders_in_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (dir, ids) = fixture_store();

    // The console check must be able to fail: a page that logs an error is caught.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><html><body><script>console.error('probe-error')</script></body></html>",
    )
    .unwrap();
    let page = load(
        &chromium,
        &format!("file://{}", probe.display()),
        dir.path(),
    );
    assert!(
        console_lines(&page.log)
            .iter()
            .any(|l| l.contains("probe-error")),
        "chromium's console log is not visible here, so errors could not be detected: {}",
        page.log
    );

    // Each: the forest plot of its comparisons, then its charts.
    for (id, charts) in [(ids.iozone, 7), (ids.dbench, 6)] {
        let html = html_report(dir.path(), id);
        let page = load(&chromium, &format!("file://{}", html.display()), dir.path());
        let console = console_lines(&page.log);
        assert!(console.is_empty(), "console messages: {console:#?}");
        assert!(page.dom.contains("<h1>"), "page did not load: {}", page.dom);
        assert_eq!(
            page.dom.matches("<svg").count(),
            charts,
            "SVG charts in the DOM"
        );
        assert!(page.dom.contains("<rect") && page.dom.contains("<text"));
        let (ink, orange, total) = pixel_counts(&page.png);
        eprintln!("report {id}: {ink} of {total} pixels inked, {orange} in chart orange");
        // Tables, text and charts cover well over 3% of a 1400×6000 screenshot; the second
        // series colour fills bars, lines and dots (hundreds of pixels at least).
        assert!(
            ink * 100 > total * 3,
            "screenshot looks blank: {ink} of {total} pixels"
        );
        assert!(
            orange > 300,
            "no chart colour in the screenshot: {orange} pixels"
        );
    }
}

/// Measures the page once it is laid out and writes them into the DOM as JSON (the report
/// itself has no script): how far the page overflows the window sideways, the smallest chart
/// text as rendered (its font size times the SVG's scale on the page), the tables and charts
/// that stick out of the window without a scrolling box around them, and the boxes that
/// scroll because their content is wider.
const MEASURE: &str = r#"<script>
(function () {
  var vw = window.innerWidth;
  var over = document.documentElement.scrollWidth - vw;
  var minFont = 1e9, texts = 0;
  document.querySelectorAll('svg text').forEach(function (t) {
    var svg = t.ownerSVGElement;
    var w = svg.width.baseVal.value;
    var scale = w ? svg.getBoundingClientRect().width / w : 1;
    var px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (px < minFont) minFont = px;
    texts++;
  });
  var unboxed = 0;
  document.querySelectorAll('table, figure svg').forEach(function (el) {
    if (el.getBoundingClientRect().right <= vw + 1) return;
    var box = el.closest('.scroll, figure');
    var ok = box && getComputedStyle(box).overflowX === 'auto' &&
      box.getBoundingClientRect().right <= vw + 1;
    if (!ok) unboxed++;
  });
  var scrolling = 0;
  document.querySelectorAll('.scroll, figure').forEach(function (b) {
    if (b.scrollWidth > b.clientWidth + 1) scrolling++;
  });
  var pre = document.createElement('pre');
  pre.id = 'fslab-measure';
  pre.textContent = JSON.stringify({vw: vw, over: over, minFont: minFont, texts: texts,
    unboxed: unboxed, scrolling: scrolling});
  document.body.appendChild(pre);
})();
</script>"#;

/// The measurements [`MEASURE`] left in a page's DOM.
fn measured(dom: &str) -> serde_json::Value {
    let start = dom
        .find("<pre id=\"fslab-measure\">")
        .unwrap_or_else(|| panic!("the measuring script did not run: {dom}"));
    let rest = &dom[start + "<pre id=\"fslab-measure\">".len()..];
    let json = &rest[..rest.find("</pre>").unwrap()];
    serde_json::from_str(&json.replace("&quot;", "\"")).unwrap()
}

/// The page at 1400 px (a desktop) and at 800 px (a laptop half-screen): nothing overflows
/// the page sideways (wide tables and charts scroll inside their own box), and chart text is
/// at least 12 px as rendered (charts are never shrunk to fit). The screenshots are kept in
/// the target directory (`report-<id>-<width>.png`) for a person to look at.
#[test]
fn html_report_reads_at_1400_and_800_px() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (dir, ids) = fixture_store();
    let keep = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for id in [ids.iozone, ids.dbench, ids.journal] {
        let html = html_report(dir.path(), id);
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(
            !page.contains("<p class=\"meta\">Parameters: <code>{"),
            "parameters as raw JSON"
        );
        assert!(
            page.contains("<table class=\"params\">"),
            "no parameter table"
        );
        let probe = dir.path().join(format!("measure-{id}.html"));
        std::fs::write(
            &probe,
            page.replace("</body>", &format!("{MEASURE}</body>")),
        )
        .unwrap();
        for width in [1400u32, 800] {
            let p = load_at(
                &chromium,
                &format!("file://{}", probe.display()),
                dir.path(),
                width,
            );
            let console = console_lines(&p.log);
            assert!(console.is_empty(), "console messages: {console:#?}");
            let m = measured(&p.dom);
            eprintln!("report {id} at {width} px: {m}");
            let shot = keep.join(format!("report-{id}-{width}.png"));
            std::fs::write(&shot, &p.png).unwrap();
            assert_eq!(m["vw"], width, "window width: {m}");
            assert!(
                m["over"].as_f64().unwrap() <= 0.0,
                "the page overflows sideways: {m}"
            );
            assert_eq!(
                m["unboxed"], 0,
                "tables or charts stick out of the page: {m}"
            );
            assert!(m["texts"].as_u64().unwrap() > 0, "no chart text: {m}");
            assert!(
                m["minFont"].as_f64().unwrap() >= 12.0,
                "chart text under 12 px as rendered: {m}"
            );
            if width == 800 && id == ids.iozone {
                // IOzone's 13 tests are wider than 800 px: their tables scroll in their boxes.
                assert!(
                    m["scrolling"].as_u64().unwrap() > 0,
                    "nothing scrolls at 800 px: {m}"
                );
            }
        }
    }
}
