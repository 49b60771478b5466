use super::*;

fn status(done: Option<f64>, bps: Option<f64>, decimal: bool, eta: Option<f64>) -> PhaseStatus {
    PhaseStatus {
        done,
        bytes_per_sec: bps,
        decimal,
        eta,
        ..PhaseStatus::default()
    }
}

#[test]
fn lines_are_the_documented_words() {
    let fio = PhaseStatus {
        ops_per_sec: Some(166000.0),
        doing: Some("rd/read".into()),
        ..status(Some(0.5), Some(68e7), false, Some(3.0))
    };
    for (e, line) in [
        (Event::Begin(12), "begin 12"),
        (Event::Done(3, Some(41.5)), "done 3 41.5"),
        (Event::Done(0, None), "done 0 -"),
        (
            Event::Phase(RateUnit::Items("files"), 5000, "file_create".into()),
            "phase files 5000 file_create",
        ),
        (
            Event::Status(status(Some(0.523), Some(18.5e6), true, Some(15.0))),
            "status 0.523 18500000 1000 15",
        ),
        (
            Event::Status(fio),
            "status 0.5 680000000 1024 3 166000 rd/read",
        ),
        (Event::Finish, "finish"),
    ] {
        assert_eq!(encode(&e), format!("@fslab-progress {line}"), "{e:?}");
    }
}

#[test]
fn every_event_arrives_as_it_was_sent() {
    let events = [
        Event::Begin(12),
        Event::Total(14),
        Event::Done(3, Some(41.25)),
        Event::Done(0, None),
        Event::Rep("journal=16MB · fio · rep 1/5".into()),
        Event::Phase(RateUnit::Items("dirs"), 0, "dir_create".into()),
        Event::Phase(RateUnit::Bytes(65536), 4096, "random write".into()),
        Event::Phase(RateUnit::DecimalBytes, 0, "dbench".into()),
        Event::Progress(1200),
        Event::Status(status(Some(0.25), Some(1.5 * 1048576.0), false, None)),
        Event::Status(status(None, None, true, Some(3.0))),
        Event::Status(PhaseStatus {
            ops_per_sec: Some(7450.5),
            doing: Some("wr/write +2".into()),
            ..status(Some(0.25), Some(1048576.0), false, None)
        }),
        Event::Status(PhaseStatus {
            doing: Some("setting up".into()),
            ..PhaseStatus::default()
        }),
        Event::End,
        Event::Finish,
    ];
    for e in events {
        let line = encode(&e);
        assert!(!line.contains('\n') && !line.contains('\x1b'), "{line}");
        assert_eq!(parse(&line), Some(e.clone()), "{line}");
        // As read from a raw console: with the newline, or a carriage return too.
        assert_eq!(parse(&format!("{line}\r\n")), Some(e), "{line}");
    }
}

#[test]
fn names_stay_on_one_line() {
    let line = encode(&Event::Rep("a\nb".into()));
    assert_eq!(parse(&line), Some(Event::Rep("a b".into())));
}

#[test]
fn an_unknown_thing_is_counted_as_items() {
    assert_eq!(
        parse("@fslab-progress phase widgets 3 x"),
        Some(Event::Phase(RateUnit::Items("items"), 3, "x".into()))
    );
}

#[test]
fn other_lines_are_not_events() {
    for line in [
        "fslab: warning: the page cache holds the file",
        "[3/12] journal=16MB · fdtree · rep 1/5: 0.97 s",
        "",
        "@fslab-progress",
        "@fslab-progress begin",
        "@fslab-progress begin twelve",
        "@fslab-progress done 3",
        "@fslab-progress done 3 soon",
        "@fslab-progress status 0.5 1 999 -",
        "@fslab-progress status 0.5 NaN 1000 -",
        "@fslab-progress end now",
        "@fslab-progress dance 3",
        " @fslab-progress begin 3",
    ] {
        assert_eq!(parse(line), None, "{line:?}");
    }
}
