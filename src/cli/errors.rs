//! A command-line error in one line: clap's message, its "did you mean" tip, the valid
//! choices, and the help to read: the subcommand's own (`fslab fdtree --help`), not the
//! top-level list.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The one line `fslab` prints (after `fslab: `) for a command-line error clap reported about
/// `args` (the whole command line, program name first).
pub fn one_line(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
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
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) {
        if !valid.is_empty() {
            first = format!("{first}; use one of: {}", valid.join(", "));
        }
    }
    // clap's suggestions: "did you mean '--levels'?" (an option, a subcommand or a value).
    let mut suggested: Vec<String> = Vec::new();
    for kind in [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
    ] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => suggested.push(s.clone()),
            Some(ContextValue::Strings(v)) => suggested.extend(v.iter().cloned()),
            _ => {}
        }
    }
    let path = command_path(args);
    if !suggested.is_empty() {
        let quoted: Vec<String> = suggested.iter().map(|s| format!("'{s}'")).collect();
        first = format!("{first}; did you mean {}?", quoted.join(" or "));
    } else if let Some(hint) = subcommand_option(e, &path) {
        first = format!("{first}; {hint}");
    } else if e.kind() == ErrorKind::UnknownArgument {
        // clap's other tips ("to pass '-x' as a value, use '-- -x'").
        if let Some(tip) = text.lines().find_map(|l| l.trim().strip_prefix("tip: ")) {
            first = format!("{first}; {tip}");
        }
    }
    format!("{first}; see `{path} --help`")
}

/// For an unknown `--option` given to `fslab` itself (`fslab --levle`), the subcommands that
/// have it or one within two edits of it: "'--levels' is an option of `fslab fdtree`".
fn subcommand_option(e: &clap::Error, path: &str) -> Option<String> {
    use clap::CommandFactory;
    if e.kind() != ErrorKind::UnknownArgument || path != "fslab" {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let given = given.strip_prefix("--")?.split('=').next()?;
    let cmd = crate::cli::Cli::command();
    let mut best: Option<(usize, String, String)> = None;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        for long in sub.get_arguments().filter_map(|a| a.get_long()) {
            let d = edit_distance(given, long);
            if d <= 2 && best.as_ref().map_or(true, |b| d < b.0) {
                best = Some((d, long.to_string(), sub.get_name().to_string()));
            }
        }
    }
    let (_, long, sub) = best?;
    Some(format!(
        "'--{long}' is an option of `fslab {sub}`, after the subcommand"
    ))
}

/// Levenshtein distance (short option names only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The (sub)command the arguments reach: `fslab study run` for `fslab --db x.db study run
/// --bogus`. Walks the subcommand names, skipping options and the values they take.
fn command_path(args: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command();
    cmd.build();
    let mut path = vec!["fslab".to_string()];
    let mut globals: Vec<clap::Arg> = Vec::new();
    let mut it = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if let Some(opt) = a.strip_prefix('-').filter(|o| !o.is_empty()) {
            if opt.starts_with('-') && opt.contains('=') {
                continue;
            }
            let known = super::common::named(cmd.get_arguments().chain(globals.iter()), &a);
            if known.is_some_and(|x| x.get_action().takes_values()) {
                it.next();
            }
            continue;
        }
        match cmd.find_subcommand(&a).cloned() {
            Some(sub) => {
                globals.extend(cmd.get_arguments().filter(|x| x.is_global_set()).cloned());
                path.push(sub.get_name().to_string());
                cmd = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("fslab")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect()
    }

    fn line(args: &[&str]) -> String {
        let e = Cli::try_parse_args_from(os(args)).expect_err("must be refused");
        one_line(&e, &os(args))
    }

    #[test]
    fn suggestions_are_kept() {
        let l = line(&["fdtree", "--levle", "3"]);
        assert!(
            l.contains("'--levle'") && l.contains("did you mean '--levels'?"),
            "{l}"
        );
        assert!(l.ends_with("see `fslab fdtree --help`"), "{l}");
        let l = line(&["studdy"]);
        assert!(l.contains("did you mean 'study'?"), "{l}");
        assert!(l.ends_with("see `fslab --help`"), "{l}");
        let l = line(&["study", "runn", "x.toml"]);
        assert!(l.contains("did you mean 'run'?"), "{l}");
        assert!(l.ends_with("see `fslab study --help`"), "{l}");
    }

    #[test]
    fn an_engine_option_before_the_subcommand_names_its_subcommand() {
        let l = line(&["--levle"]);
        assert!(
            l.contains("'--levels' is an option of `fslab fdtree`"),
            "{l}"
        );
        assert!(l.ends_with("see `fslab --help`"), "{l}");
        let l = line(&["--zzzzzzzzzz"]);
        assert!(!l.contains("is an option of"), "{l}");
        assert_eq!(edit_distance("levle", "levels"), 2);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }

    #[test]
    fn errors_point_to_the_subcommands_help() {
        let l = line(&["dbench"]);
        assert!(l.contains("<NCLIENTS>"), "{l}");
        assert!(l.ends_with("see `fslab dbench --help`"), "{l}");
        let l = line(&["study", "run"]);
        assert!(l.ends_with("see `fslab study run --help`"), "{l}");
        let l = line(&["report", "1", "--format", "pdf"]);
        assert!(l.contains("use one of: "), "{l}");
        assert!(l.ends_with("see `fslab report --help`"), "{l}");
        assert_eq!(line(&["fdtree", "--bogus"]).lines().count(), 1);
    }

    #[test]
    fn the_path_skips_options_and_their_values() {
        for (args, path) in [
            (
                &["--db", "study", "report", "1", "--bogus"][..],
                "fslab report",
            ),
            (&["--db=x", "study", "run", "-x"], "fslab study run"),
            (&["fdtree", "-o", "study"], "fslab fdtree"),
            (&["studdy"], "fslab"),
        ] {
            assert_eq!(command_path(&os(args)), path, "{args:?}");
        }
    }
}
