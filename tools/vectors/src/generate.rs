//! `vectors/generate.json`: scripts for the pure generator (the clock is
//! injected), reservations included.

use serde_json::{json, Map, Value};
use snowmint::{Id, Next, Options, PureGenerator};

use crate::layout_of;

struct Script {
    name: &'static str,
    layout: &'static str,
    nodes: Vec<(&'static str, u64)>,
    policies: [Option<&'static str>; 3],
    seed: u64,
    resume_after: Option<u64>,
    times: Vec<u64>,
}

/// Reservations set during a script: (step index, `reserve_until`'s value).
type Reservations = Vec<(usize, Option<u64>)>;

/// Runs a script; `reserve` sets the reservation (`reserve_until`) before
/// the step of that index (`None` removes it).
fn run_script(s: &Script, reserve: &[(usize, Option<u64>)]) -> Value {
    let l = layout_of(s.layout);
    let mut options = json!({});
    for (key, v) in ["clock_backwards", "sequence_exhausted", "sequence_start"]
        .iter()
        .zip(s.policies)
    {
        if let Some(v) = v {
            options[*key] = json!(v);
        }
    }
    options["seed"] = json!(s.seed.to_string());
    if let Some(r) = s.resume_after {
        options["resume_after"] = json!(r.to_string());
    }
    let mut nodes = Map::new();
    for (k, v) in &s.nodes {
        nodes.insert(k.to_string(), json!(v));
    }
    let mut case = json!({"name": s.name, "layout": s.layout, "nodes": nodes, "options": options});
    let built = l.nodes_from_pairs(s.nodes.iter().copied()).and_then(|n| {
        let mut o = Options::from_policies(s.policies[0], s.policies[1], s.policies[2])?;
        o.seed = s.seed;
        o.resume_after = s.resume_after.map(Id::new);
        PureGenerator::new(l, n, o)
    });
    let mut g = match built {
        Ok(g) => g,
        Err(e) => {
            case["error"] = json!(e.code());
            return case;
        }
    };
    let mut steps = Vec::new();
    for (i, &now) in s.times.iter().enumerate() {
        for &(_, until) in reserve.iter().filter(|(at, _)| *at == i) {
            g.reserve_until(until);
            steps.push(json!({"reserve_until_ms": until}));
        }
        steps.push(match g.next(now) {
            Ok(Next::Id(id)) => json!({"now_ms": now, "id": id.get().to_string()}),
            Ok(Next::RetryAt(at)) => json!({"now_ms": now, "retry_at": at}),
            Err(e) => json!({"now_ms": now, "error": e.code()}),
        });
    }
    case["steps"] = json!(steps);
    case
}

/// 2025-11-22T12:00:00Z, the time the scripts run around.
const T: u64 = 1763812800000;
/// An hour in ms.
const H: u64 = 3_600_000;
/// 2 sequence bits: 4 IDs per unit, so exhaustion shows in a few steps.
const SMALL: &str =
    r#"{"epoch_ms":1700000000000,"fields":[["timestamp",41],["node",4],["sequence",2]]}"#;
/// A layout whose time field ends soon after its epoch (16 units of 1 s).
const SHORT: &str =
    r#"{"epoch_ms":1700000000000,"time_unit_ms":1000,"fields":[["timestamp",4],["sequence",2]]}"#;
/// Policies that make every step exact: fail, wait, zero.
const ZERO: [Option<&str>; 3] = [Some("fail"), Some("wait"), Some("zero")];

/// Twitter's node values in most scripts.
fn tw() -> Vec<(&'static str, u64)> {
    vec![("datacenter", 1), ("worker", 3)]
}

/// The contents of `vectors/generate.json`.
pub(crate) fn generate() -> Value {
    let scripts = [
        sequence_scripts(),
        clock_scripts(),
        start_scripts(),
        time_range_scripts(),
        error_scripts(),
    ];
    let mut cases: Vec<Value> = scripts
        .iter()
        .flatten()
        .map(|s| run_script(s, &[]))
        .collect();
    cases.extend(reserved_scripts().iter().map(|(s, r)| run_script(s, r)));
    json!({
        "_comment": "Generation scripts for the pure generator (the clock is injected). Build a generator from \
            `layout` (as in layouts.json), `nodes` (field name -> value) and `options`: `clock_backwards`, \
            `sequence_exhausted`, `sequence_start` (policy strings; an absent key means the default), `seed` \
            (decimal string; the pure generator uses it as given, 0 included) and `resume_after` (decimal \
            string, optional). If the case has `error`, building must fail with that code. Otherwise feed each \
            step's `now_ms` (Unix ms) in order and expect exactly one of: `id` (decimal string), `retry_at` \
            (no ID before that Unix ms; the state is unchanged) or `error` (the code; the state is unchanged). \
            A step with `reserve_until_ms` instead of `now_ms` sets the generator's reservation \
            (`reserve_until`: IDs only in time units up to the one holding that Unix ms, `lease_expired` \
            past it; null removes the bound) and expects nothing.",
        "cases": cases,
    })
}

/// Sequences within a unit and its exhaustion.
fn sequence_scripts() -> Vec<Script> {
    vec![
        Script {
            name: "twitter: same ms counts up, new ms restarts at 0",
            layout: "twitter",
            nodes: tw(),
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![T, T, T, T + 1, T + 5, T + 5],
        },
        Script {
            name: "exhausted, wait: retry at the next unit",
            layout: SMALL,
            nodes: vec![("node", 9)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![T, T, T, T, T, T, T + 1, T + 1],
        },
        Script {
            name: "exhausted, borrow:2: runs up to 2 units ahead, then waits",
            layout: SMALL,
            nodes: vec![("node", 9)],
            policies: [Some("fail"), Some("borrow:2"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T; 14]
                .into_iter()
                .chain([T + 1, T + 1, T + 3])
                .collect(),
        },
    ]
}

/// The clock moving backwards, under each clock policy.
fn clock_scripts() -> Vec<Script> {
    vec![
        Script {
            name: "clock back 1 ms, fail",
            layout: "twitter",
            nodes: tw(),
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![T, T - 1, T, T],
        },
        Script {
            name: "clock back 3 ms, wait:5: retry at the last ID's ms",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T, T + 2, T + 3, T + 4],
        },
        Script {
            name: "clock back 6 ms, wait:5: fails",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 6, T, T + 1, T + 6],
        },
        Script {
            name: "clock back an hour, wait:5: fails until the clock catches up",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T, T - H, T - 5, T + 1],
        },
        Script {
            name: "clock back 3 ms, borrow:10: keeps issuing on the last ms",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("borrow:10"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T, T + 1, T + 4],
        },
        Script {
            name: "clock back, borrow:2 with 4 IDs per unit: borrows units, then waits, then fails",
            layout: SMALL,
            nodes: vec![("node", 1)],
            policies: [Some("borrow:2"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![
                T + 2,
                T + 2,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T - 5,
            ],
        },
        Script {
            name: "clock back an hour, borrow:10: fails",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("borrow:10"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T, T - H],
        },
    ]
}

/// Where each unit's sequence starts (random, cycle, the defaults).
fn start_scripts() -> Vec<Script> {
    vec![
        Script {
            name: "random:16 start, seed 42",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("fail"), Some("wait"), Some("random:16")],
            seed: 42,
            resume_after: None,
            times: vec![T, T, T + 1, T + 2, T + 3, T + 4, T + 5, T + 6, T + 7],
        },
        Script {
            name: "random:100 start (Leaf's bound), seed 7",
            layout: "leaf",
            nodes: vec![("worker", 5)],
            policies: [Some("fail"), Some("wait"), Some("random:100")],
            seed: 7,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 3],
        },
        Script {
            name: "random bound above the sequence range is capped",
            layout: SMALL,
            nodes: vec![("node", 2)],
            policies: [Some("fail"), Some("wait"), Some("random:1000")],
            seed: 3,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 4],
        },
        Script {
            name: "cycle:2 start (vibration)",
            layout: "shardingsphere",
            nodes: vec![("worker", 7)],
            policies: [Some("fail"), Some("wait"), Some("cycle:2")],
            seed: 0,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 3],
        },
        Script {
            name: "default options, seed 1",
            layout: "twitter",
            nodes: tw(),
            policies: [None, None, None],
            seed: 1,
            resume_after: None,
            times: vec![T, T, T + 1, T - 2, T + 1],
        },
    ]
}

