//! Leases inside one process: two holders get two slots; the release writes
//! the last issued unit and the next holder starts right away.

use snowmint::{Layout, Options, SystemClock};
use snowmint_lease::{LeaseUrl, LeasedGenerator};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-lease-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn two_holders_in_one_process_get_two_slots() {
    let dir = temp_dir("two");
    let url = LeaseUrl::parse(&format!("file:{}", dir.display())).unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let open = || {
        LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 3)],
            Options::default(),
            None,
            SystemClock,
        )
        .unwrap()
    };
    // flock locks belong to the open file: two claims of one process exclude
    // each other like two processes do.
    let (a, b) = (open(), open());
    assert_ne!(a.slot(), b.slot());
    assert_ne!(a.next_id().unwrap(), b.next_id().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn release_writes_the_last_issued_unit() {
    let dir = temp_dir("release");
    let url = LeaseUrl::parse(&format!("file:{}?namespace=rel", dir.display())).unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let g = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 0)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap();
    let info = g.info();
    assert_eq!(info.field, "worker");
    assert_eq!(info.reserved_end_ms, Some(info.hwm_ms + 1));
    assert!(
        info.hwm_ms >= SystemClock.precise_ms() + 19_000,
        "default window 20 s"
    );
    let id = g.next_id().unwrap();
    let slot = g.slot();
    g.close().unwrap();
    let space = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let state = std::fs::read_to_string(space.join(format!("{slot}.state"))).unwrap();
    let hwm: u64 = state
        .lines()
        .find_map(|l| l.strip_prefix("hwm_ms="))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(hwm, layout.decompose(id.get()).unwrap().timestamp_ms());
    assert!(state.contains("token=\n"), "{state}");
    // The next holder of the slot starts right away (hwm is behind the clock).
    let g = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 0)],
        Options::default(),
        Some(slot),
        SystemClock,
    )
    .unwrap();
    assert!(g.next_id().unwrap() > id);
    drop(g);
    std::fs::remove_dir_all(&dir).unwrap();
}
