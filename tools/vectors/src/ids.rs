//! `vectors/ids.json`: composing and decoding IDs, and ID bounds.

use serde_json::{json, Value};
use snowmint::{Format, Id, Layout};

use crate::{layout_of, nodes_json};

fn decode_case(l: &Layout, spec: &str, id: u64) -> Value {
    match l.decompose(id) {
        Ok(p) => {
            let (lo, hi) = l.id_bounds(p.timestamp_ms()).unwrap();
            let mut b = [0u8; 20];
            json!({
                "layout": spec,
                "id": id.to_string(),
                "expect": {
                    "timestamp_ms": p.timestamp_ms(),
                    "sequence": p.sequence(),
                    "nodes": nodes_json(l, p.nodes()),
                    "base32": Id::new(id).encode(Format::Base32, &mut b).to_string(),
                    "bounds": [lo.to_string(), hi.to_string()],
                }
            })
        }
        Err(e) => json!({"layout": spec, "id": id.to_string(), "error": e.code()}),
    }
}

/// The contents of `vectors/ids.json`.
pub(crate) fn ids() -> Value {
    let mut decode = vec![
        decode_case(&layout_of("discord"), "discord", 175928847299117063),
        decode_case(&layout_of("twitter"), "twitter", 1541815603606036480),
    ];
    let mut compose = Vec::new();
    let mut bounds = Vec::new();
    let nowish = 1763812800000u64; // 2025-11-22T12:00:00Z
    for name in Layout::PRESETS {
        let l = layout_of(name);
        let maxes: Vec<u64> = l.nodes().map(|f| f.max()).collect();
        let ones: Vec<u64> = l.nodes().map(|f| 1.min(f.max())).collect();
        let t = if l.time_end_ms() <= nowish {
            1700000000000
        } else {
            nowish.max(l.epoch_ms())
        };
        let last = l.time_end_ms() - l.time_unit_ms();
        let plan: [(u64, u64, &[u64]); 4] = [
            (l.epoch_ms(), 0, &ones),
            (t + 7, 5, &ones),
            (t + 1234, l.sequence().max(), &maxes),
            (last, l.sequence().max(), &maxes),
        ];
        for (time, seq, nodes) in plan {
            let n = l.nodes_from_values(nodes).unwrap();
            let id = l.compose(time, seq, &n).unwrap();
            compose.push(json!({"layout": name, "timestamp_ms": time, "sequence": seq, "nodes": nodes_json(&l, nodes), "expect": id.to_string()}));
            decode.push(decode_case(&l, name, id.get()));
        }
        // Errors.
        let n = l.nodes_from_values(&ones).unwrap();
        let e = l.compose(l.epoch_ms().wrapping_sub(1), 0, &n);
        if l.epoch_ms() > 0 {
            compose.push(json!({"layout": name, "timestamp_ms": l.epoch_ms() - 1, "sequence": 0, "nodes": nodes_json(&l, &ones), "error": e.unwrap_err().code()}));
        }
        let e = l.compose(l.time_end_ms(), 0, &n).unwrap_err();
        compose.push(json!({"layout": name, "timestamp_ms": l.time_end_ms(), "sequence": 0, "nodes": nodes_json(&l, &ones), "error": e.code()}));
        let e = l.compose(t, l.sequence().max() + 1, &n).unwrap_err();
        compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": l.sequence().max() + 1, "nodes": nodes_json(&l, &ones), "error": e.code()}));
        if let Some(f) = l.node(0) {
            let mut m = nodes_json(&l, &ones);
            m[f.name()] = json!(f.max() + 1);
            compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "node_out_of_range"}));
            let mut m = nodes_json(&l, &ones);
            m.as_object_mut().unwrap().remove(f.name());
            compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "missing_node"}));
        }
        let mut m = nodes_json(&l, &ones);
        m["bogus"] = json!(1);
        compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "unknown_field"}));
        if l.total_bits() < 64 {
            decode.push(decode_case(&l, name, l.max_id().get() + 1));
            decode.push(decode_case(&l, name, u64::MAX));
        }
        for time in [l.epoch_ms(), t, t + 999, last] {
            let (lo, hi) = l.id_bounds(time).unwrap();
            bounds.push(json!({"layout": name, "timestamp_ms": time, "expect": [lo.to_string(), hi.to_string()]}));
        }
        if l.epoch_ms() > 0 {
            let e = l.id_bounds(l.epoch_ms() - 1).unwrap_err();
            bounds
                .push(json!({"layout": name, "timestamp_ms": l.epoch_ms() - 1, "error": e.code()}));
        }
        let e = l.id_bounds(l.time_end_ms()).unwrap_err();
        bounds.push(json!({"layout": name, "timestamp_ms": l.time_end_ms(), "error": e.code()}));
    }
    // "Which layout fits?": presets under which an ID decodes to a time
    // between the epoch and a day after now_ms.
    let mut fits = Vec::new();
    for id in [
        175928847299117063u64,
        1541815603606036480,
        7234567890123456789,
        115740947451117568,
    ] {
        let names: Vec<&str> = Layout::PRESETS
            .iter()
            .copied()
            .filter(|n| layout_of(n).is_plausible(id, nowish))
            .collect();
        fits.push(json!({"id": id.to_string(), "now_ms": nowish, "expect": names}));
    }
    json!({
        "_comment": "Compose, decompose, ID bounds and plausibility. IDs are decimal strings (JSON numbers lose \
            precision above 2^53 in JavaScript); times are Unix ms. `layout` is read as in layouts.json. \
            `decode`: decompose `id`; `expect` has `timestamp_ms` (start of the ID's time unit), `sequence`, \
            `nodes` (node field name -> value), `base32` (the ID's base32 form) and `bounds` (the smallest and \
            largest IDs of the same time unit, as decimal strings); or `error` is the code. `compose`: build an \
            ID from `timestamp_ms`, `sequence` and `nodes` (by name); `expect` is the ID or `error` the code. \
            `bounds`: the smallest and largest IDs whose time unit contains `timestamp_ms`, or `error`. \
            `fits`: the presets, in preset order, under which `id` decodes to a time between the layout's \
            epoch and `now_ms` plus one day (the decoder page's \"which layout fits?\").",
        "decode": decode,
        "compose": compose,
        "bounds": bounds,
        "fits": fits,
    })
}
