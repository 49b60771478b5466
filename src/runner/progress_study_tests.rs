use super::*;
use crate::runner::progress_wire::parse;

/// A buffer the guest's display writes into and the test reads.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    /// The lines written since the last call.
    fn take(&self) -> Vec<String> {
        let bytes = std::mem::take(&mut *lock(&self.0));
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The host's side: a display drawn nowhere, fed every line; the plain lines it would print.
fn feed(host: &Progress, lines: Vec<String>) -> Vec<String> {
    let mut plain = Vec::new();
    for l in lines {
        match parse(&l) {
            Some(e) => host.apply(e),
            None => plain.push(l),
        }
    }
    plain
}

fn main_bar(p: &Progress) -> &ProgressBar {
    p.main().unwrap()
}

fn phase_view(p: &Progress) -> Option<(String, crate::runner::phase_bar::PhaseView)> {
    lock(&p.phase)
        .as_ref()
        .map(|b| (b.bar().message(), b.view()))
}

#[test]
fn a_guests_display_arrives_at_the_host_as_data() {
    let out = Shared::default();
    let guest = Progress::wired(Box::new(out.clone()), 12);
    assert!(
        guest.wants_status(),
        "fio is asked for its status in a guest"
    );
    assert_eq!(out.take(), ["@fslab-progress begin 12"]);
    let host = Progress::drawn(ProgressDrawTarget::hidden(), 12);

    guest.set_unit(|phase| {
        RateUnit::Items(if phase.starts_with("dir") {
            "dirs"
        } else {
            "files"
        })
    });
    guest.set_done(3, Some(40.0));
    guest.rep_started("journal=16MB · fdtree · rep 1/5");
    guest.phase_started("file_create", 5000);
    // An engine counts every file: one line per 100 ms at most, the first at once.
    let t0 = Instant::now();
    for done in 1..=20_000 {
        guest.progress(done);
    }
    let most = 1 + t0.elapsed().as_millis() as usize / 100;
    guest.message("warning: a plain line");
    let lines = out.take();
    assert!(lines.iter().all(|l| !l.contains('\x1b')), "{lines:?}");
    let sent: Vec<String> = lines
        .iter()
        .filter(|l| l.contains(" progress "))
        .cloned()
        .collect();
    assert_eq!(sent[0], "@fslab-progress progress 1");
    let n = sent.len();
    assert!(n <= most, "{n} lines for {most} periods");
    assert_eq!(feed(&host, lines), ["warning: a plain line"]);
    assert_eq!(main_bar(&host).position(), 3);
    assert_eq!(main_bar(&host).message(), "journal=16MB · fdtree · rep 1/5");
    let Head::Study { eta, .. } = &host.head else {
        panic!("a study's display")
    };
    assert!(live_eta(eta).is_some_and(|e| e > 39.0 && e <= 40.0));
    let (name, view) = phase_view(&host).unwrap();
    assert_eq!(name, "file_create");
    let last = sent.last().unwrap();
    let shown: u64 = last.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(view.counts_text(), format!("{shown}/5000"));
    assert_eq!(
        view.rate_text(48_123.0, (lock(&host.unit))("file_create", 0)),
        "48.1k files/s"
    );

    // dbench's status: the bar follows its fraction, its MB/s.
    guest.phase_finished("file_create");
    guest.phase_started("execute", 0);
    guest.status(PhaseStatus {
        done: Some(0.523),
        bytes_per_sec: Some(18.5e6),
        decimal: true,
        eta: Some(15.0),
        ..PhaseStatus::default()
    });
    guest.rep_finished(4, 14, "journal=16MB · fdtree · rep 1/5", 0.97, Some(30.0));
    feed(&host, out.take());
    let (name, view) = phase_view(&host).unwrap();
    assert_eq!(name, "execute");
    assert_eq!(view.counts_text(), "52.3%");
    assert_eq!(view.rate_text(0.0, RateUnit::Items("lines")), "18.5 MB/s");
    assert_eq!(
        (main_bar(&host).position(), main_bar(&host).length()),
        (4, Some(14))
    );

    fio_names_the_bar(&guest, &host, &out);

    guest.phase_finished("fio");
    guest.finish();
    feed(&host, out.take());
    assert!(phase_view(&host).is_none());
    assert!(main_bar(&host).is_finished());
}

/// fio's status, as the guest's display sends it: what it does names the bar; its IOPS
/// beside its rate.
fn fio_names_the_bar(guest: &Progress, host: &Progress, out: &Shared) {
    guest.phase_finished("execute");
    guest.phase_started("fio", 0);
    guest.status(PhaseStatus {
        doing: Some("setting up".into()),
        ..PhaseStatus::default()
    });
    feed(host, out.take());
    assert_eq!(phase_view(host).unwrap().0, "fio setting up");
    guest.status(PhaseStatus {
        done: Some(0.5),
        bytes_per_sec: Some(651.0 * 1048576.0),
        ops_per_sec: Some(166_690.0),
        doing: Some("wr/write".into()),
        ..PhaseStatus::default()
    });
    feed(host, out.take());
    let (name, view) = phase_view(host).unwrap();
    assert_eq!(name, "fio wr/write");
    assert_eq!(
        view.rate_text(0.0, RateUnit::Items("ops")),
        "651 MiB/s 167k IOPS"
    );
}
