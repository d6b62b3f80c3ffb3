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

#[test]
fn namespaces_are_separate_spaces() {
    let dir = temp_dir("ns");
    // A 1-bit leased field: two slots per space.
    let layout = Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 5),
            ("worker", 1),
            ("sequence", 16),
        ],
    )
    .unwrap();
    let open = |ns: &str| {
        let url = LeaseUrl::parse(&format!("file:{}?namespace={ns}", dir.display())).unwrap();
        LeasedGenerator::open_with(
            &url,
            layout,
            &[("datacenter", 1)],
            Options::default(),
            None,
            SystemClock,
        )
    };
    let a0 = open("a").unwrap();
    let a1 = open("a").unwrap();
    let e = open("a").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    assert!(e.to_string().contains("all 2 slots are held"), "{e}");
    // Another namespace on the same directory is independent.
    let b0 = open("b").unwrap();
    assert_eq!(b0.slot(), 0);
    drop((a0, a1, b0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unusable_directory_is_lease_unavailable() {
    let url = LeaseUrl::parse("file:/proc/snowmint-lease-nowhere").unwrap();
    let layout = Layout::preset("twitter").unwrap();
    let e = LeasedGenerator::open_with(
        &url,
        layout,
        &[("datacenter", 1)],
        Options::default(),
        None,
        SystemClock,
    )
    .unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    let m = e.to_string();
    assert!(
        m.starts_with(
            "file:/proc/snowmint-lease-nowhere: cannot create /proc/snowmint-lease-nowhere/v1-"
        ),
        "{m}"
    );
    assert!(m.ends_with("[lease_unavailable]"), "{m}");
}
