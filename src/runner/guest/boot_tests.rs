use super::*;
use std::os::unix::process::ExitStatusExt;

fn outcome(log: &[&str]) -> Outcome {
    Outcome {
        code: None,
        status: ExitStatus::from_raw(6),
        booted: None,
        elapsed: Duration::from_secs(1),
        kernel_log: log.iter().map(|s| s.to_string()).collect(),
        captured: Vec::new(),
    }
}

#[test]
fn the_cause_names_what_the_kernel_said() {
    let fp = outcome(&[
        "Run /bin/sh as init process",
        "userspace - ptrace set fp regs failed, errno = 14",
        "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b",
    ]);
    let c = cause(&fp, None);
    assert!(c.contains("vector registers"), "{c}");
    let oom = outcome(&["Out of memory: Killed process 12 (fslab)"]);
    assert!(cause(&oom, None).contains("uml:1G"));
    let refused = super::super::shim::Decision {
        widened: false,
        uml_bytes: 2696,
        host_bytes: 12000,
        line: "refused uml=2696 host=12000 component=19 offset=2696 size=128".into(),
    };
    assert!(cause(&fp, Some(&refused)).contains("component=19"));
    assert!(cause(&outcome(&[]), None).contains("printed nothing"));
}

#[test]
fn the_guest_is_started_through_the_spawn_seam() {
    let t = tempfile::tempdir().unwrap();
    let rec = Arc::new(crate::process::RecordingSpawn::new());
    let launch = Launch {
        kernel: Path::new("/opt/uml/linux.uml"),
        mem_word: "512M".into(),
        dir: t.path(),
        images: &[],
        host_env: Vec::new(),
        stdout: Sink::Capture,
        stderr: Sink::Host,
        spawn: Arc::clone(&rec) as Arc<dyn Spawn>,
    };
    let e = format!("{:#}", boot(launch).err().unwrap());
    assert!(e.contains("starting /opt/uml/linux.uml"), "{e}");
    assert_eq!(
        rec.lines(),
        [format!(
            "/opt/uml/linux.uml mem=512M root=/dev/root rootfstype=hostfs rootflags=/ rw ubd0=/dev/null init={}/init con=null con0=fd:3,fd:4 con1=fd:5,fd:6 con2=fd:7,fd:8 con3=fd:9,fd:10 con4=fd:11,fd:12 console=tty4",
            t.path().display()
        )]
    );
}

#[test]
fn the_guests_cache_drop_request_goes_through_the_spawn_seam() {
    let rec = crate::process::RecordingSpawn::new();
    let (req_r, req_w) = pipe().unwrap();
    let (ack_r, ack_w) = pipe().unwrap();
    std::fs::File::from(req_w).write_all(b"drop\n").unwrap();
    let booted = Mutex::new(None);
    serve_requests(req_r, ack_w, Instant::now(), &booted, &rec);
    let mut reply = String::new();
    std::fs::File::from(ack_r)
        .read_to_string(&mut reply)
        .unwrap();
    assert_eq!(reply, "ok\n");
    assert_eq!(rec.lines(), ["echo 3 > /proc/sys/vm/drop_caches"]);
}
