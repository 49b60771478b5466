use super::*;

#[test]
fn dev_and_relative_paths_cannot_be_made_writable() {
    for bad in ["/dev/shm/x", "relative/dir", "/"] {
        let cage = Cage::job(vec![PathBuf::from(bad)], PathBuf::from("/"));
        let mut c = Command::new("true");
        let e = cage.apply(&mut c, "x").unwrap_err().to_string();
        assert!(e.contains("cannot be made writable"), "{bad}: {e}");
    }
}
