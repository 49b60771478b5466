//! Tests of text fitting: every line within the width, nothing lost.

use super::*;

fn words(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|l| l.split_whitespace().map(str::to_string))
        .collect()
}

#[test]
fn wrap_keeps_every_word_within_the_width() {
    let text = "faster by 17% (95% CI 3.6–31%, p = 0.019), but not after adjusting for 4 tests (q = 0.076)";
    for w in [20, 33, 40, 60, 100] {
        let lines = wrap(text, w, "- ", "  ");
        assert!(lines.iter().all(|l| width(l) <= w), "{w}: {lines:#?}");
        assert!(lines[0].starts_with("- faster"));
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")));
        let mut expect = vec!["-".to_string()];
        expect.extend(text.split(' ').map(str::to_string));
        assert_eq!(words(&lines), expect);
    }
    // Short text stays on one line, empty text gives the prefix alone.
    assert_eq!(wrap("a b", 10, "> ", "  "), ["> a b"]);
    assert_eq!(wrap("", 10, "> ", "  "), [">"]);
}

#[test]
fn a_word_longer_than_a_line_is_broken() {
    let path = "/tmp/i24/work/runs/10919-1795727579141/images/c0-data.img";
    let lines = wrap(&format!("truncate {path}"), 24, "", "  ");
    assert!(lines.iter().all(|l| width(l) <= 24), "{lines:#?}");
    let joined: String = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join("");
    assert_eq!(joined, format!("truncate{path}"));
}

#[test]
fn commands_continue_with_a_backslash() {
    let cmd = "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -J size=16 /dev/loop4";
    let lines = wrap_command(cmd, 40, "  ");
    assert!(lines.len() > 1);
    assert!(lines.iter().all(|l| width(l) <= 40), "{lines:#?}");
    assert!(lines[0].starts_with("  $ mkfs.ext4"));
    for l in &lines[..lines.len() - 1] {
        assert!(l.ends_with('\\'), "{l}");
    }
    assert!(!lines.last().unwrap().ends_with('\\'));
    // As the shell reads it: a backslash-newline joins the lines.
    let joined = lines.join("\n").replace("\\\n", "");
    let back: Vec<&str> = joined.split_whitespace().filter(|w| *w != "$").collect();
    assert_eq!(back.join(" "), cmd);
    assert_eq!(wrap_command("ls", 40, ""), ["$ ls"]);
    // A path longer than a line is broken with a backslash right after it: the shell joins
    // the next line to it.
    let path = "/tmp/i24/work/runs/10919-1795727579141/images/c0-data.img";
    let lines = wrap_command(&format!("truncate -s 1073741824 {path}"), 30, "  ");
    assert!(lines.iter().all(|l| width(l) <= 30), "{lines:#?}");
    let joined = lines.join("\n").replace("\\\n", "");
    let words: Vec<&str> = joined.split_whitespace().collect();
    assert_eq!(
        words,
        ["$", "truncate", "-s", "1073741824", path],
        "{lines:#?}"
    );
}

fn table(values: usize) -> TextTable {
    let mut cols = vec![("configuration".to_string(), Align::Left)];
    for i in 0..values {
        cols.push((format!("phase_{i}\n(files/s)"), Align::Right));
    }
    let mut t = TextTable::new(cols, 1);
    for label in ["journal=16MB", "journal=256MB"] {
        let mut row = vec![label.to_string()];
        for i in 0..values {
            row.push(format!("{} ± 8456*\n[32751 – 53235]", 40000 + i));
        }
        t.row(row);
    }
    t
}

#[test]
fn a_table_that_fits_is_one_block() {
    let lines = table(3).render(100);
    assert_eq!(lines.len(), 2 + 1 + 4, "{lines:#?}");
    assert!(lines[0].starts_with("configuration") && lines[0].ends_with("phase_2"));
    assert_eq!(
        lines[1].trim(),
        "(files/s)        (files/s)        (files/s)"
    );
    assert!(lines[2].starts_with("─────────────  "));
    // Numbers are right-aligned under their header.
    assert!(lines[3].ends_with("40002 ± 8456*"));
    assert!(lines[4].starts_with("               ") && lines[4].ends_with("[32751 – 53235]"));
    assert!(lines.iter().all(|l| width(l) <= 100 && l.trim_end() == l));
}

#[test]
fn a_wide_table_is_stacked_with_its_labels_repeated() {
    let t = table(9);
    let wide = t.render(1000);
    assert!(wide.iter().any(|l| width(l) > 100));
    let lines = t.render(100);
    assert!(lines.iter().all(|l| width(l) <= 100), "{lines:#?}");
    let blocks: Vec<&[String]> = lines.split(|l| l.is_empty()).collect();
    assert!(blocks.len() >= 2, "{lines:#?}");
    for b in &blocks {
        assert!(b[0].starts_with("configuration"));
        assert!(b.iter().any(|l| l.starts_with("journal=16MB")));
        assert!(b.iter().any(|l| l.starts_with("journal=256MB")));
    }
    // Every value is in exactly one block.
    for i in 0..9 {
        let count = |text: &str| lines.iter().filter(|l| l.contains(text)).count();
        let header = format!("phase_{i}");
        assert_eq!(count(&header), 1, "{header}");
        assert_eq!(count(&format!("{} ± 8456*", 40000 + i)), 2);
    }
}

#[test]
fn text_too_wide_for_any_block_wraps_in_its_cell() {
    let left = |h: &str| (h.to_string(), Align::Left);
    let mut t = TextTable::new(vec![left("metric"), left("verdict")], 1);
    let verdict = "faster by 17% (95% CI 3.6–31%, p = 0.019), but not after adjusting for 4 tests (q = 0.076)";
    t.row(vec!["file_create.rate".into(), verdict.into()]);
    t.group("randwrite-fsync/write — a group label that is longer than the width of the table");
    let lines = t.render(60);
    assert!(lines.iter().all(|l| width(l) <= 60), "{lines:#?}");
    let text: Vec<String> = words(&lines[2..]);
    for w in verdict.split(' ') {
        assert!(text.contains(&w.to_string()), "{w} lost: {lines:#?}");
    }
    // A label wider than half the width wraps too.
    let mut t = TextTable::new(vec![left("configuration"), ("x".into(), Align::Right)], 1);
    t.row(vec![
        "xfs external logbufs=8,logbsize=256k and a much longer label than fits".into(),
        "1.0".into(),
    ]);
    let lines = t.render(40);
    assert!(lines.iter().all(|l| width(l) <= 40), "{lines:#?}");
    assert!(lines.iter().any(|l| l.ends_with("1.0")));
}
