//! Faults and bad input against the service as real processes on real
//! stores: two servers on one store under load, a server killed with SIGKILL
//! under load and restarted, the store cut off past the reservation (the
//! lease tests' TCP proxy between server and store), SIGTERM under load, and
//! malformed requests. Clients are threads calling over loopback TCP; every
//! wait is bounded.
//!
//! The directory store's variants run with `cargo test`. The network
//! stores' are `#[ignore]`d: they need the servers `scripts/test-server`
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
/// server `scripts/test-server` names in `SNOWMINT_TEST_<NAME>_URL`.
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
    a.extend(["--max-count".into(), "200000".into()]);
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

// ---- 3. The store cut off past the reservation -------------------------

/// A server leases through a TCP proxy (TTL 4 s, reservation 1 s, renewals
/// every 200 ms) under load; the proxy cuts the store off for about 2.5 s
/// and restores it (inside the TTL, so the slot is still the server's).
/// While cut: `/readyz` turns 503 naming the ended reservation; `/v1/ids`
/// answers 503 `lease_expired` (or `lease_unavailable`) with Retry-After;
/// no ID answered during the cut has a timestamp past the reservation the
/// server reported after it ended (`reserved_until_ms`, the last one the
/// store confirmed: nothing can be confirmed through a cut proxy). After the
/// restore: `/readyz` 200 and IDs again, none issued twice.
///
/// A run in which no ID was answered after the cut (the load threads, or a
/// renewal, starved on a loaded machine until the reservation had ended)
/// checks nothing of the cut: it is run again, at most three times.
fn store_cut(store: &str) {
    for attempt in 1..=3 {
        let during = store_cut_once(store);
        if during > 0 {
            return;
        }
        eprintln!("{store}: attempt {attempt}: no ID was issued after the cut (it came too late)");
    }
    panic!("{store}: no ID was issued after the cut in three attempts: the cut came too late");
}

