//! fslab's mdtest engine with mdtest's command line and output, for `bench/mdtest.sh` until
//! `fslab mdtest` exists: runs the engine as one rank on `-d` and prints what mdtest prints
//! (the lines before the table, `SUMMARY rate`, `SUMMARY time` with `-P`).
//!
//!     cargo run --release --example mdtest_core -- -n 10000 -d /mnt/test/out
//!     FSLAB_MDTEST_BACKEND=null cargo run --release --example mdtest_core -- -n 1000000
//!
//! `FSLAB_MDTEST_BACKEND=null` runs the same walks without system calls (fslab's own cost
//! per operation). `FSLAB_MDTEST_RANKS=N` runs N ranks as threads of this process (the
//! engine's `Threads` team) until the MPI layer calls the engine with real ranks. Exit codes: 0 done, 2 bad flags or a refused directory, 1 a failed run,
//! 130 interrupted.

use fslab::workload::mdtest::{
    self, report, Backend, Iteration, Mdtest, MdtestParams, Options, Solo, Team, Threads,
};
use fslab::workload::{Quiet, Target, Workload};
use std::path::Path;
use std::process::ExitCode;

/// What a run gave one rank: every iteration, the random order's seed, notes for the user.
type Outcome = (Vec<Iteration>, Option<u32>, Vec<String>);

/// Every iteration of `p` in `dir` on this rank of `team`, each one repetition of the engine
/// as `fslab mdtest` runs them.
fn run<T: Team>(p: &MdtestParams, dir: &Path, team: T, opts: Options) -> anyhow::Result<Outcome> {
    let mut w = Mdtest::with_team(p.clone(), opts, team)?;
    let target = Target::new(dir);
    for _ in 0..p.iterations {
        w.prepare(&target)?;
        w.run(&target, &Quiet)?;
        w.cleanup(&target)?;
    }
    let notes = w.finish();
    Ok((w.iterations().to_vec(), w.seed(), notes))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "usage: mdtest_core [mdtest flags]   (fslab's mdtest engine, one rank; see src/workload/mdtest/parse.rs for the flags)"
        );
        return ExitCode::SUCCESS;
    }
    let inv = match mdtest::parse(&args) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("mdtest_core: {}", e.render(mdtest::words()));
            return ExitCode::from(2);
        }
    };
    let lay = match inv.params.validate() {
        Ok(l) => l,
        Err(e) => {
            let e = fslab::workload::param::in_words(e, mdtest::words());
            eprintln!("mdtest_core: {e}");
            return ExitCode::from(2);
        }
    };
    let backend = match std::env::var("FSLAB_MDTEST_BACKEND").as_deref() {
        Ok("null") => Backend::Null,
        _ => Backend::Fs,
    };
    let ranks: u32 = match std::env::var("FSLAB_MDTEST_RANKS") {
        Err(_) => 1,
        Ok(v) => match v.parse() {
            Ok(n) if n >= 1 => n,
            _ => {
                eprintln!(
                    "mdtest_core: FSLAB_MDTEST_RANKS={v}: give a number of ranks of 1 or more"
                );
                return ExitCode::from(2);
            }
        },
    };
    if let Err(e) = fslab::signal::install() {
        eprintln!("mdtest_core: cannot install the signal handlers: {e}");
        return ExitCode::from(1);
    }
    let started = chrono::Local::now();
    let warnings = inv
        .params
        .notes()
        .iter()
        .map(|n| n.render(mdtest::words()))
        .collect();
    // The file system the test directories go on (-d may not exist yet).
    let fs_of = if inv.dir.exists() {
        inv.dir.clone()
    } else {
        inv.dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    print!(
        "{}",
        report::preamble(&report::Preamble {
            started: report::timestamp(started),
            ranks,
            nodes: 1,
            command: report::command_line("mdtest_core", &args),
            warnings,
            fs: report::fs_lines(&fs_of).map(|s| s.replacen(
                &fs_of.display().to_string(),
                &inv.dir.display().to_string(),
                1
            )),
            seed: None,
            tasks: report::tasks_line(&inv.params, &lay, ranks),
        })
    );
    let opts = Options {
        backend,
        // -d a@b: rank r in directory r mod 2, as mdtest.
        dirs: inv.dirs.len() as u32,
        ..Options::default()
    };
    let result: anyhow::Result<Outcome> = if ranks == 1 {
        run(&inv.params, &inv.dir, Solo, opts)
    } else {
        let team = Threads::new(ranks);
        std::thread::scope(|s| {
            let handles: Vec<_> = team
                .into_iter()
                .map(|t| {
                    let (p, dir) = (&inv.params, inv.dir_of(t.rank()));
                    s.spawn(move || run(p, dir, t, opts))
                })
                .collect();
            let mut outs: Vec<anyhow::Result<Outcome>> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a rank panicked")))
                })
                .collect();
            // Rank 0's outcome speaks for all (its error names every failed rank).
            outs.swap_remove(0)
        })
    };
    match result {
        Ok((iterations, seed, notes)) => {
            if let Some(seed) = seed {
                println!("random seed: {seed}");
            }
            print!("{}", report::tables(&iterations, &inv.params, inv.print));
            print!("{}", report::finished(chrono::Local::now()));
            for n in notes {
                eprintln!("mdtest_core: {n}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mdtest_core: {e:#}");
            ExitCode::from(match fslab::error::exit_code(&e) {
                2 if e.downcast_ref::<fslab::error::UsageError>().is_none() => 1,
                c => c,
            })
        }
    }
}
