//! Processes by identity: a process is named by its pid *and* its start time (field 22 of
//! `/proc/<pid>/stat`, clock ticks since boot), so a later process that got the same pid is
//! never taken for it; and the caged programs a process started, found by the owner mark
//! their environment carries ([`super::cage::OWNER_ENV`]).

use std::time::{Duration, Instant};

/// Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot) and whether the
/// process has already exited (a zombie waiting to be reaped).
pub fn start_time(pid: u32) -> Option<(u64, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state), so field 22 is at index 19.
    let start = fields.get(19)?.parse().ok()?;
    let exited = matches!(fields.first().copied(), Some("Z" | "X"));
    Some((start, exited))
}

/// Whether process `pid` that started at `start` (clock ticks since boot) still runs.
pub fn alive(pid: u32, start: u64) -> bool {
    start_time(pid).is_some_and(|(s, exited)| s == start && !exited)
}

/// This process's owner mark, `<pid>:<start time>`: what caged programs it starts carry.
pub fn my_owner_mark() -> String {
    let pid = std::process::id();
    let start = start_time(pid).map_or(0, |(s, _)| s);
    owner_mark(pid, start)
}

/// The owner mark of process `pid` started at `start`.
pub fn owner_mark(pid: u32, start: u64) -> String {
    format!("{pid}:{start}")
}

/// The processes whose environment carries exactly `OWNER_ENV=<mark>`.
pub fn caged_by(mark: &str) -> Vec<i32> {
    let want = format!("{}={mark}", super::cage::OWNER_ENV);
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == want.as_bytes()))
        })
        .collect()
}

/// Stop (SIGKILL) every caged program of the owner `mark` — a caged program is process 2 of
/// its PID namespace, under an init that ends when it ends, and everything it started dies
/// with the namespace — and wait up to 10 s until none is left. Returns how many were stopped; an error names those still running.
pub fn stop_caged(mark: &str) -> Result<usize, String> {
    let mut left = caged_by(mark);
    let stopped = left.len();
    let t = Instant::now();
    loop {
        for &pid in &left {
            // SAFETY: kill(2) with a pid read from /proc and a valid signal number.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        left = caged_by(mark);
        if left.is_empty() {
            return Ok(stopped);
        }
        if t.elapsed() > Duration::from_secs(10) {
            return Err(format!(
                "processes {left:?} of a killed run are still running after SIGKILL; wait for them to end and run fslab cleanup again"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_wrong_start_is_not() {
        let pid = std::process::id();
        let (start, exited) = start_time(pid).unwrap();
        assert!(!exited);
        assert!(alive(pid, start));
        assert!(!alive(pid, start + 1));
        assert_eq!(my_owner_mark(), format!("{pid}:{start}"));
    }

    #[test]
    fn a_marked_child_is_found_and_stopped_and_no_other() {
        let mark = format!("test-{}-{}", std::process::id(), line!());
        let sleeper = |owner: &str| {
            std::process::Command::new("sleep")
                .arg("60")
                .env(super::super::cage::OWNER_ENV, owner)
                .spawn()
                .unwrap()
        };
        let mut marked = sleeper(&mark);
        let mut other = sleeper(&format!("{mark}0"));
        // A child shows its own environment only once it has exec'd: wait for that.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while caged_by(&mark).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(caged_by(&mark), vec![marked.id() as i32]);
        // Reap the killed child meanwhile, so it does not linger as a zombie.
        let reaper = std::thread::spawn(move || marked.wait().unwrap());
        assert_eq!(stop_caged(&mark), Ok(1));
        assert!(!reaper.join().unwrap().success());
        assert!(
            other.try_wait().unwrap().is_none(),
            "another mark is left alone"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
