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
            // One line: clap's message, its suggestion, and the subcommand's help.
            eprintln!(
                "fslab: {}",
                fslab::cli::errors::one_line(&e, &std::env::args_os().collect::<Vec<_>>())
            );
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
            // Under MPI, ranks other than 0 leave the report to rank 0; inside a guest, the
            // host says that the study was interrupted.
            let quiet = e
                .downcast_ref::<fslab::error::Collective>()
                .is_some_and(|c| c.message.is_empty())
                || (fslab::runner::guest::inside()
                    && e.downcast_ref::<fslab::signal::Interrupted>().is_some());
            if !quiet {
                eprintln!("fslab: {e:#}");
            }
            ExitCode::from(fslab::error::exit_code(&e))
        }
    }
}
