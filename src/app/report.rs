//! `fslab report` and `fslab compare`: load from the store, build the report model once,
//! render it with the chosen exporter, write it to stdout or `--out`.

use crate::cli::{CompareArgs, ErrorBarsArg, ReportArgs, ReportOutputArgs};
use crate::report::calibration_load::report_of;
use crate::report::view::Detail;
use crate::report::{self, select, ErrorBars, Input, Presentation, ReportData, ReportOptions};
use crate::stats::Thresholds;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Report options from the command line, checked.
pub(crate) fn options(o: &ReportOutputArgs, baseline: Option<String>) -> Result<ReportOptions> {
    if o.min_phase.is_nan() || o.min_phase < 0.0 {
        crate::bail_usage!("--min-phase {} must be zero or more seconds", o.min_phase);
    }
    crate::units::check_seconds(o.min_phase, "--min-phase").map_err(crate::error::usage)?;
    if o.max_cv.is_nan() || o.max_cv <= 0.0 || o.max_cv.is_infinite() {
        crate::bail_usage!(
            "--max-cv {} must be a positive percentage (a finite number above 0)",
            o.max_cv
        );
    }
    Ok(ReportOptions {
        baseline,
        metrics: o.metric.clone(),
        error_bars: match o.error_bars {
            ErrorBarsArg::Ci => ErrorBars::Ci,
            ErrorBarsArg::Sd => ErrorBars::Sd,
        },
        thresholds: Thresholds {
            min_phase_seconds: o.min_phase,
            max_cv: o.max_cv / 100.0,
        },
        compare_factors: None,
        warnings: o.warnings,
    })
}

/// The width the terminal report fits: `--width`, else the terminal's, else (a file, a pipe)
/// [`report::textfit::DEFAULT_WIDTH`]. A report written with `--out` is not on a terminal.
pub(crate) fn text_width(width: Option<u16>, to_file: bool) -> usize {
    let terminal =
        || terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0));
    match width {
        Some(w) => usize::from(w),
        None if to_file => report::textfit::DEFAULT_WIDTH,
        None => terminal()
            .unwrap_or(report::textfit::DEFAULT_WIDTH)
            .max(report::textfit::MIN_WIDTH),
    }
}

/// How the human formats present the report, from `--env`, `--all` and `--width`.
fn presentation(o: &ReportOutputArgs) -> Presentation {
    Presentation {
        env: o.env,
        detail: if o.all { Detail::All } else { Detail::Compact },
        width: text_width(o.width, o.out.is_some()),
    }
}

fn emit(r: &ReportData, o: &ReportOutputArgs) -> Result<()> {
    let bytes = report::exporter_for(o.format, &presentation(o)).render(r)?;
    match &o.out {
        Some(path) => std::fs::write(path, &bytes).with_context(|| {
            format!(
                "cannot write the report to {}; choose another file with --out",
                path.display()
            )
        })?,
        None => {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            // A closed pipe (`fslab report … | head`) is not an error.
            let _ = out.write_all(&bytes).and_then(|_| out.flush());
        }
    }
    Ok(())
}

/// The compact table of `fslab report ID`, printed as `p` presents it (`fslab show`, the
/// end of `fslab study run`).
pub(crate) fn print_table(store: &crate::store::Store, id: i64, p: &Presentation) -> Result<()> {
    let r = report_of(store, &id.to_string(), &ReportOptions::default(), true)?;
    let bytes = report::exporter_for(report::Format::Table, p).render(&r)?;
    crate::out!("{}", String::from_utf8_lossy(&bytes));
    Ok(())
}

/// `fslab report SOURCE`.
pub fn report(a: ReportArgs, db: Option<PathBuf>) -> Result<()> {
    let opts = options(&a.output, a.baseline.clone())?;
    let store = super::open_store_read_only(db)?;
    emit(&report_of(&store, &a.source, &opts, true)?, &a.output)
}

/// `fslab compare A B`.
pub fn compare(a: CompareArgs, db: Option<PathBuf>) -> Result<()> {
    if a.a.trim() == a.b.trim() {
        crate::bail_usage!(
            "compare needs two different sources, got '{}' twice; e.g. `fslab compare 11 12` or `fslab compare 12:0 12:3`",
            a.a
        );
    }
    let mut opts = options(&a.output, None)?;
    opts.compare_factors = Some(vec!["source".to_string()]);
    let store = super::open_store_read_only(db)?;
    let la = select::load(&store, &a.a)?;
    let lb = select::load(&store, &a.b)?;
    let title = format!(
        "{} ({}) vs {} ({})",
        la.source.name, la.source.spec, lb.source.name, lb.source.spec
    );
    let sources = vec![la.source.clone(), lb.source.clone()];
    let environments = vec![select::environment(&la), select::environment(&lb)];
    let differences = report::differences::differences(&la, &lb);
    let (data, histograms) = select::merge(la, lb)?;
    let input = Input {
        title,
        sources,
        environments,
        data: &data,
        histograms: &histograms,
        differences,
        guest_calibration: None,
    };
    let r = report::build(&input, &opts)?;
    emit(&r, &a.output)
}
