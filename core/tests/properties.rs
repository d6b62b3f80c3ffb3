//! Property tests: round trips for any layout, and no repeated or decreasing
//! ID under any policy for any clock script.

use proptest::prelude::*;
use snowmint::{Format, Id, Layout, Next, Options, PureGenerator};

/// A random valid layout: timestamp first, then the sequence and up to four
/// node fields in a random order, at most 64 bits, time range within 2^53 ms.
fn layouts() -> impl Strategy<Value = Layout> {
    (
        1u32..=41,
        1u32..=20,
        prop::collection::vec(1u32..=12, 0..4),
        0usize..5,
        0u64..1_700_000_000_000,
        prop::sample::select(vec![1u64, 10, 1000]),
    )
        .prop_filter_map("fits", |(tb, sb, nodes, seq_pos, epoch, unit)| {
            let mut fields: Vec<(String, u32)> = nodes
                .iter()
                .enumerate()
                .map(|(i, &b)| (format!("n{i}"), b))
                .collect();
            fields.insert(seq_pos.min(fields.len()), ("sequence".into(), sb));
            fields.insert(0, ("timestamp".into(), tb));
            let refs: Vec<(&str, u32)> = fields.iter().map(|(n, b)| (n.as_str(), *b)).collect();
            Layout::new(epoch, unit, &refs).ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn compose_decompose_round_trip(l in layouts(), seeds in prop::array::uniform8(any::<u64>()), t in any::<u64>()) {
        let nodes: Vec<u64> = l.nodes().zip(seeds).map(|(f, s)| s & f.max()).collect();
        let n = l.nodes_from_values(&nodes).unwrap();
        let seq = seeds[7] & l.sequence().max();
        let span = l.time_end_ms() - l.epoch_ms();
        let time = l.epoch_ms() + t % span;
        let id = l.compose(time, seq, &n).unwrap();
        prop_assert!(id <= l.max_id());
        let p = l.decompose(id).unwrap();
        prop_assert_eq!(p.nodes(), &nodes[..]);
        prop_assert_eq!(p.sequence(), seq);
        let mut f = [0.0; 8];
        prop_assert_eq!(l.decompose_f64(id, &mut f), Ok(2 + nodes.len()));
        prop_assert_eq!(f[0], p.timestamp_ms() as f64);
        prop_assert_eq!(f[1], seq as f64);
        for (i, &v) in nodes.iter().enumerate() {
            prop_assert_eq!(f[2 + i], v as f64);
        }
        // The timestamp is the start of the time unit that contains `time`.
        prop_assert!(p.timestamp_ms() <= time && time - p.timestamp_ms() < l.time_unit_ms());
        let (lo, hi) = l.id_bounds(time).unwrap();
        prop_assert!(lo <= id && id <= hi);
        // And the descriptor survives JSON.
        prop_assert_eq!(Layout::from_json(&l.to_json()).unwrap(), l);
    }

    #[test]
    fn string_forms_round_trip_and_sort(a in any::<u64>(), b in any::<u64>()) {
        for f in Format::ALL {
            let (mut ba, mut bb) = ([0u8; 20], [0u8; 20]);
            let sa = Id::new(a).encode(f, &mut ba).to_string();
            let sb = Id::new(b).encode(f, &mut bb).to_string();
            prop_assert_eq!(Id::parse(&sa, f).unwrap().get(), a);
            if f != Format::Decimal {
                // Fixed-length forms sort like the numbers.
                prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
            }
        }
        let mut buf = [0u8; 20];
        let lower = Id::new(a).encode(Format::Base32, &mut buf).to_ascii_lowercase();
        prop_assert_eq!(Id::parse(&lower, Format::Base32).unwrap().get(), a);
    }

    #[test]
    fn any_clock_script_gives_strictly_increasing_ids(
        l in layouts(),
        steps in prop::collection::vec((-40i64..60, 1usize..6), 1..60),
        clock in 0usize..3, clock_n in 0u64..8,
        exhausted in 0usize..2, exhausted_n in 0u64..8,
        start in 0usize..3, start_n in 1u64..300,
        seed in any::<u64>(),
    ) {
        let opts = Options {
            clock_backwards: [
            snowmint::ClockBackwards::Fail,
            snowmint::ClockBackwards::Wait { max_units: clock_n },
            snowmint::ClockBackwards::Borrow { max_units: clock_n },
        ][clock],
            sequence_exhausted: [
            snowmint::SequenceExhausted::Wait,
            snowmint::SequenceExhausted::Borrow { max_units: exhausted_n },
        ][exhausted],
            sequence_start: [
            snowmint::SequenceStart::Zero,
            snowmint::SequenceStart::Random { below: start_n },
            snowmint::SequenceStart::Cycle { period: start_n },
        ][start],
            seed,
            resume_after: None,
        };
        let nodes: Vec<u64> = l.nodes().map(|f| f.max() / 2).collect();
        let n = l.nodes_from_values(&nodes).unwrap();
        let mut g = PureGenerator::new(l, n, opts).unwrap();
        // Start in the middle of the layout's life so steps back stay after the epoch.
        let mut now = l.epoch_ms() + (l.time_end_ms() - l.epoch_ms()) / 2;
        let mut last: Option<u64> = None;
        for (delta_units, calls) in steps {
            now = now.saturating_add_signed(delta_units * l.time_unit_ms() as i64 / 3);
            for _ in 0..calls {
                match g.next(now) {
                    Ok(Next::Id(id)) => {
                        let id = id.get();
                        if let Some(prev) = last {
                            prop_assert!(id > prev, "{} after {}", id, prev);
                        }
                        let p = l.decompose(id).unwrap();
                        prop_assert_eq!(p.nodes(), &nodes[..]);
                        // Never further ahead of the clock than the policies allow.
                        let lead = match (opts.clock_backwards, opts.sequence_exhausted) {
                            (snowmint::ClockBackwards::Borrow { max_units: a }, snowmint::SequenceExhausted::Borrow { max_units: b }) => a.max(b),
                            (snowmint::ClockBackwards::Borrow { max_units: a }, _) => a,
                            (_, snowmint::SequenceExhausted::Borrow { max_units: b }) => b,
                            _ => 0,
                        };
                        let now_tick = l.tick_of(now).unwrap();
                        prop_assert!(p.tick() <= now_tick + lead);
                        last = Some(id);
                    }
                    Ok(Next::RetryAt(at)) => prop_assert!(at > now),
                    Err(e) => prop_assert!(
                        ["clock_moved_backwards", "time_overflow", "time_before_epoch"].contains(&e.code()),
                        "{}", e
                    ),
                }
            }
        }
    }
}
