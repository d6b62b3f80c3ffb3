//! Leased generators in two databases of one server: each database has a
//! lease worker of its own (the launcher starts one on demand), and each
//! database's `lease => 'database'` generators claim in that database's
//! lease tables.

use super::*;

/// The held slots of namespace `twodb` in the lease tables of `c`'s
/// database.
fn held_twodb(c: &mut Client) -> Vec<i64> {
    crate::held_slots(c, "twodb", false)
        .into_iter()
        .map(|(slot, _)| slot)
        .collect()
}

fn listed_slot(c: &mut Client) -> Option<i64> {
    c.query(
        "SELECT slot FROM snowmint.leases() WHERE generator = 'twodb'",
        &[],
    )
    .unwrap()
    .first()
    .and_then(|r| r.get(0))
}

/// Two databases (`postgres`, A, and `snowmint_other`, B), each with a
/// leased generator named `twodb` in namespace `twodb`, and an application
/// holder in B's lease tables (same namespace) that claimed first: both
/// generators mint; A's node value is a slot held in A's tables, B's one
/// held in B's and not the application's; in each lease space no ID twice;
/// `snowmint.leases()` in each database lists that database's slot; a
/// lease worker runs in each database.
pub(super) fn two_databases(run: &mut Run, s: &Server) {
    let started = Instant::now();
    let layout = Layout::parse(WIDE).unwrap();
    let q = format!("namespace=twodb&{FAST}&window_ms=5000");
    let mut a = reconnect(s);
    // One statement each: DROP/CREATE DATABASE refuse a transaction block.
    // FORCE: a lease worker is connected to a database with leased
    // generators.
    a.batch_execute("DROP DATABASE IF EXISTS snowmint_other WITH (FORCE)")
        .unwrap();
    a.batch_execute("CREATE DATABASE snowmint_other").unwrap();
    let conninfo_b = s
        .conninfo
        .replace("dbname=postgres", "dbname=snowmint_other");
    let mut b = connect(&conninfo_b);
    b.batch_execute("CREATE EXTENSION snowmint").unwrap();
    let app_url = format!(
        "postgres://postgres@127.0.0.1:{}/snowmint_other?{q}",
        s.port
    );
    let app = LeasedGenerator::open(&app_url, layout, &[], Options::default())
        .expect("the application's lease in the second database");
    for c in [&mut a, &mut b] {
        c.execute(
            "SELECT snowmint.create_generator('twodb', $1, lease => $2)",
            &[&WIDE, &format!("database?{q}")],
        )
        .unwrap();
    }
    for (what, c) in [("first database", &mut a), ("second database", &mut b)] {
        if let Err(e) = wait_ready(c, "twodb", Duration::from_secs(20)) {
            run.check(false, || format!("two databases: {what}: {e}"));
            return;
        }
    }
    let ready = started.elapsed();
    let mut from_a = Vec::new();
    let mut from_b = Vec::new();
    let mut from_app = vec![0u64; 20_000];
    for round in 0..2 {
        for (what, c, out) in [("A", &mut a, &mut from_a), ("B", &mut b, &mut from_b)] {
            match ids(c, "twodb", 20_000) {
                Ok(v) => out.extend(v),
                Err(e) => run.check(false, || {
                    format!("two databases: {what} round {round}: {e:?}")
                }),
            }
        }
    }
    app.next_ids(&mut from_app).unwrap();
    let nodes =
        |v: &[i64]| -> HashSet<i64> { v.iter().map(|&id| node(&layout, id) as i64).collect() };
    let (nodes_a, nodes_b) = (nodes(&from_a), nodes(&from_b));
    let (held_a, held_b) = (held_twodb(&mut a), held_twodb(&mut b));
    let app_slot = app.slot() as i64;
    run.check(
        nodes_a.len() == 1 && nodes_a.iter().all(|n| held_a.contains(n)) && held_a.len() == 1,
        || format!("two databases: A's node values {nodes_a:?}, A's held slots {held_a:?}"),
    );
    run.check(
        nodes_b.len() == 1
            && nodes_b.iter().all(|n| held_b.contains(n) && *n != app_slot)
            && held_b.len() == 2
            && held_b.contains(&app_slot),
        || {
            format!(
                "two databases: B's node values {nodes_b:?}, B's held slots {held_b:?}, the \
                 application's slot {app_slot}"
            )
        },
    );
    let space_b: Vec<i64> = from_b
        .iter()
        .copied()
        .chain(from_app.iter().map(|&id| id as i64))
        .collect();
    for (what, v) in [("A", &from_a), ("B and the application", &space_b)] {
        let unique: HashSet<i64> = v.iter().copied().collect();
        run.check(!v.is_empty() && unique.len() == v.len(), || {
            format!(
                "two databases: {what}: {} IDs repeated of {}",
                v.len() - unique.len(),
                v.len()
            )
        });
    }
    let (listed_a, listed_b) = (listed_slot(&mut a), listed_slot(&mut b));
    run.check(
        listed_a.is_some_and(|s| nodes_a.contains(&s))
            && listed_b.is_some_and(|s| nodes_b.contains(&s)),
        || format!("two databases: snowmint.leases() lists {listed_a:?} in A, {listed_b:?} in B"),
    );
    let workers: Vec<String> = a
        .query(
            "SELECT datname::text FROM pg_stat_activity \
             WHERE backend_type = 'snowmint lease worker' ORDER BY datname",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    run.check(
        workers.contains(&"postgres".to_string())
            && workers.contains(&"snowmint_other".to_string()),
        || format!("two databases: lease workers in {workers:?}"),
    );
    println!(
        "lease: two databases, both minting after {ready:?}: A on slot {nodes_a:?} of its own \
         tables (held {held_a:?}), B on {nodes_b:?} beside the application's {app_slot} (held \
         {held_b:?}), {} + {} + {} IDs, lease workers in {workers:?}",
        from_a.len(),
        from_b.len(),
        from_app.len()
    );
    drop(app);
    drop(b);
    a.batch_execute("DROP DATABASE snowmint_other WITH (FORCE)")
        .unwrap();
}
