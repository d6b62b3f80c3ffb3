//! Bad input (an ERROR with its SQLSTATE and the core's code in DETAIL,
//! the connection still answering) and the generation refusals.

use postgres::Client;
use serde_json::Value as J;

use crate::{call, expect_error, Out, Run};

pub(crate) fn bad_input(run: &mut Run, c: &mut Client) {
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('nope')", &[]);
    expect_error(
        run,
        c,
        "unknown generator",
        out,
        "unknown_generator",
        Some("42704"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_ids('nope', 3)", &[]);
    expect_error(
        run,
        c,
        "unknown generator (batch)",
        out,
        "unknown_generator",
        Some("42704"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(1, 'twittter')", &[]);
    expect_error(
        run,
        c,
        "unknown preset",
        out,
        "unknown_preset",
        Some("22023"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(1, '{\"epoch_ms\": 0}')", &[]);
    expect_error(
        run,
        c,
        "bad descriptor",
        out,
        "invalid_layout",
        Some("22023"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('wide', 'twitter', '{\"datacenter\": 99, \"worker\": 1}')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "node value out of range",
        out,
        "node_out_of_range",
        Some("22003"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('half', 'twitter', '{\"worker\": 1}')::text",
        &[],
    );
    expect_error(run, c, "missing node", out, "missing_node", Some("22023"));
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('pol', 'twitter', '{\"datacenter\": 1, \"worker\": 1}', '{\"clock_backwards\": \"sometimes\"}')::text",
        &[],
    );
    expect_error(run, c, "bad policy", out, "invalid_option", Some("22023"));
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('leased', 'twitter', NULL, NULL, 'database')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "lease with two node fields left to lease",
        out,
        "invalid_option",
        Some("22023"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('orders', 'twitter', '{\"datacenter\": 1, \"worker\": 1}')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "duplicate generator",
        out,
        "duplicate_generator",
        Some("42710"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(-1)", &[]);
    expect_error(run, c, "negative ID", out, "invalid_id", Some("22003"));
    let out: Out<i64> = call(c, "SELECT snowmint.mask(1, '\\x0001'::bytea)", &[]);
    expect_error(
        run,
        c,
        "mask key of 2 bytes",
        out,
        "invalid_option",
        Some("22023"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.min_id('1970-01-01'::timestamptz)", &[]);
    expect_error(
        run,
        c,
        "time before the epoch",
        out,
        "time_before_epoch",
        None,
    );
    let out: Out<i64> = call(c, "SELECT snowmint.min_id('infinity'::timestamptz)", &[]);
    expect_error(
        run,
        c,
        "infinite time",
        out,
        "time_before_epoch",
        Some("22008"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_ids('orders', -1)::bigint", &[]);
    expect_error(
        run,
        c,
        "negative count",
        out,
        "invalid_option",
        Some("22003"),
    );
    let out: Out<String> = call(c, "SELECT snowmint.format_id(1, 'base64')", &[]);
    expect_error(run, c, "unknown format", out, "invalid_id", Some("22023"));
    // NULLs: the STRICT functions answer NULL; compose's NULL time is an error.
    let out: Out<Option<i64>> = call(c, "SELECT snowmint.next_id(NULL)", &[]);
    run.check(out == Out::Ok(None), || format!("next_id(NULL): {out:?}"));
    let out: Out<Option<J>> = call(c, "SELECT snowmint.decode(NULL)", &[]);
    run.check(out == Out::Ok(None), || format!("decode(NULL): {out:?}"));
    let out = c.query_one(
        "SELECT snowmint.compose(NULL, 0, '{\"datacenter\":1,\"worker\":1}')",
        &[],
    );
    run.check(out.is_err(), || "compose(NULL, ...) answered".into());
    let alive: Out<i32> = call(c, "SELECT 1", &[]);
    run.check(alive == Out::Ok(1), || {
        "compose(NULL): connection lost".into()
    });
    // A failed call inside a transaction rolls it back, nothing more.
    c.batch_execute("BEGIN").unwrap();
    let _: Out<i64> = call(c, "SELECT snowmint.next_id('nope')", &[]);
    c.batch_execute("ROLLBACK").unwrap();
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('orders')", &[]);
    run.check(matches!(out, Out::Ok(_)), || {
        format!("after a rollback: {out:?}")
    });
}

/// Generation refusals (55000) and the shared slots' limit (54000).
pub(crate) fn refusals(run: &mut Run, c: &mut Client) {
    // resume_after far ahead of the clock with clock_backwards = fail: the
    // shared state starts above it, and the clock reads as moved back.
    let ahead: i64 = c
        .query_one(
            "SELECT snowmint.compose('2040-01-01', 0, '{\"datacenter\": 31, \"worker\": 31}')",
            &[],
        )
        .unwrap()
        .get(0);
    let options = serde_json::json!({"resume_after": ahead.to_string(), "clock_backwards": "fail"});
    c.execute(
        "SELECT snowmint.create_generator('ahead', 'twitter', '{\"datacenter\": 31, \"worker\": 31}', $1)",
        &[&options],
    )
    .unwrap();
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('ahead')", &[]);
    expect_error(
        run,
        c,
        "clock behind resume_after",
        out,
        "clock_moved_backwards",
        Some("55000"),
    );
    // Every distinct node configuration takes a slot until the server stops:
    // the 65th is refused, the others keep working.
    let mut refused = None;
    for worker in 0..70 {
        let name = format!("slot{worker}");
        c.execute(
            "SELECT snowmint.create_generator($1, 'leaf', jsonb_build_object('worker', $2::int))",
            &[&name, &worker],
        )
        .unwrap();
        let out: Out<i64> = call(c, "SELECT snowmint.next_id($1)", &[&name]);
        if let Out::Err { sqlstate, code } = out {
            refused = Some((worker, sqlstate, code));
            break;
        }
    }
    run.check(
        matches!(&refused, Some((_, s, k)) if s == "54000" && k == "slots_full"),
        || format!("slots: {refused:?}"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('orders')", &[]);
    run.check(matches!(out, Out::Ok(_)), || {
        format!("after slots_full: {out:?}")
    });
    println!(
        "slots: the generator after {:?} more was refused",
        refused.map(|r| r.0)
    );
}
