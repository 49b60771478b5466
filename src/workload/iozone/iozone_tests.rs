//! Unit tests of the engine's parameters: test selection and huge-page buffers. The passes
//! are tested beside `passes`, throughput mode beside `throughput`.

use super::*;

#[test]
fn test_selection_adds_the_write_test_where_needed_and_refuses_unknown_numbers() {
    assert_eq!(resolve_tests(&[]).unwrap().0, (0..=7).collect::<Vec<u8>>());
    let (t, note) = resolve_tests(&[2, 1]).unwrap();
    assert_eq!(t, [0, 1, 2]);
    assert!(note.is_some());
    assert_eq!(resolve_tests(&[6, 7]).unwrap(), (vec![6, 7], None));
    assert_eq!(resolve_tests(&[4]).unwrap(), (vec![4], None));
    assert_eq!(resolve_tests(&[7]).unwrap().0, [0, 7]);
    for bad in [8, 9, 12, 13, -1] {
        let e = resolve_tests(&[bad]).unwrap_err();
        assert!(
            e.downcast_ref::<crate::error::UsageError>().is_some(),
            "{bad}: {e}"
        );
    }
}

#[test]
fn huge_page_buffers_only_when_asked() {
    let p = |record: u64, direct: bool, huge_buffer: bool| IozoneParams {
        record,
        direct,
        huge_buffer,
        ..IozoneParams::default()
    };
    // IOzone's buffer follows the system's THP policy at every record size; so does fslab's.
    assert!(!p(1 << 20, false, false).huge_buffer);
    assert!(!p(16 << 20, false, false).huge_buffer);
    assert!(!p(4096, false, false).huge_buffer);
    assert!(!p(1 << 20, true, false).huge_buffer);
    assert!(p(1 << 20, false, true).huge_buffer);
    assert!(p(1 << 20, true, true).huge_buffer);
    assert!(p(4096, false, true).huge_buffer);
    assert!(p(1 << 20, true, true)
        .label()
        .ends_with(" -I --huge-buffer"));
}
