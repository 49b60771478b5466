//! The guest's init: a shell script fslab writes for each boot.

use std::path::Path;

/// The first lines of every init script fslab writes for a guest: what proves a
/// `guest-PID` directory is fslab's.
pub(super) const INIT_MARK: &str = "#!/bin/sh\n# Written by fslab study run --guest";

/// What the guest's init says on the control console once user space runs: the host
/// measures the boot up to this line.
pub(super) const BOOTED: &str = "booted";

/// The files the guest's init writes in the host's `guest-PID/`: the stop mark, the running
/// command's pid, the exit code.
pub(super) const STOP_FILE: &str = "stop";
pub(super) const CHILD_FILE: &str = "child";
pub(super) const EXIT_FILE: &str = "exit";
/// The init script itself.
pub(super) const INIT_FILE: &str = "init";

/// Single-quote for sh.
pub(super) fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// One fslab command the guest runs: its arguments and the environment it adds.
pub(super) struct GuestCommand {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// The init script of the guest: mount /proc and /sys, tell the host it has booted, load
/// the modules the host kernel may lack, run each fslab command in turn with stdout and
/// stderr on the first two consoles, stop the one running (and start no other) when the
/// host says so, store the exit code of the last one, halt.
pub(super) fn init_script(
    exe: &Path,
    commands: &[GuestCommand],
    env: &[(String, String)],
    cwd: &Path,
    dir: &Path,
) -> String {
    let mut s = format!("{INIT_MARK}: the guest's init.\n");
    s.push_str("mount -t proc proc /proc\nmount -t sysfs sysfs /sys\n");
    // The host's name, so the study's claim and environment name the machine.
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    s.push_str(&format!("hostname {} 2>/dev/null\n", q(&host)));
    s.push_str("for t in 0 1 2 3; do stty -F /dev/tty$t raw -echo 2>/dev/null; done\n");
    s.push_str(&format!("echo {BOOTED} >/dev/tty3\n"));
    s.push_str(
        "M=/usr/lib/uml/modules/$(uname -r)/kernel\nfor m in fs/nilfs2/nilfs2.ko drivers/block/loop.ko; do\n  [ -f \"$M/$m\" ] && insmod \"$M/$m\" 2>/dev/null\ndone\n",
    );
    for (k, v) in env {
        s.push_str(&format!("export {k}={}\n", q(v)));
    }
    s.push_str(&format!("cd {} || exit 1\n", q(&cwd.to_string_lossy())));
    let path = |f: &str| q(&dir.join(f).to_string_lossy());
    let (stop, child) = (path(STOP_FILE), path(CHILD_FILE));
    // The stop request: mark it (no further command starts) and stop the running one; a
    // second later, the one whose pid was written since, in case the request arrived between
    // a start and its pid being written — never the same one twice (a second SIGTERM makes
    // fslab exit at once, and its study would stay "running").
    s.push_str(&format!(
        "( read line </dev/tty2 && : > {stop} && sent= && for i in 1 2; do p=$(cat {child} 2>/dev/null); if [ -n \"$p\" ] && [ \"$p\" != \"$sent\" ]; then kill -TERM $p 2>/dev/null; sent=$p; fi; sleep 1; done ) 2>/dev/null &\nreader=$!\nrc=130\n"
    ));
    for c in commands {
        let cmd: Vec<String> = std::iter::once(exe.to_string_lossy().into_owned())
            .chain(c.args.iter().cloned())
            .map(|a| q(&a))
            .collect();
        // The command's own variables as assignments before it: they do not reach the next.
        let vars: String = c
            .env
            .iter()
            .map(|(k, v)| format!("{k}={} ", q(v)))
            .collect();
        s.push_str(&format!(
            "if [ ! -e {stop} ]; then\n  {vars}{} </dev/null >/dev/tty0 2>/dev/tty1 &\n  echo $! > {child}\n  wait $!\n  rc=$?\nfi\n",
            cmd.join(" ")
        ));
    }
    s.push_str("kill $reader 2>/dev/null\n");
    s.push_str(&format!("echo $rc > {}\nsync\n", path(EXIT_FILE)));
    s.push_str("halt -f >/dev/null 2>&1\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_script_quotes_and_reports_the_exit_code() {
        let cmd = |file: &str, dev: &str| GuestCommand {
            args: vec!["study".into(), "run".into(), file.into()],
            env: vec![("FSLAB_GUEST_DEVICES".into(), dev.into())],
        };
        let s = init_script(
            Path::new("/usr/bin/fslab"),
            &[
                cmd("cal.toml", "0.data=/dev/ubdb"),
                cmd("it's.toml", "0.data=/dev/ubda"),
            ],
            &[("FSLAB_GUEST".into(), "uml".into())],
            Path::new("/w"),
            Path::new("/w/guest-1"),
        );
        assert!(s.starts_with(INIT_MARK));
        assert!(s.contains("export FSLAB_GUEST='uml'\n"));
        assert!(s.contains(
            "  FSLAB_GUEST_DEVICES='0.data=/dev/ubda' '/usr/bin/fslab' 'study' 'run' 'it'\\''s.toml' </dev/null >/dev/tty0 2>/dev/tty1 &"
        ));
        assert!(s.contains("echo $rc > '/w/guest-1/exit'"));
        assert!(s.contains("p=$(cat '/w/guest-1/child' 2>/dev/null)"));
        assert!(s.contains("[ \"$p\" != \"$sent\" ]; then kill -TERM $p"));
        // In order, each with its own devices, none once a stop was asked for.
        let cal = s.find("'cal.toml'").unwrap();
        let main = s.find("'it'\\''s.toml'").unwrap();
        assert!(cal < main);
        let first = s.find("'/usr/bin/fslab'").unwrap();
        assert!(first < cal);
        assert!(s[..first].ends_with(
            "if [ ! -e '/w/guest-1/stop' ]; then\n  FSLAB_GUEST_DEVICES='0.data=/dev/ubdb' "
        ));
        assert_eq!(s.matches("if [ ! -e '/w/guest-1/stop' ]").count(), 2);
        // The boot is over before any module is loaded or fslab starts.
        let booted = s.find("echo booted >/dev/tty3").unwrap();
        assert!(booted < s.find("insmod").unwrap());
    }
}
