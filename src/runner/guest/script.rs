//! The guest's init: a shell script fslab writes for each boot.

use std::path::Path;

/// The first lines of every init script fslab writes for a guest: what proves a
/// `guest-PID` directory is fslab's.
pub(super) const INIT_MARK: &str = "#!/bin/sh\n# Written by fslab study run --guest";

/// What the guest's init says on the control console once user space runs: the host
/// measures the boot up to this line.
pub(super) const BOOTED: &str = "booted";

/// Single-quote for sh.
pub(super) fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The init script of the guest: mount /proc and /sys, tell the host it has booted, load
/// the modules the host kernel may lack, start fslab with stdout and stderr on the first two
/// consoles, stop it when the host says so, store its exit code, halt.
pub(super) fn init_script(
    exe: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    exit_file: &Path,
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
    let cmd: Vec<String> = std::iter::once(exe.to_string_lossy().into_owned())
        .chain(args.iter().cloned())
        .map(|a| q(&a))
        .collect();
    s.push_str(&format!(
        "{} </dev/null >/dev/tty0 2>/dev/tty1 &\nchild=$!\n",
        cmd.join(" ")
    ));
    s.push_str("( read line </dev/tty2 && kill -TERM $child ) 2>/dev/null &\nreader=$!\n");
    s.push_str("wait $child\nrc=$?\nkill $reader 2>/dev/null\n");
    s.push_str(&format!(
        "echo $rc > {}\nsync\n",
        q(&exit_file.to_string_lossy())
    ));
    s.push_str("halt -f >/dev/null 2>&1\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_script_quotes_and_reports_the_exit_code() {
        let s = init_script(
            Path::new("/usr/bin/fslab"),
            &["study".into(), "run".into(), "it's.toml".into()],
            &[("FSLAB_GUEST".into(), "uml".into())],
            Path::new("/w"),
            Path::new("/w/guest-1/exit"),
        );
        assert!(s.starts_with(INIT_MARK));
        assert!(s.contains("export FSLAB_GUEST='uml'\n"));
        assert!(s.contains(
            "'/usr/bin/fslab' 'study' 'run' 'it'\\''s.toml' </dev/null >/dev/tty0 2>/dev/tty1 &"
        ));
        assert!(s.contains("echo $rc > '/w/guest-1/exit'"));
        assert!(s.contains("kill -TERM $child"));
        // The boot is over before any module is loaded or fslab starts.
        let booted = s.find("echo booted >/dev/tty3").unwrap();
        assert!(booted < s.find("insmod").unwrap());
    }
}
