//! `IdMask`: errors, round trips on random layouts, an exhaustive bijection
//! on a 20-bit layout, statistics of masked consecutive IDs, and the shared
//! vectors (`vectors/mask.json`).
#![cfg(feature = "mask")]

use proptest::prelude::*;
use serde_json::Value;
use snowmint::{Format, Id, IdMask, Layout};

const KEY16: [u8; 16] = *b"0123456789abcdef";
const KEY32: [u8; 32] = *b"0123456789abcdef0123456789abcdef";

fn layout(ts: u32, seq: u32, node: u32) -> Layout {
    let mut fields = vec![("timestamp", ts), ("sequence", seq)];
    if node > 0 {
        fields.push(("node", node));
    }
    Layout::new(0, 1, &fields).unwrap()
}

#[test]
fn errors() {
    let twitter = Layout::preset("twitter").unwrap();
    for len in [0, 1, 15, 17, 24, 31, 33, 64] {
        let err = IdMask::new(twitter, &vec![1u8; len], b"").unwrap_err();
        assert_eq!(err.code(), "invalid_option", "key of {len} bytes");
        assert!(err.to_string().contains("16 or 32 bytes"), "{err}");
    }
    // 19 bits: below FF1's minimum domain of 10^6 values.
    let err = IdMask::new(layout(10, 5, 4), &KEY16, b"").unwrap_err();
    assert_eq!(err.code(), "invalid_layout");
    assert!(err.to_string().contains("19 bits"), "{err}");
    let m = IdMask::new(layout(10, 5, 5), &KEY16, b"").unwrap();
    assert_eq!(m.mask((1u64 << 20) - 1).unwrap().get() >> 20, 0);
    for v in [1u64 << 20, u64::MAX] {
        assert_eq!(m.mask(v).unwrap_err().code(), "invalid_id");
        assert_eq!(m.unmask(v).unwrap_err().code(), "invalid_id");
    }
    let m = IdMask::new(twitter, &KEY32, b"t").unwrap();
    assert_eq!(m.mask(1u64 << 63).unwrap_err().code(), "invalid_id");
    assert_eq!(m.unmask(u64::MAX).unwrap_err().code(), "invalid_id");
}

#[test]
fn hex_keys_and_tweaks() {
    assert_eq!(IdMask::bytes_from_hex("").unwrap(), Vec::<u8>::new());
    assert_eq!(
        IdMask::bytes_from_hex("000102ABcdEF").unwrap(),
        vec![0, 1, 2, 0xab, 0xcd, 0xef]
    );
    let secret = "0123456789abcdef0123456789abcdeX";
    for bad in ["0", "abc", "0g", "zz", " 00", "00 ", "0x00", "é0", secret] {
        let err = IdMask::bytes_from_hex(bad).unwrap_err();
        assert_eq!(err.code(), "invalid_option", "{bad:?}");
        assert!(!err.to_string().contains("0123456789abcdef"), "{err}");
    }
    // The same mask from bytes and from hex.
    let twitter = Layout::preset("twitter").unwrap();
    let key = IdMask::bytes_from_hex("30313233343536373839616263646566").unwrap();
    assert_eq!(key, KEY16);
    let a = IdMask::new(twitter, &KEY16, b"t").unwrap();
    let b = IdMask::new(twitter, &key, &IdMask::bytes_from_hex("74").unwrap()).unwrap();
    assert_eq!(a.mask(12345u64).unwrap(), b.mask(12345u64).unwrap());
}

