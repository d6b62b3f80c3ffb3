//! Leased generators in several databases of one server: each database has
//! a lease worker of its own (the launcher starts one on demand), and each
//! database's `lease => 'database'` generators claim in that database's
//! lease tables. A server serves leased generators in at most 8 databases
//! at once: in a ninth they are refused at once and clearly, never minted.

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

/// How many databases a server serves leased generators in at once (the
/// extension's shared table, `DATABASES` in bindings-postgres/src/lease.rs).
const DATABASES: usize = 8;

/// A refusal as a client sees it.
#[derive(Debug)]
struct Refusal {
    sqlstate: String,
    detail: String,
    message: String,
    hint: String,
    took: Duration,
}

/// Runs `sql`; its error in full (`Ok`: how many rows it answered).
fn refusal(
    c: &mut Client,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<usize, Refusal> {
    let t = Instant::now();
    match c.query(sql, params) {
        Ok(rows) => Ok(rows.len()),
        Err(e) => {
            let db = e.as_db_error().expect("a server error");
            Err(Refusal {
                sqlstate: db.code().code().to_string(),
                detail: db.detail().unwrap_or("").to_string(),
                message: db.message().to_string(),
                hint: db.hint().unwrap_or("").to_string(),
                took: t.elapsed(),
            })
        }
    }
}

/// The refusal of a database beyond the limit: 55000, the core's
/// `lease_unavailable`, the limit in the message and what to do in the
/// hint, answered at once (no wait for a worker that cannot come).
fn is_beyond_limit(r: &Result<usize, Refusal>) -> bool {
    matches!(r, Err(r) if r.sqlstate == "55000"
        && r.detail == "code: lease_unavailable"
        && r.message.contains(&format!("at most {DATABASES} databases"))
        && r.hint.contains("Drop the leased generators of a database")
        && r.took < Duration::from_secs(2))
}

/// The leased generators of 8 databases (`postgres`, whose generators the
/// tests before declared, and 7 more) all mint; in a ninth database:
/// - `create_generator` with `lease => 'database'` is refused (55000,
///   `lease_unavailable`, the limit and what to do) and declares nothing;
/// - a leased definition that arrived without it (as a restored dump's
///   rows do) makes `next_id` and `next_ids` refuse the same way at once,
///   and again a second later: no worker runs there, no ID is made;
/// - once one of the 8 drops its leased generators (its worker frees its
///   place after 5 s), the ninth database's worker starts and it mints.
pub(super) fn ninth_database(run: &mut Run, s: &Server) {
    let started = Instant::now();
    let lease = "database?namespace=ninth";
    let dbs: Vec<String> = (1..DATABASES).map(|i| format!("snowmint_db{i}")).collect();
    let ninth = "snowmint_db_ninth";
    let mut a = reconnect(s);
    for db in dbs.iter().map(String::as_str).chain([ninth]) {
        a.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .unwrap();
        a.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    }
    let connect_to = |db: &str| {
        let mut c = connect(
            &s.conninfo
                .replace("dbname=postgres", &format!("dbname={db}")),
        );
        c.batch_execute("SET statement_timeout = '60s'; CREATE EXTENSION snowmint")
            .unwrap();
        c
    };
    // With `postgres`, 8 databases with leased generators. A database
    // dropped by a test before frees its place within a second or so.
    let mut full: Vec<Client> = Vec::new();
    for db in &dbs {
        let mut c = connect_to(db);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out: Out<String> = call(
                &mut c,
                "SELECT snowmint.create_generator('ninth', $1, lease => $2)::text",
                &[&WIDE, &lease],
            );
            match out {
                Out::Ok(_) => break,
                Out::Err { code, .. }
                    if code == "lease_unavailable" && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Out::Err { sqlstate, code } => {
                    return run.check(false, || {
                        format!("ninth database: create_generator in {db}: {sqlstate} {code}")
                    })
                }
            }
        }
        full.push(c);
    }
    for (db, c) in dbs.iter().zip(&mut full) {
        if let Err(e) = wait_ready(c, "ninth", Duration::from_secs(20)) {
            return run.check(false, || format!("ninth database: {db}: {e}"));
        }
    }
    let served = started.elapsed();
    let mut n = connect_to(ninth);
    let create = refusal(
        &mut n,
        "SELECT snowmint.create_generator('ninth', $1, lease => $2)::text",
        &[&WIDE, &lease],
    );
    let declared: i64 = n
        .query_one("SELECT count(*) FROM snowmint.generator_defs", &[])
        .unwrap()
        .get(0);
    run.check(is_beyond_limit(&create) && declared == 0, || {
        format!("ninth database: create_generator gave {create:?}, {declared} definitions")
    });
    // As a restored dump declares it: no backend asked for a worker.
    n.execute(
        "INSERT INTO snowmint.generator_defs (name, layout, lease) VALUES ('ninth', $1, $2) \
         ON CONFLICT (name) DO NOTHING",
        &[&WIDE, &lease],
    )
    .unwrap();
    let first = refusal(&mut n, "SELECT snowmint.next_id('ninth')", &[]);
    let batch = refusal(&mut n, "SELECT snowmint.next_ids('ninth', 1000)", &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let later = refusal(&mut n, "SELECT snowmint.next_id('ninth')", &[]);
    let worker = "SELECT count(*) FROM pg_stat_activity \
                  WHERE backend_type = 'snowmint lease worker' AND datname = $1";
    let workers: i64 = a.query_one(worker, &[&ninth]).unwrap().get(0);
    for (what, r) in [
        ("next_id", &first),
        ("next_ids", &batch),
        ("next_id 1.5 s later", &later),
    ] {
        run.check(is_beyond_limit(r), || {
            format!("ninth database: {what} gave {r:?}")
        });
    }
    run.check(workers == 0, || {
        format!("ninth database: {workers} lease workers run there")
    });
    // A place freed: the ninth database's worker starts, claims, mints.
    full[0]
        .execute("SELECT snowmint.drop_generator('ninth')", &[])
        .unwrap();
    let freed = Instant::now();
    let ready = wait_ready(&mut n, "ninth", Duration::from_secs(30));
    let minted = ready
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|_| ids_when_reserved(&mut n, "ninth", 1000).map_err(|e| format!("{e:?}")));
    run.check(minted.as_ref().is_ok_and(|v| v.len() == 1000), || {
        format!(
            "ninth database: after a place freed: {ready:?}, {:?}",
            minted.as_ref().map(Vec::len)
        )
    });
    if let Err(r) = &first {
        println!(
            "lease: {DATABASES} databases minting after {served:?}; in a ninth, create_generator, \
             next_id and next_ids refused in {:?}: {} {} \"{}\" (hint: \"{}\"); minting {:?} after \
             a place freed",
            r.took,
            r.sqlstate,
            r.detail,
            r.message,
            r.hint,
            freed.elapsed()
        );
    }
    drop(full);
    drop(n);
    for db in dbs.iter().map(String::as_str).chain([ninth]) {
        a.batch_execute(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .unwrap();
    }
}
