//! The README as a new user follows it: its first commands build fslab with cargo, and every
//! later example types `fslab`, so the binary must be put on `PATH` before the first of them.

/// The README's text.
fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn the_readme_puts_fslab_on_path_before_its_first_fslab_command() {
    let text = readme();
    // The two commands of a fresh machine come first and build with cargo.
    let main = text
        .find("cargo run --release -- study run examples/studies/quickstart.toml")
        .expect("the README's main job");
    let tests = text
        .find("scripts/install-deps --test && cargo test")
        .expect("the README's test command");
    assert!(main < tests);
    // The first example typed as `fslab …` after them (in prose or in a code block).
    let first = text[main..]
        .match_indices("fslab ")
        .map(|(i, _)| main + i)
        .find(|&i| {
            let before = text[..i].chars().next_back();
            matches!(before, Some('`') | Some('\n'))
        })
        .expect("an example typed as fslab");
    let install = text
        .find("cargo install --path .")
        .expect("a line that puts fslab on PATH");
    assert!(
        install < first,
        "`cargo install --path .` at byte {install}, after the first `fslab` example at {first}: {}",
        &text[first..(first + 60).min(text.len())]
    );
    // Written as a command to run, not only mentioned.
    let line = text[..install].rsplit('\n').next().unwrap_or("");
    assert!(
        line.is_empty(),
        "the install command starts its line: {line:?}"
    );
}