#[test]
fn shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<IdMask>();
    let m = IdMask::new(Layout::preset("twitter").unwrap(), &KEY16, b"").unwrap();
    let m = &m;
    let ids: Vec<u64> = std::thread::scope(|s| {
        let h: Vec<_> = (0..2u64)
            .map(|t| s.spawn(move || m.mask(t * 1000).unwrap().get()))
            .collect();
        h.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(m.unmask(ids[1]).unwrap(), 1000);
}

#[test]
fn debug_hides_the_key() {
    // A key whose bytes are recognisable in any rendering.
    let key = [0xabu8; 32];
    let m = IdMask::new(Layout::preset("twitter").unwrap(), &key, b"orders").unwrap();
    let s = format!("{m:?} {m:#?}");
    assert!(s.contains("AES-256") && s.contains("<hidden>"), "{s}");
    for needle in ["171", "ab", "AB", "0xab", "[171"] {
        assert!(!s.contains(needle), "Debug shows {needle:?}: {s}");
    }
}

#[test]
fn keys_and_tweaks_change_the_permutation() {
    let l = Layout::preset("twitter").unwrap();
    let id = 1541815603606036480u64;
    let a = IdMask::new(l, &KEY16, b"").unwrap().mask(id).unwrap();
    let b = IdMask::new(l, &KEY16, b"orders").unwrap().mask(id).unwrap();
    let c = IdMask::new(l, &KEY32, b"").unwrap().mask(id).unwrap();
    let mut k = KEY16;
    k[15] ^= 1;
    let d = IdMask::new(l, &k, b"").unwrap().mask(id).unwrap();
    assert!(a != b && a != c && a != d && b != c && b != d && c != d);
    assert!(a.get() < 1 << 63);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    #[test]
    fn round_trip(
        ts in 10u32..=43, seq in 5u32..=12, node in 5u32..=9,
        raw in any::<u64>(), long in any::<bool>(),
        tweak in proptest::collection::vec(any::<u8>(), 0..40),
        key in proptest::collection::vec(any::<u8>(), 32),
    ) {
        let l = layout(ts, seq, node);
        let key = if long { &key[..] } else { &key[..16] };
        let m = IdMask::new(l, key, &tweak).unwrap();
        let id = raw & l.max_id().get();
        let public = m.mask(id).unwrap();
        prop_assert!(public <= l.max_id());
        prop_assert_eq!(m.unmask(public).unwrap(), id);
        // Masking is a permutation, so unmask-then-mask is the identity too.
        prop_assert_eq!(m.mask(m.unmask(id).unwrap()).unwrap(), id);
        for f in [Format::Decimal, Format::Base32, Format::Base62] {
            let back = Id::parse(&public.to_string_in(f), f).unwrap();
            prop_assert_eq!(m.unmask(back).unwrap(), id);
        }
    }
}

#[test]
fn bijection_on_20_bits() {
    let l = layout(10, 5, 5);
    assert_eq!(l.total_bits(), 20);
    let m = IdMask::new(l, &KEY16, b"bijection").unwrap();
    let n = 1usize << 20;
    let mut seen = vec![false; n];
    // The public ID of every ID, kept: the second loop checks unmask against
    // it instead of masking every ID a second time (a third of the FF1 calls).
    let mut public = vec![0u64; n];
    let mut fixed = 0;
    for id in 0..n as u64 {
        let p = m.mask(id).unwrap().get();
        assert!(p < n as u64);
        assert!(!seen[p as usize], "{p} is the public ID of two IDs");
        seen[p as usize] = true;
        public[id as usize] = p;
        fixed += usize::from(p == id);
    }
    // Every public ID was hit once; and each unmasks to a distinct ID, its
    // preimage.
    let mut back = vec![false; n];
    for p in 0..n as u64 {
        let id = m.unmask(p).unwrap().get();
        assert!(!back[id as usize], "two public IDs unmask to {id}");
        back[id as usize] = true;
        assert_eq!(
            public[id as usize], p,
            "unmask({p}) = {id}, whose public ID is another"
        );
    }
    // A random permutation has about one fixed point (Poisson, mean 1).
    assert!(fixed < 12, "{fixed} fixed points");
}

#[test]
fn masked_consecutive_ids_show_no_order_and_uniform_top_bits() {
    let l = Layout::preset("twitter").unwrap();
    let m = IdMask::new(l, &KEY32, b"stats").unwrap();
    // Consecutive IDs: one worker's IDs over consecutive milliseconds.
    let start = 1541815603606036480u64;
    let count = 40_000u64;
    let masked: Vec<u64> = (0..count)
        .map(|i| m.mask(start + i).unwrap().get())
        .collect();
    let decreases = masked.windows(2).filter(|w| w[1] < w[0]).count() as f64;
    let pairs = (count - 1) as f64;
    // Half of the pairs decrease, give or take 1% (the standard deviation is
    // 0.25%; the key is fixed, so the count is too).
    assert!(
        (decreases / pairs - 0.5).abs() < 0.01,
        "{decreases} of {pairs} decrease"
    );
    // The top 4 of the 63 bits: 16 buckets, chi-square with 15 degrees of
    // freedom below 50 (p ~ 1e-5 for a uniform source).
    let mut buckets = [0f64; 16];
    for p in &masked {
        assert!(*p < 1 << 63);
        buckets[(p >> 59) as usize] += 1.0;
    }
    let expect = count as f64 / 16.0;
    let chi2: f64 = buckets.iter().map(|b| (b - expect).powi(2) / expect).sum();
    assert!(chi2 < 50.0, "chi-square {chi2}: {buckets:?}");
    // Each single bit is set about half the time.
    for bit in 0..63 {
        let ones = masked.iter().filter(|p| (*p >> bit) & 1 == 1).count() as f64;
        assert!(
            (ones / count as f64 - 0.5).abs() < 0.02,
            "bit {bit}: {ones}"
        );
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_str().expect("decimal string").parse().unwrap()
}

#[test]
fn vectors() {
    let v: Value = serde_json::from_str(include_str!("data/mask.json")).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 8);
    let mut pairs_seen = 0;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let l = Layout::parse(c["layout"].as_str().unwrap()).unwrap();
        let m = IdMask::new(
            l,
            &hex(c["key"].as_str().unwrap()),
            &hex(c["tweak"].as_str().unwrap()),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        for p in c["pairs"].as_array().unwrap() {
            let (id, public) = (u(&p["id"]), u(&p["public"]));
            assert_eq!(m.mask(id).unwrap(), public, "{name}: mask {id}");
            assert_eq!(m.unmask(public).unwrap(), id, "{name}: unmask {public}");
            let b32 = p["base32"].as_str().unwrap();
            let b62 = p["base62"].as_str().unwrap();
            assert_eq!(Id::new(public).to_string_in(Format::Base32), b32, "{name}");
            assert_eq!(Id::new(public).to_string_in(Format::Base62), b62, "{name}");
            pairs_seen += 1;
        }
    }
    assert!(pairs_seen >= 50);
    for e in v["errors"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let l = Layout::parse(e["layout"].as_str().unwrap()).unwrap();
        let r = IdMask::new(
            l,
            &hex(e["key"].as_str().unwrap()),
            &hex(e["tweak"].as_str().unwrap()),
        );
        let got = match e["op"].as_str().unwrap() {
            "new" => r.map(|_| ()),
            "mask" => r.unwrap().mask(u(&e["value"])).map(|_| ()),
            "unmask" => r.unwrap().unmask(u(&e["value"])).map(|_| ()),
            op => panic!("{name}: unknown op {op}"),
        };
        assert_eq!(got.unwrap_err().code(), e["error"], "{name}");
    }
}