/// One run of [`store_cut`]: the IDs answered between the cut and the restore.
fn store_cut_once(store: &str) -> usize {
    let st = Store::open(store);
    let (proxy, purl) = Proxy::for_url(&st.base);
    let url = Store::url_on(
        &purl,
        &ns("cut"),
        "&ttl_ms=4000&renew_ms=200&window_ms=1000&timeout_ms=500",
    );
    let s = start(&server_args("leaf", &url, None));
    let load = Load::start(&s.addr, "/v1/ids?count=20", 2);
    // Leaf's route (the HTTP/1.1 fast path) under the same checks.
    let leaf = Load::start(&s.addr, "/api/snowflake/get/any", 1);
    let ready = Load::start(&s.addr, "/readyz", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let cut_at = now_ms();
    proxy.cut();
    // The reservation ends within window_ms of the last renewal.
    let deadline = Instant::now() + Duration::from_secs(5);
    let reasons = loop {
        let r = s.get("/readyz");
        if r.status == 503 {
            break r.json()["reasons"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "/readyz stayed 200 after the cut"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let lease = s.generator()["lease"].clone();
    let reserved = lease["reserved_until_ms"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let lease_later = s.generator()["lease"].clone();
    assert_eq!(
        lease_later["reserved_until_ms"].as_u64(),
        Some(reserved),
        "the reservation moved while the store was cut off: {lease_later}"
    );
    let restore_at = now_ms();
    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.get("/readyz").status != 200 {
        assert!(
            Instant::now() < deadline,
            "/readyz never turned 200 again: {}",
            s.get("/readyz").body
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let recovered_ms = now_ms() - restore_at;
    std::thread::sleep(Duration::from_millis(500));
    let leaf_calls = leaf.stop();
    assert!(
        leaf_calls
            .iter()
            .any(|c| c.status == Some(503) && c.error.starts_with("lease_")),
        "no Leaf request was refused (lease_expired or lease_unavailable) while cut off"
    );
    let mut calls = load.stop();
    calls.extend(leaf_calls);
    calls.sort_by_key(|c| c.sent_ms);
    let probes = ready.stop();

    let reason = reasons.to_string();
    assert!(
        reason.contains("reservation ended"),
        "/readyz's reason: {reason}"
    );
    // The checker's bound (moved 300 ms short to see it fail).
    let bound = if weakened("reservation-short") {
        reserved - 300
    } else {
        reserved
    };
    let mut during = 0;
    let mut refused = 0;
    let mut refused_outside = 0;
    for c in &calls {
        match c.status {
            Some(200) => {
                if c.done_ms >= cut_at && c.sent_ms <= restore_at {
                    during += c.ids.len();
                    let late = c.ids.iter().copied().max().unwrap();
                    assert!(
                        time_of(late) <= bound,
                        "issued {late} at {} ms, past the confirmed reservation (until {bound} ms)",
                        time_of(late)
                    );
                }
            }
            Some(503) => {
                assert!(
                    c.error == "lease_expired" || c.error == "lease_unavailable",
                    "{c:?}"
                );
                assert_eq!(c.retry_after.as_deref(), Some("1"), "{c:?}");
                // A renewal may also miss the window outside the cut on this
                // loaded machine: safe, and counted.
                if c.sent_ms + 50 < cut_at || c.done_ms > restore_at + 2000 {
                    refused_outside += 1;
                }
                refused += 1;
            }
            _ => panic!("a request failed otherwise: {c:?}"),
        }
    }
    assert!(refused > 0, "no request was refused while cut off");
    let after: usize = calls
        .iter()
        .filter(|c| c.sent_ms > restore_at + recovered_ms)
        .map(|c| c.ids.len())
        .sum();
    assert!(after > 0, "no ID after the recovery");
    // The readiness probe: 200 or 503 (around the cut), nothing else.
    let not_ready: Vec<&Call> = probes.iter().filter(|c| c.status != Some(200)).collect();
    for c in &not_ready {
        assert!(c.status == Some(503) && !c.reasons.is_empty(), "{c:?}");
    }
    let n = check_unique(&[("server", &all_ids(&calls))]).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{store}: cut {} ms; reservation until {reserved} ({} ms after the cut); {during} IDs during the cut, none past it; {refused} refusals (503 + Retry-After; {refused_outside} outside the cut); /readyz 503 {} times, 200 again {recovered_ms} ms after the restore; {n} IDs unique; reason {reason}",
        restore_at - cut_at,
        reserved as i64 - cut_at as i64,
        not_ready.len(),
    );
    during
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn store_cut_past_the_reservation() {
    on_stores(&["postgres", "redis"], store_cut);
}

// ---- 4. SIGTERM under load ---------------------------------------------

/// Server A (of two holding [`TWO_SLOTS`]) gets SIGTERM while four clients
/// call it. The rule for the clients' requests: one sent before the signal
/// gets a 200 with its IDs; one sent after it gets a 200, or is refused
/// before any byte of a response (connection refused or reset: the server
/// stopped accepting when the signal came and `/readyz` is 503 from then
/// on) or gets a complete 503; nothing else (no truncated response, no
/// other status). A exits 0 within 1 s plus the grace, and a new server
/// started at once claims A's slot and issues at once: the lease was
/// released (on a network store the TTL, 10 s here, would otherwise hold
/// the slot; on a directory its `hwm` would be a 5 s reservation ahead).
fn sigterm_under_load(store: &str) {
    let st = Store::open(store);
    let url = st.url(
        &ns("term"),
        "&ttl_ms=10000&renew_ms=1000&window_ms=5000&timeout_ms=2000",
    );
    let args = server_args(TWO_SLOTS, &url, None);
    let mut a = start(&args);
    let c = start(&args);
    let va = node_of(&a);
    let load = Load::start(&a.addr, "/v1/ids?count=50", 4);
    // Requests of tens of ms: some are in flight when the signal comes.
    let slow = Load::start(&a.addr, "/v1/ids?count=200000", 1);
    let ready = Load::start(&a.addr, "/readyz", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let signal = if weakened("sigkill") {
        "-KILL"
    } else {
        "-TERM"
    };
    let sig_at = now_ms();
    let t = Instant::now();
    a.signal(signal);
    // kill(1) has returned: the signal is delivered.
    let sig_done = now_ms();
    let status = a.wait(GRACE + Duration::from_secs(5));
    let took = t.elapsed();
    let mut calls = load.stop();
    let slow = slow.stop();
    let in_flight = slow
        .iter()
        .filter(|c| c.sent_ms < sig_at && c.done_ms > sig_done)
        .count();
    calls.extend(slow);
    let probes = ready.stop();

    let mut problems = Vec::new();
    let (mut before, mut after_ok, mut after_refused) = (0, 0, 0);
    for c in &calls {
        let refused_early = c.status.is_none()
            && (c.error.starts_with("ConnectionRefused") || c.error.starts_with("ConnectionReset"));
        if c.sent_ms < sig_at {
            before += 1;
            if c.status != Some(200) {
                problems.push(format!("a request sent before the signal failed: {c:?}"));
            }
        } else if c.status == Some(200) {
            after_ok += 1;
        } else if refused_early || c.status == Some(503) {
            after_refused += 1;
        } else {
            problems.push(format!(
                "a request sent after the signal failed otherwise: {c:?}"
            ));
        }
    }
    if let Some(c) = probes
        .iter()
        .find(|c| c.done_ms < sig_at && c.status != Some(200))
    {
        problems.push(format!("/readyz was not 200 before the signal: {c:?}"));
    }
    // Readiness ends with the signal: a probe sent after it (and 250 ms for
    // the runtime to see it) says so or finds the listener closed.
    let probes_after = probes.iter().filter(|c| c.sent_ms > sig_done + 250);
    for c in probes_after {
        if c.status == Some(200) {
            problems.push(format!("/readyz was 200 after the signal: {c:?}"));
        }
    }
    if !status.success() {
        problems.push(format!("exit status {status:?}, not 0"));
    }
    if took > GRACE + Duration::from_secs(1) {
        problems.push(format!("exited {took:?} after the signal"));
    }
    let max_a = all_ids(&calls).into_iter().max().unwrap();
    // The slot is free at once: a new server claims it and issues now.
    let t = Instant::now();
    match try_start(&args) {
        Err(e) => problems.push(format!(
            "a new server started right after A's exit got no slot: {e}"
        )),
        Ok(b) => {
            let got = node_of(&b);
            let r = b.get("/v1/ids?count=10");
            let claim_ms = t.elapsed().as_millis();
            if got != va {
                problems.push(format!("the new server got slot {got}, not A's {va}"));
            } else if r.status != 200 {
                problems.push(format!(
                    "the new server on A's slot cannot issue at once: {} {}",
                    r.status, r.body
                ));
            } else {
                let low = ids_of(&r)[0];
                if low <= max_a {
                    problems.push(format!(
                        "the new server issued {low}, not above A's {max_a}"
                    ));
                }
                eprintln!("{store}: the new server held A's slot {va} and issued {claim_ms} ms after A's exit");
            }
        }
    }
    drop(c);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{store}: {signal} under load: exit 0 in {took:?}; {before} requests sent before the signal all 200 ({in_flight} of 200,000 IDs in flight at the signal); after it {after_ok} 200 and {after_refused} refused"
    );
}

#[test]
fn sigterm_under_load_on_a_directory() {
    sigterm_under_load("dir");
}

/// A connection the server accepted before SIGTERM whose request comes just
/// after it (a client that connected while the server was accepting) gets a
/// complete answer, then the connection closes; not a close before any byte.
/// Without the wait for a first request at shutdown the request got an empty
/// read (`sigterm_under_load` failed so once in ten CI runs).
#[test]
fn a_connection_accepted_before_sigterm_gets_its_first_request_answered() {
    use std::io::{Read, Write};
    let st = Store::open("dir");
    let mut s = start(&server_args("leaf", &st.url(&ns("first"), ""), None));
    let mut conn = std::net::TcpStream::connect(&s.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Accepted by now (the server's accept loop is idle).
    std::thread::sleep(Duration::from_millis(300));
    s.signal("-TERM");
    // The shutdown has begun: the listener is closed.
    let t = Instant::now();
    while std::net::TcpStream::connect(&s.addr).is_ok() {
        assert!(t.elapsed() < Duration::from_secs(2), "still accepting");
        std::thread::sleep(Duration::from_millis(5));
    }
    conn.write_all(format!("GET /v1/ids?count=3 HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr).as_bytes())
        .unwrap();
    let mut raw = String::new();
    let read = conn.read_to_string(&mut raw);
    let r = try_parse_response(&raw).unwrap_or_else(|e| panic!("{e} ({read:?})"));
    assert!(
        r.status == 200 || r.status == 503,
        "{}: {}",
        r.status,
        r.body
    );
    // The whole answer, then the close (read_to_string saw the end).
    assert!(read.is_ok(), "{read:?}");
    if r.status == 200 {
        assert_eq!(ids_of(&r).len(), 3, "{raw}");
    }
    assert!(s.wait(Duration::from_secs(10)).success());
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn sigterm_under_load_on_postgres() {
    sigterm_under_load("postgres");
}

// ---- 5. Bad input --------------------------------------------------------

/// Malformed `count`s, generators and IDs, each a JSON error with the
/// core's or the service's stable code and the right status, on a leased
/// server; it serves IDs between them and after.
#[test]
fn bad_input_gets_a_stable_code_and_the_server_serves_on() {
    let st = Store::open("dir");
    let s = start(&server_args("leaf", &st.url(&ns("bad"), ""), None));
    let cases: &[(&str, u16, &str)] = &[
        ("/v1/ids?count=0", 400, "invalid_option"),
        ("/v1/ids?count=-1", 400, "invalid_option"),
        ("/v1/ids?count=-0", 400, "invalid_option"),
        ("/v1/ids?count=200001", 400, "invalid_option"),
        ("/v1/ids?count=18446744073709551615", 400, "invalid_option"),
        ("/v1/ids?count=18446744073709551616", 400, "invalid_option"),
        (
            "/v1/ids?count=99999999999999999999999999999",
            400,
            "invalid_option",
        ),
        ("/v1/ids?count=abc", 400, "invalid_option"),
        ("/v1/ids?count=", 400, "invalid_option"),
        ("/v1/ids?count", 400, "invalid_option"),
        ("/v1/ids?count=1.5", 400, "invalid_option"),
        ("/v1/ids?count=+1", 400, "invalid_option"),
        ("/v1/ids?count=%201", 400, "invalid_option"),
        ("/v1/ids?count=0x10", 400, "invalid_option"),
        ("/v1/ids?count=1e3", 400, "invalid_option"),
        ("/v1/ids?count=%EF%BC%91", 400, "invalid_option"),
        ("/v1/ids?count=1&count=2", 400, "invalid_option"),
        ("/v1/ids?count=5&count=5", 400, "invalid_option"),
        ("/v1/ids?generator=nope", 404, "unknown_generator"),
        ("/v1/ids?generator=", 404, "unknown_generator"),
        (
            "/v1/ids?generator=default&generator=other",
            400,
            "invalid_option",
        ),
        ("/v1/decode/abc", 400, "invalid_id"),
        ("/v1/decode/-1", 400, "invalid_id"),
        ("/v1/decode/1.0", 400, "invalid_id"),
        ("/v1/decode/%201", 400, "invalid_id"),
        ("/v1/decode/18446744073709551616", 400, "invalid_id"),
        (
            "/v1/decode/99999999999999999999999999999",
            400,
            "invalid_id",
        ),
        // 2^63 does not fit leaf's 63 bits; nor does it sonyflake's.
        ("/v1/decode/9223372036854775808", 400, "invalid_id"),
        (
            "/v1/decode/9223372036854775808?layout=sonyflake",
            400,
            "invalid_id",
        ),
        ("/v1/decode/%FF", 400, "invalid_id"),
        ("/v1/decode/1?layout=nope", 400, "unknown_preset"),
        (
            "/v1/decode/1?layout=leaf&layout=sonyflake",
            400,
            "invalid_option",
        ),
        ("/v1/decode/1?generator=nope", 404, "unknown_generator"),
        ("/decodeSnowflakeId?snowflakeId=-1", 400, "invalid_id"),
        (
            "/decodeSnowflakeId?snowflakeId=18446744073709551616",
            400,
            "invalid_id",
        ),
        (
            "/decodeSnowflakeId?snowflakeId=9223372036854775808",
            400,
            "invalid_id",
        ),
    ];
    let mut wrong = Vec::new();
    for &(path, status, code) in cases {
        let r = s.get(path);
        let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let json = r
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"));
        let message = v["error"]["message"].as_str().unwrap_or_default();
        if (r.status, v["error"]["code"].as_str()) != (status, Some(code))
            || !json
            || message.is_empty()
        {
            wrong.push(format!(
                "{path}: {} {:?} {}, expected {status} {code}",
                r.status,
                r.header("content-type"),
                r.body
            ));
        }
        // Still serving.
        assert_eq!(ids_of(&s.get("/v1/ids?count=2")).len(), 2, "after {path}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Leaf serves every key when one generator is configured, even a key
    // that is not UTF-8.
    let r = s.get("/api/snowflake/get/%FF");
    assert_eq!(r.status, 200, "{}", r.body);
    let ids = ids_of(&s.get("/v1/ids?count=1000"));
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 1000);
    assert_eq!(s.get("/readyz").status, 200);
}

/// Debian's libfaketime (package `libfaketime`), thread-safe variant.
const FAKETIME_MT: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The wall clock stepped 60 s ahead while the server runs (an NTP step):
/// `/readyz` and the ID routes must agree. The generators' clock is the
/// wall clock read once and then the monotonic clock, so the step does not
/// move it; readiness read the wall clock and said the reservation had
/// ended while IDs were still issued inside it. libfaketime steps the
/// server's wall clock only (its monotonic clock stays real), from a file
/// rewritten during the test.
#[test]
#[ignore = "needs libfaketime: ./scripts/test server"]
fn readiness_and_ids_agree_after_a_wall_clock_step() {
    assert!(
        std::path::Path::new(FAKETIME_MT).exists(),
        "{FAKETIME_MT} is missing: apt-get install libfaketime"
    );
    let dir = temp_dir("wall-step");
    let offset = dir.0.join("offset");
    std::fs::write(&offset, "+0\n").unwrap();
    let lease = format!(
        "{}&ttl_ms=3000&renew_ms=1000&window_ms=2000",
        lease_arg(&dir.0)
    );
    let offset_path = offset.display().to_string();
    let s = Server::try_start(
        &["--preset", "leaf", "--lease", &lease],
        &[
            ("LD_PRELOAD", FAKETIME_MT),
            ("FAKETIME_TIMESTAMP_FILE", &offset_path),
            ("FAKETIME_NO_CACHE", "1"),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.get("/readyz").status, 200);
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
    // Atomically (rename), so the server never reads half a file.
    let tmp = dir.0.join("offset.new");
    std::fs::write(&tmp, "+60\n").unwrap();
    std::fs::rename(&tmp, &offset).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // Each pair: readiness, then an ID at once; until the reservation the
    // generator's clock confirmed has ended by that clock (about 2 s), both
    // must say the same, and afterwards both 503.
    let mut disagree = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        let ready = s.get("/readyz");
        let ids = s.get("/v1/ids?count=1");
        if (ready.status == 200) != (ids.status == 200) {
            disagree.push(format!(
                "/readyz {} ({}), /v1/ids {}",
                ready.status, ready.body, ids.status
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        disagree.is_empty(),
        "{} disagreements: {:?}",
        disagree.len(),
        &disagree[..disagree.len().min(3)]
    );
}
