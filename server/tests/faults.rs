//! Faults and bad input against the service as real processes on real
//! stores: two servers on one store under load, a server killed with SIGKILL
//! under load and restarted, the store cut off past the reservation (the
//! lease tests' TCP proxy between server and store), SIGTERM under load, and
//! malformed requests. Clients are threads calling over loopback TCP; every
//! wait is bounded.
//!
//! The directory store's variants run with `cargo test`. The network
//! stores' are `#[ignore]`d: they need the servers `cargo xtask test server`
//! starts (or finds) and names in `SNOWMINT_TEST_<STORE>_URL`, and it runs
//! them with `--ignored`. Each run uses namespaces of its own.
//!
//! Every safety check can be seen failing: `SNOWMINT_FAULTS_WEAKEN=NAME`
//! removes one protection from outside the server (a fixed node value in
//! place of the lease, SIGKILL in place of SIGTERM) or moves the checker's
//! bound, and the test then fails naming the violation:
//! - `fixed-node`: every server on one fixed node value, no lease
//!   (duplicates across servers);
//! - `restart-unleased`: the server restarted after SIGKILL takes the killed
//!   one's value without a lease (IDs inside the killed server's reservation);
//! - `reservation-short`: the store-cut check uses a bound 300 ms short of
//!   the confirmed reservation (the server issues up to its end);
//! - `sigkill`: SIGKILL where the test sends SIGTERM (in-flight requests
//!   fail, the exit is not 0, the slot is not free at once).

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::*;
use serde_json::Value;
use snowmint_server::thrift::codec::{self, Answer};

/// The client side of `snowmint.proto` (build.rs writes it to OUT_DIR/client).
#[allow(clippy::all, missing_docs)]
mod pb {
    include!(concat!(env!("OUT_DIR"), "/client/snowmint.v1.rs"));
}

/// The leaf preset's epoch: IDs' timestamps are `(id >> 22) + LEAF_EPOCH`.
const LEAF_EPOCH: u64 = 1_288_834_974_657;

/// Leaf's bit positions with a 1-bit leased `worker` beside a fixed
/// `datacenter`: two slots, so a server restarted while the other slot is
/// held can only get the slot it had.
const TWO_SLOTS: &str = r#"{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["datacenter",9],["worker",1],["sequence",12]]}"#;

/// The server's grace for in-flight requests after SIGTERM (service.rs).
const GRACE: Duration = Duration::from_secs(5);

fn time_of(id: u64) -> u64 {
    (id >> 22) + LEAF_EPOCH
}

fn weakened(what: &str) -> bool {
    std::env::var("SNOWMINT_FAULTS_WEAKEN").is_ok_and(|v| v == what)
}

