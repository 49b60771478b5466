//! The `fslab` binary: parse the command line, run, map errors to exit codes
//! (0 ok, 1 some study cells or an engine run failed while running, 2 bad input or error,
//! 130 interrupted).

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match fslab::cli::Cli::try_parse_args() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = e.print();
                return ExitCode::from(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        2
                    } else {
                        0
                    },
                );
            }
            // One line: clap's first line plus where to look.
            let text = e.render().to_string();
            let mut lines = text.lines();
            let mut first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            // "the following required arguments were not provided:" names them on the next line.
            if first.ends_with(':') {
                if let Some(next) = lines.next() {
                    first = format!("{first} {}", next.trim());
                }
            }
            // An invalid choice names the valid ones: "use one of: summary, full".
            use clap::error::{ContextKind, ContextValue};
            if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
                if !valid.is_empty() {
                    first = format!("{first}; use one of: {}", valid.join(", "));
                }
            }
            eprintln!("fslab: {first}; see `fslab help`");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = fslab::signal::install() {
        eprintln!("fslab: cannot install the Ctrl-C handler: {e}");
        return ExitCode::from(2);
    }
    match fslab::app::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Under MPI, ranks other than 0 leave the report to rank 0.
            let quiet = e
                .downcast_ref::<fslab::error::Collective>()
                .is_some_and(|c| c.message.is_empty());
            if !quiet {
                eprintln!("fslab: {e:#}");
            }
            ExitCode::from(fslab::error::exit_code(&e))
        }
    }
}
