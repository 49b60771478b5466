//! `--help` states every option's default: either clap's `[default: …]` or a "Default: …"
//! sentence in the option's own help.

use super::Cli;
use clap::CommandFactory;

/// Every visible command of `fslab`, built, with its path (`fslab dbench`).
fn each_command(f: &mut impl FnMut(&mut clap::Command, &str)) {
    fn walk(cmd: &mut clap::Command, path: &str, f: &mut impl FnMut(&mut clap::Command, &str)) {
        f(cmd, path);
        for sub in cmd.get_subcommands_mut().filter(|s| !s.is_hide_set()) {
            let name = format!("{path} {}", sub.get_name());
            walk(sub, &name, f);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    walk(&mut cmd, "fslab", f);
}

/// Options of `cmd`, as `fslab sub --option`, whose help states no default.
fn without_default(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    for a in cmd.get_arguments() {
        let id = a.get_id().as_str();
        if a.is_positional() || a.is_hide_set() || id == "help" || id == "version" {
            continue;
        }
        let flag = matches!(a.get_action(), clap::ArgAction::SetTrue);
        if a.is_required_set() || (!flag && !a.get_default_values().is_empty()) {
            continue;
        }
        let help = [a.get_help(), a.get_long_help()]
            .into_iter()
            .flatten()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        if !help.contains("Default") && !help.contains("default") {
            out.push(format!(
                "{path} {}",
                a.get_long().map_or(id.to_string(), |l| format!("--{l}"))
            ));
        }
    }
}

#[test]
fn every_option_states_its_default() {
    let mut missing = Vec::new();
    each_command(&mut |cmd, path| without_default(cmd, path, &mut missing));
    assert!(missing.is_empty(), "no default stated: {missing:#?}");
}

#[test]
fn an_argument_the_usage_requires_is_shown_as_required() {
    // dbench's usage said `<NCLIENTS>` and its argument list `[NCLIENTS]`.
    let mut all = Vec::new();
    each_command(&mut |cmd, path| all.push((path.to_string(), cmd.render_long_help().to_string())));
    let mut wrong = Vec::new();
    for (path, text) in &all {
        let usage: String = text
            .lines()
            .skip_while(|l| !l.starts_with("Usage:"))
            .take_while(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        for word in usage.split_whitespace() {
            let Some(name) = word.strip_prefix('<').and_then(|w| w.strip_suffix('>')) else {
                continue;
            };
            let optional = format!("[{name}]");
            if text.lines().any(|l| l.trim_start().starts_with(&optional)) {
                wrong.push(format!("{path}: <{name}> in the usage, {optional} below"));
            }
        }
    }
    assert!(all.iter().any(|(p, _)| p == "fslab dbench"));
    assert!(wrong.is_empty(), "{wrong:#?}");
}