/// The ends of a layout's time range, another time unit, and resuming above a previous run.
fn time_range_scripts() -> Vec<Script> {
    // The last ID of a previous run: 3 ms after the times of the steps below.
    let twitter = layout_of("twitter");
    let resume = twitter
        .compose(
            T + 10_000_003,
            7,
            &twitter.nodes_from_values(&[1, 3]).unwrap(),
        )
        .unwrap()
        .get();
    vec![
        Script {
            name: "sonyflake: 10 ms units, machine last, retry at unit boundary",
            layout: "sonyflake",
            nodes: vec![("machine", 513)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T + 9, T + 10, T + 25, T + 12],
        },
        Script {
            name: "baidu ran out on 2024-11-20: time_overflow",
            layout: "baidu",
            nodes: vec![("worker", 1)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![T, 1732109055999, 1732109056000],
        },
        Script {
            name: "before the epoch",
            layout: "sonyflake-v2",
            nodes: vec![("machine", 1)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![1735689599999, 1735689600000],
        },
        Script {
            name: "short layout: last unit, then overflow; exhaustion in the last unit overflows",
            layout: SHORT,
            nodes: vec![],
            policies: [Some("fail"), Some("borrow:5"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![
                1700000014000,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000016000,
            ],
        },
        Script {
            name: "resume_after: continue above the last run's ID",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: Some(resume),
            times: vec![T + 10_000_000, T + 10_000_003, T + 10_000_010],
        },
    ]
}

/// Generators that cannot be built: each fails with its code.
fn error_scripts() -> Vec<Script> {
    vec![
        Script {
            name: "node out of range",
            layout: "twitter",
            nodes: vec![("datacenter", 32), ("worker", 3)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "missing node",
            layout: "twitter",
            nodes: vec![("worker", 3)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "unknown node field",
            layout: "twitter",
            nodes: vec![("datacenter", 1), ("worker", 3), ("rack", 1)],
            policies: ZERO,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: wait without N",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait"), None, None],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: random:0",
            layout: "twitter",
            nodes: tw(),
            policies: [None, None, Some("random:0")],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: borrow:-1",
            layout: "twitter",
            nodes: tw(),
            policies: [None, Some("borrow:-1"), None],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "resume_after wider than the layout",
            layout: "twitter",
            nodes: tw(),
            policies: ZERO,
            seed: 0,
            resume_after: Some(1 << 63),
            times: vec![],
        },
    ]
}

/// Reservations (a lease's confirmed high-water mark): never an ID in a
/// time unit past it, whatever the policies would allow. Each script with
/// the steps before which its reservation changes.
fn reserved_scripts() -> [(Script, Reservations); 5] {
    [
        (
            Script {
                name: "reservation: IDs up to its unit, lease_expired after, raised, removed",
                layout: "twitter",
                nodes: tw(),
                policies: ZERO,
                seed: 0,
                resume_after: None,
                times: vec![T, T + 5, T + 6, T + 7, T + 7, T + 20, T + 21, T + 30],
            },
            vec![(0, Some(T + 5)), (4, Some(T + 20)), (7, None)],
        ),
        (
            Script {
                name: "reservation: a unit of 1 s holds the reserved ms (sonyflake)",
                layout: "sonyflake",
                nodes: vec![("machine", 7)],
                policies: ZERO,
                seed: 0,
                resume_after: None,
                times: vec![T, T + 9, T + 10, T + 999, T + 1_000],
            },
            vec![(0, Some(T + 10))],
        ),
        (
            Script {
                name: "reservation: borrowing stops at it (exhausted, borrow:2)",
                layout: SMALL,
                nodes: vec![("node", 9)],
                policies: [Some("fail"), Some("borrow:2"), Some("zero")],
                seed: 0,
                resume_after: None,
                times: vec![T; 10],
            },
            vec![(0, Some(T + 1))],
        ),
        (
            Script {
                name: "reservation: the clock waiting back (wait:5) is still refused past it",
                layout: "twitter",
                nodes: tw(),
                policies: [Some("wait:5"), Some("wait"), Some("zero")],
                seed: 0,
                resume_after: None,
                times: vec![T, T + 8, T + 3, T + 8],
            },
            vec![(0, Some(T + 8)), (2, Some(T + 2))],
        ),
        (
            Script {
                name: "reservation: before the epoch, nothing may be issued",
                layout: "twitter",
                nodes: tw(),
                policies: ZERO,
                seed: 0,
                resume_after: None,
                times: vec![T, T],
            },
            vec![(0, Some(0)), (1, Some(T))],
        ),
    ]
}
