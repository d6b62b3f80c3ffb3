//! The `snowmint lease` scenario every store runs through the built binary
//! (`lease_ops.rs`: the file store; `lease_stores.rs`: the stores across
//! machines). A live holder is a leased generator in the test process. Every
//! wait is bounded.
#![allow(dead_code)] // each test file uses some of it

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use snowmint::{ClockBackwards, Layout, Options};
use snowmint_lease::LeasedGenerator;

pub fn snowmint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snowmint"))
        .args(args)
        .output()
        .expect("run snowmint")
}

pub fn ok(args: &[&str]) -> String {
    let out = snowmint(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Fails with exit status 1 and one line on stderr with `[code]`; returns it.
pub fn fails(args: &[&str], code: &str) -> String {
    let out = snowmint(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(&format!("[{code}]")), "{args:?}: {err}");
    err
}

pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// A namespace of this run and test.
pub fn unique_ns(tag: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!("cli{}-{t}-{tag}", std::process::id())
}

/// `url`: a lease URL with a namespace of its own that renews often.
/// `expires`: the store has a TTL (every store but the file store).
pub fn scenario(url: &str, expires: bool) {
    assert!(ok(&["lease", "init", "--store", url]).ends_with(": ready\n"));
    assert_eq!(ok(&["lease", "list", "--store", url, "--json"]), "");
    fails(
        &["lease", "release", "--store", url, "--slot", "0"],
        "invalid_option",
    );

    let options = Options {
        clock_backwards: ClockBackwards::Wait { max_units: 10_000 },
        ..Options::default()
    };
    let layout = Layout::preset("twitter").unwrap();
    let g = LeasedGenerator::open(url, layout, &[("datacenter", 1)], options).unwrap();
    let last = g.next_id().unwrap().get();
    let info = g.info();
    let slot = info.slot.to_string();

    // --json: a space object, then one object per slot.
    let lines = json_lines(&ok(&["lease", "list", "--store", url, "--json"]));
    assert_eq!(lines.len(), 2, "{lines:?}");
    let space = &lines[0];
    assert_eq!(space["type"], "space");
    assert_eq!(space["space"], info.space_key.as_str());
    assert_eq!(space["slots"], 32);
    assert_eq!(space["leased"], "5@12");
    assert!(space["text"]
        .as_str()
        .unwrap()
        .starts_with("snowmint lease space v1\n"));
    let rec = &lines[1];
    assert_eq!(rec["type"], "slot");
    assert_eq!(rec["space"], info.space_key.as_str());
    assert_eq!(rec["slot"], info.slot);
    assert_eq!(rec["state"], "held");
    assert_eq!(rec["claim"], info.counter);
    let token = rec["holder"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 32);
    let hwm = rec["hwm_ms"].as_u64().unwrap();
    assert!(hwm >= layout.decompose(last).unwrap().timestamp_ms());
    assert!(rec["reserved_until"].as_str().unwrap().ends_with('Z'));
    if expires {
        assert!(rec["expires_ms"].as_u64().unwrap() > space["now_ms"].as_u64().unwrap());
        assert!(rec["expires"].as_str().unwrap().ends_with('Z'));
    } else {
        assert!(rec["expires_ms"].is_null() && rec["expires"].is_null());
    }

    // The columns: the space, the slot held by the token's first 8 digits.
    let text = ok(&["lease", "list", "--store", url]);
    assert!(text.contains(&info.space_key), "{text}");
    let row = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(slot.as_str()))
        .unwrap_or_else(|| panic!("no row for slot {slot}: {text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[1], "held", "{row}");
    assert_eq!(cols[2], info.counter.to_string(), "{row}");
    assert_eq!(cols[3], &token[..8], "{row}");
    assert!(cols.last().unwrap().ends_with('Z'), "{row}");

    // Refused without --force; then forced.
    let err = fails(
        &["lease", "release", "--store", url, "--slot", &slot],
        "invalid_option",
    );
    assert!(
        err.contains("pass --force if you know the holder is gone"),
        "{err}"
    );
    assert!(
        err.contains(if expires {
            "held until 20"
        } else {
            "held while"
        }),
        "{err}"
    );
    fails(
        &[
            "lease", "release", "--store", url, "--slot", "32", "--force",
        ],
        "invalid_option",
    );
    let out = json_lines(&ok(&[
        "lease",
        "release",
        "--store",
        url,
        "--space",
        &info.space_key,
        "--slot",
        &slot,
        "--force",
        "--json",
    ]));
    assert_eq!(out[0]["released"], true, "{out:?}");
    assert_eq!(out[0]["before"]["state"], "held");
    let kept = out[0]["before"]["hwm_ms"].as_u64().unwrap();
    assert!(kept >= hwm);

    // The holder stops; the slot is free with its hwm.
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().lost.is_none() {
        assert!(
            Instant::now() < deadline,
            "the holder never saw the slot lost"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(g.next_id().unwrap_err().code(), "lease_expired");
    let lines = json_lines(&ok(&["lease", "list", "--store", url, "--json"]));
    assert_eq!(lines[1]["state"], "free");
    assert!(lines[1]["holder"].is_null());
    assert_eq!(lines[1]["hwm_ms"], kept);
    let text = ok(&["lease", "release", "--store", url, "--slot", &slot]);
    assert!(text.contains("is free: nothing to release"), "{text}");
    let _ = g.close();
}
