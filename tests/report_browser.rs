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

/// Load `url` headless: the DOM after load, the browser's log, a screenshot.
fn load(chromium: &Path, url: &str, work: &Path) -> Page {
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
            "--window-size=1400,6000",
        ])
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

#[test]
fn html_report_renders_in_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ids = fixtures::build(&dir.path().join("results.db"));

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

    for (id, charts) in [(ids.iozone, 6), (ids.dbench, 5)] {
        let html = dir.path().join(format!("report-{id}.html"));
        let out = common::fslab(dir.path())
            .args(["report", &id.to_string(), "--format", "html", "--out"])
            .arg(&html)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
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