/// How long the two-server test hammers (`SNOWMINT_TEST_HAMMER_SECS`, default 10).
fn hammer_secs() -> u64 {
    std::env::var("SNOWMINT_TEST_HAMMER_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// A namespace no other run or test shares.
fn ns(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    format!(
        "srvf-{}-{}-{n}-{tag}",
        std::process::id(),
        now_ms() % 1_000_000_000
    )
}

/// A store by name: `dir` (a fresh directory), or a network store whose
/// server `cargo xtask test server` names in `SNOWMINT_TEST_<NAME>_URL`.
struct Store {
    base: String,
    _dir: Option<TempDir>,
}

impl Store {
    fn open(name: &str) -> Store {
        if name == "dir" {
            let dir = temp_dir("faults");
            return Store {
                base: format!("file:{}", dir.display()),
                _dir: Some(dir),
            };
        }
        let var = format!("SNOWMINT_TEST_{}_URL", name.to_uppercase());
        let base = std::env::var(&var)
            .unwrap_or_else(|_| panic!("{var} is not set: run ./scripts/test server"));
        Store { base, _dir: None }
    }

    /// The lease URL on `base` (this store's server, or a proxy's URL for it).
    fn url_on(base: &str, ns: &str, params: &str) -> String {
        format!("{base}?namespace={ns}{params}")
    }

    fn url(&self, ns: &str, params: &str) -> String {
        Store::url_on(&self.base, ns, params)
    }
}

/// Runs `f` for every store at once, each in a thread; fails naming every
/// store whose run failed.
fn on_stores(stores: &[&'static str], f: fn(&str)) {
    let runs: Vec<(&str, JoinHandle<()>)> = stores
        .iter()
        .map(|&s| (s, std::thread::spawn(move || f(s))))
        .collect();
    let mut failed = Vec::new();
    for (s, h) in runs {
        if let Err(p) = h.join() {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{s}: {why}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// One request a client made: when, and what came back.
#[derive(Clone, Debug)]
struct Call {
    sent_ms: u64,
    done_ms: u64,
    /// The status, or `None` when no complete response came back.
    status: Option<u16>,
    /// The error's code (a response), or the transport error.
    error: String,
    retry_after: Option<String>,
    ids: Vec<u64>,
    /// The readiness reasons (a `/readyz` call).
    reasons: Vec<String>,
}

/// Clients calling one path of one server in a loop until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    ids: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<Vec<Call>>>,
}

impl Load {
    fn start(addr: &str, path: &str, clients: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let ids = Arc::new(AtomicUsize::new(0));
        let threads = (0..clients)
            .map(|_| {
                let (addr, path) = (addr.to_string(), path.to_string());
                let (stop, ids) = (Arc::clone(&stop), Arc::clone(&ids));
                std::thread::spawn(move || {
                    let mut calls = Vec::new();
                    while !stop.load(Ordering::SeqCst) {
                        let call = call(&addr, &path);
                        ids.fetch_add(call.ids.len(), Ordering::SeqCst);
                        if call.status != Some(200) {
                            // A refusal: do not spin on it.
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        calls.push(call);
                    }
                    calls
                })
            })
            .collect();
        Load { stop, ids, threads }
    }

    /// IDs received so far.
    fn ids(&self) -> usize {
        self.ids.load(Ordering::SeqCst)
    }

    fn stop(self) -> Vec<Call> {
        self.stop.store(true, Ordering::SeqCst);
        let mut all: Vec<Call> = self
            .threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        all.sort_by_key(|c| c.sent_ms);
        all
    }
}

fn call(addr: &str, path: &str) -> Call {
    let sent_ms = now_ms();
    let r = try_request(addr, path, &[], Duration::from_secs(10));
    let done_ms = now_ms();
    let mut c = Call {
        sent_ms,
        done_ms,
        status: None,
        error: String::new(),
        retry_after: None,
        ids: Vec::new(),
        reasons: Vec::new(),
    };
    match r {
        Err(e) => c.error = format!("{:?}: {e}", e.kind()),
        Ok(r) => {
            c.status = Some(r.status);
            c.retry_after = r.header("retry-after").map(str::to_string);
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            if r.status == 200 {
                if let Some(list) = v["ids"].as_array() {
                    c.ids = list
                        .iter()
                        .map(|x| x.as_str().unwrap().parse().unwrap())
                        .collect();
                } else if let Ok(id) = r.body.parse() {
                    // Leaf's route: the ID alone, as text.
                    c.ids = vec![id];
                }
            } else {
                c.error = v["error"]["code"].as_str().unwrap_or_default().to_string();
            }
            if let Some(list) = v["reasons"].as_array() {
                c.reasons = list
                    .iter()
                    .map(|x| x.as_str().unwrap_or_default().to_string())
                    .collect();
            }
        }
    }
    c
}

fn all_ids(calls: &[Call]) -> Vec<u64> {
    calls.iter().flat_map(|c| c.ids.iter().copied()).collect()
}

/// Every ID once over all the named sets; else a message naming how many
/// were issued twice and by which servers.
fn check_unique(sets: &[(&str, &[u64])]) -> Result<usize, String> {
    let mut all: Vec<(u64, usize)> = sets
        .iter()
        .enumerate()
        .flat_map(|(i, (_, ids))| ids.iter().map(move |&id| (id, i)))
        .collect();
    all.sort_unstable();
    let twice: Vec<String> = all
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| format!("{} ({} and {})", w[0].0, sets[w[0].1].0, sets[w[1].1].0))
        .collect();
    if twice.is_empty() {
        return Ok(all.len());
    }
    // How many repeats each pair of sets shares (set order, then ID order).
    let mut pairs = std::collections::BTreeMap::<(usize, usize), usize>::new();
    for w in all.windows(2).filter(|w| w[0].0 == w[1].0) {
        *pairs
            .entry((w[0].1.min(w[1].1), w[0].1.max(w[1].1)))
            .or_default() += 1;
    }
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(&(i, j), n)| format!("{} and {}: {n}", sets[i].0, sets[j].0))
        .collect();
    Err(format!(
        "{} IDs issued twice, first {:?}; by pair: {}",
        twice.len(),
        &twice[..twice.len().min(3)],
        pairs.join(", ")
    ))
}

/// The node value of the server's only generator: its lease's slot (which
/// must also be its `worker` node value), or the fixed `worker`.
fn node_of(s: &Server) -> u64 {
    let g = s.generator();
    let worker = g["nodes"]["worker"].as_u64().unwrap();
    if let Some(slot) = g["lease"]["slot"].as_u64() {
        assert_eq!(slot, worker, "lease slot and node value differ: {g}");
    }
    worker
}

/// The arguments of a server on `layout` (`leaf` or [`TWO_SLOTS`]) leasing
/// `worker` from `url`, or, in `fixed` mode, with `worker` fixed at `value`.
fn server_args(layout: &str, url: &str, fixed: Option<u64>) -> Vec<String> {
    let mut a: Vec<String> = if layout == "leaf" {
        vec!["--preset".into(), "leaf".into()]
    } else {
        vec![
            "--layout".into(),
            layout.into(),
            "--node".into(),
            "datacenter=3".into(),
        ]
    };
    match fixed {
        Some(v) => a.extend(["--node".into(), format!("worker={v}")]),
        None => a.extend(["--lease".into(), url.into()]),
    }
    a.extend(["--max-count".into(), "100000".into()]);
    a
}

/// A server with `args`, started again (every 200 ms, for at most 30 s)
/// while it exits for want of its store: no free slot yet, or a claim that
/// missed its deadline on this loaded machine (`lease_unavailable`, exit 1).
fn start(args: &[String]) -> Server {
    let started = Instant::now();
    loop {
        match try_start(args) {
            Ok(s) => return s,
            Err(e) => {
                assert!(e.contains("lease_unavailable"), "{e}");
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "no slot in 30 s: {e}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

fn try_start(args: &[String]) -> Result<Server, String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::try_start(&a, &[])
}

/// Calls that did not end in a 200.
fn failures(calls: &[Call]) -> Vec<&Call> {
    calls.iter().filter(|c| c.status != Some(200)).collect()
}

/// A refusal a client can act on: 503 with Retry-After and a code saying
/// the server cannot issue now (its reservation ran out before a renewal
/// was confirmed, or its clock is below the `hwm` it took over: a fence). On this
/// shared, loaded machine a renewal may miss its window: that is safe, and
/// the safety checks hold either way.
fn clean_refusal(c: &Call) -> bool {
    c.status == Some(503)
        && c.retry_after.as_deref() == Some("1")
        && [
            "lease_expired",
            "lease_unavailable",
            "lease_fenced",
            "clock_moved_backwards",
        ]
        .contains(&c.error.as_str())
}

/// How many of `calls` (made while `who` was running) were clean refusals;
/// fails on any other failure.
fn refusals(who: &str, calls: &[Call]) -> usize {
    let f = failures(calls);
    if let Some(c) = f.iter().find(|c| !clean_refusal(c)) {
        panic!("{who} failed a request: {c:?}");
    }
    f.len()
}

// ---- 1. Two servers on one store ----------------------------------------

/// The codes of [`clean_refusal`]: a gRPC status message starts with one
/// (`lease_expired: ...`), a Thrift exception's message ends with it in
/// brackets (`... [lease_expired]`).
const REFUSAL_CODES: [&str; 4] = [
    "lease_expired",
    "lease_unavailable",
    "lease_fenced",
    "clock_moved_backwards",
];

/// What a gRPC or Thrift client thread brings back: its IDs and how many
/// calls were refused cleanly.
type Took = (Vec<u64>, usize);

/// A gRPC client calling `NextIds` on `addr` (counts 1 and 100 in turn)
/// until `stop`; fails on any answer but IDs or a clean refusal
/// (`UNAVAILABLE` with a [`REFUSAL_CODES`] code).
fn grpc_load(addr: &str, stop: &Arc<AtomicBool>) -> JoinHandle<Took> {
    let (addr, stop) = (addr.to_string(), Arc::clone(stop));
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let timeout = Duration::from_secs(10);
            let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect_timeout(timeout)
                .timeout(timeout)
                .connect()
                .await
                .unwrap_or_else(|e| panic!("gRPC connect to {addr}: {e}"));
            let mut client = pb::ids_client::IdsClient::new(ch);
            let (mut ids, mut refused) = (Vec::new(), 0);
            for n in 0u64.. {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let count = if n % 2 == 0 { 1 } else { 100 };
                let req = pb::NextIdsRequest {
                    generator: String::new(),
                    count: Some(count),
                };
                match client.next_ids(req).await {
                    Ok(r) => {
                        let got = r.into_inner().ids;
                        assert_eq!(got.len() as u64, count, "gRPC on {addr}: wrong count");
                        ids.extend(got);
                    }
                    Err(st)
                        if st.code() == tonic::Code::Unavailable
                            && REFUSAL_CODES
                                .iter()
                                .any(|c| st.message().starts_with(&format!("{c}: "))) =>
                    {
                        refused += 1;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    Err(st) => panic!("gRPC on {addr} failed a call: {st:?}"),
                }
            }
            (ids, refused)
        })
    })
}

/// A Thrift client calling `get_id` (a valid agent) on `addr` over one
/// framed binary connection until `stop`; fails on any answer but an ID or
/// a clean refusal (an exception naming a [`REFUSAL_CODES`] code).
fn thrift_load(addr: &str, stop: &Arc<AtomicBool>) -> JoinHandle<Took> {
    let (addr, stop) = (addr.to_string(), Arc::clone(stop));
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let timeout = Duration::from_secs(10);
        let sock: std::net::SocketAddr = addr.parse().unwrap();
        let mut s = std::net::TcpStream::connect_timeout(&sock, timeout)
            .unwrap_or_else(|e| panic!("Thrift connect to {addr}: {e}"));
        s.set_read_timeout(Some(timeout)).unwrap();
        s.set_write_timeout(Some(timeout)).unwrap();
        let (mut ids, mut refused) = (Vec::new(), 0);
        for seqid in 1i32.. {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            s.write_all(&codec::encode_call("get_id", seqid, Some(b"faults-test")))
                .unwrap_or_else(|e| panic!("Thrift on {addr}: {e}"));
            let mut header = [0u8; 4];
            s.read_exact(&mut header)
                .unwrap_or_else(|e| panic!("Thrift on {addr}: {e}"));
            let mut body = vec![0u8; codec::frame_len(header, 1 << 20).unwrap()];
            s.read_exact(&mut body)
                .unwrap_or_else(|e| panic!("Thrift on {addr}: {e}"));
            let (name, q, answer) = codec::decode_answer(&body).unwrap();
            assert_eq!((name.as_str(), q), ("get_id", seqid), "Thrift on {addr}");
            match answer {
                Answer::Value(v) => ids.push(v as u64),
                Answer::AppError(_, m)
                    if REFUSAL_CODES.iter().any(|c| m.ends_with(&format!("[{c}]"))) =>
                {
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => panic!("Thrift on {addr} failed a call: {other:?}"),
            }
        }
        (ids, refused)
    })
}

/// Two servers lease from one store (a namespace of this run) while, for
/// `SNOWMINT_TEST_HAMMER_SECS`, each is called at once over all three
/// protocols: two HTTP clients, a gRPC client (`NextIds`, counts 1 and 100)
/// and a Thrift client (`get_id`). Every call answers with IDs or is
/// refused cleanly ([`clean_refusal`]), each protocol issues IDs on each
/// server, each server's IDs carry the node value its lease reports in
/// `/v1/generators`, the two values differ, and no ID is issued twice.
fn two_servers(store: &str) {
    let st = Store::open(store);
    // Renewals every second, so several happen under load.
    let url = st.url(
        &ns("two"),
        "&ttl_ms=10000&renew_ms=1000&window_ms=5000&timeout_ms=3000",
    );
    let fixed = weakened("fixed-node").then_some(7);
    let mut args = server_args("leaf", &url, fixed);
    args.extend(["--thrift".into(), "127.0.0.1:0".into()]);
    let (mut a, mut b) = (start(&args), start(&args));
    let (na, nb) = (node_of(&a), node_of(&b));
    if fixed.is_none() {
        assert_ne!(na, nb, "two servers hold one slot");
    }
    let thrift = |s: &Server| {
        s.thrift_addr()
            .unwrap_or_else(|| panic!("no thrift_start line: {:?}", s.lines))
    };
    let (ta, tb) = (thrift(&a), thrift(&b));
    let path = "/v1/ids?count=100";
    let stop = Arc::new(AtomicBool::new(false));
    let (la, lb) = (Load::start(&a.addr, path, 2), Load::start(&b.addr, path, 2));
    // Leaf's route too (one ID a request, the HTTP/1.1 fast path).
    let leaf = "/api/snowflake/get/any";
    let (fa, fb) = (Load::start(&a.addr, leaf, 1), Load::start(&b.addr, leaf, 1));
    let (ga, gb) = (grpc_load(&a.addr, &stop), grpc_load(&b.addr, &stop));
    let (tha, thb) = (thrift_load(&ta, &stop), thrift_load(&tb, &stop));
    std::thread::sleep(Duration::from_secs(hammer_secs()));
    stop.store(true, Ordering::SeqCst);
    let (mut ca, mut cb) = (la.stop(), lb.stop());
    let (fa, fb) = (fa.stop(), fb.stop());
    for (who, calls) in [("A", &fa), ("B", &fb)] {
        let ok = calls.iter().filter(|c| c.ids.len() == 1).count();
        assert!(ok >= 20, "{who}: only {ok} Leaf requests answered an ID");
    }
    ca.extend(fa);
    cb.extend(fb);
    let joined = |who: &str, h: JoinHandle<Took>| {
        h.join()
            .unwrap_or_else(|_| panic!("the {who} client failed (its panic is above)"))
    };
    let (ga, gb) = (joined("A gRPC", ga), joined("B gRPC", gb));
    let (tha, thb) = (joined("A Thrift", tha), joined("B Thrift", thb));
    let refused = refusals("A", &ca) + refusals("B", &cb) + ga.1 + gb.1 + tha.1 + thb.1;
    let (ida, idb) = (all_ids(&ca), all_ids(&cb));
    let sets: [(&str, &[u64], u64); 6] = [
        ("A HTTP", &ida, na),
        ("B HTTP", &idb, nb),
        ("A gRPC", &ga.0, na),
        ("B gRPC", &gb.0, nb),
        ("A Thrift", &tha.0, na),
        ("B Thrift", &thb.0, nb),
    ];
    // Non-trivial: hundreds of calls' worth on this loaded machine.
    for (name, ids, _) in sets {
        assert!(ids.len() >= 50, "{name} issued only {} IDs", ids.len());
    }
    for (name, ids, node) in sets {
        if let Some(id) = ids.iter().find(|&&id| (id >> 12) & 0x3ff != node) {
            panic!("{name} issued {id}, whose worker is not its lease's slot {node}");
        }
    }
    let named: Vec<(&str, &[u64])> = sets.iter().map(|&(n, ids, _)| (n, ids)).collect();
    let n = check_unique(&named).unwrap_or_else(|e| panic!("{e}"));
    for s in [&mut a, &mut b] {
        let (status, _) = s.terminate();
        assert!(status.success(), "{status:?}");
    }
    let counts: Vec<String> = sets
        .iter()
        .map(|(name, ids, _)| format!("{name} {}", ids.len()))
        .collect();
    eprintln!(
        "{store}: slots {na} and {nb}, {} + {} HTTP requests ({refused} refused over all), {n} IDs ({}), all unique",
        ca.len(),
        cb.len(),
        counts.join(", ")
    );
}

#[test]
fn two_servers_on_a_directory() {
    two_servers("dir");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn two_servers_on_each_network_store() {
    on_stores(
        &["postgres", "mysql", "redis", "etcd", "zookeeper"],
        two_servers,
    );
}

// ---- 2. SIGKILL under load, then a restart -----------------------------

/// Servers A and C hold the two slots of [`TWO_SLOTS`] under load; A is
/// killed with SIGKILL mid-load and started again on the same store and
/// namespace, where only A's slot can be free (after its TTL on a network
/// store). A's successor issues only above everything A issued and above the
/// reservation A last reported (the `hwm` its claim read), and no ID of A,
/// C or the successor repeats.
fn sigkill_restart(store: &str) {
    let st = Store::open(store);
    let url = st.url(
        &ns("kill"),
        "&ttl_ms=2000&renew_ms=400&window_ms=5000&timeout_ms=1800",
    );
    let fixed = weakened("fixed-node").then_some(0);
    let args = server_args(TWO_SLOTS, &url, fixed);
    let a = start(&args);
    let c = start(&args);
    let (va, vc) = (node_of(&a), node_of(&c));
    let path = "/v1/ids?count=50";
    let (la, lc) = (Load::start(&a.addr, path, 2), Load::start(&c.addr, path, 1));
    std::thread::sleep(Duration::from_millis(1500));
    let reserved = a.generator()["lease"]["reserved_until_ms"].as_u64();
    let kill_sent = now_ms();
    let mut a = a;
    a.signal("-KILL");
    a.wait(Duration::from_secs(5));
    let ca = la.stop();
    let before_kill: Vec<Call> = ca
        .iter()
        .filter(|c| c.done_ms < kill_sent)
        .cloned()
        .collect();
    refusals("A before the kill", &before_kill);

    // The restart: until it holds A's slot (bounded).
    let args2 = if weakened("restart-unleased") {
        server_args(TWO_SLOTS, &url, Some(va))
    } else {
        args.clone()
    };
    let started = Instant::now();
    let a2 = start(&args2);
    let restart_ms = started.elapsed().as_millis();
    assert_eq!(node_of(&a2), va, "the restarted server got another slot");
    let l2 = Load::start(&a2.addr, path, 2);
    let deadline = Instant::now() + Duration::from_secs(15);
    while l2.ids() < 1000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let c2 = l2.stop();
    let cc = lc.stop();

    refusals("C", &cc);
    // The successor refuses while its clock is below the hwm it took over.
    let waits = refusals("the restarted server", &c2);
    let (ida, idc, ida2) = (all_ids(&ca), all_ids(&cc), all_ids(&c2));
    if ida2.is_empty() {
        let codes: std::collections::BTreeSet<&str> = c2.iter().map(|c| c.error.as_str()).collect();
        panic!(
            "the restarted server issued nothing in 15 s (refused {waits} times: {codes:?}); its lease {}",
            a2.generator()["lease"]
        );
    }
    let n =
        check_unique(&[("A", &ida), ("C", &idc), ("A'", &ida2)]).unwrap_or_else(|e| panic!("{e}"));
    let max_a = ida.iter().copied().filter(|id| (id >> 12) & 1 == va).max();
    let low = *ida2.iter().min().unwrap();
    if let Some(max_a) = max_a {
        assert!(
            low > max_a,
            "the restarted server issued {low} (at {} ms), not above {max_a} (at {} ms) the killed one issued",
            time_of(low),
            time_of(max_a)
        );
    }
    // `reserved` (None without a lease: `fixed-node`) is the killed server's
    // reservation as last reported, a lower bound of what it had confirmed
    // when it died.
    if let Some(r) = reserved {
        assert!(
            time_of(low) > r,
            "the restarted server issued {low} at {} ms, inside the killed server's confirmed reservation (until {r} ms)",
            time_of(low)
        );
    }
    eprintln!(
        "{store}: slots {va} (killed) and {vc}; {} + {} + {} = {n} IDs unique; restarted in {restart_ms} ms, {waits} refusals (clock below the hwm) before its first ID at {} ms, {} ms past A's reservation",
        ida.len(),
        idc.len(),
        ida2.len(),
        time_of(low),
        reserved.map_or(0, |r| time_of(low) as i64 - r as i64)
    );
}

#[test]
fn sigkill_under_load_then_restart_on_a_directory() {
    sigkill_restart("dir");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn sigkill_under_load_then_restart_on_each_network_store() {
    on_stores(
        &["postgres", "mysql", "redis", "etcd", "zookeeper"],
        sigkill_restart,
    );
}

#[path = "faults/cut_and_term.rs"]
mod cut_and_term;
