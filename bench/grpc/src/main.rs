//! `grpc-load`: unary `snowmint.v1.Ids/NextIds` calls against a server for a
//! fixed time, from several HTTP/2 connections with many calls in flight; and
//! `grpc-load constant`, a server on the same stack as snowmint-server (tonic
//! 0.14's routes in `axum::serve`, tokio's default multi-threaded runtime)
//! that answers every NextIds with `count` copies of one constant ID: what the
//! stack costs without authentication, metrics or IDs.
//!
//! ```text
//! grpc-load constant
//!     prints `listen ADDR`, then serves until killed
//! grpc-load ADDR [--count N] [--seconds S] [--connections C] [--concurrency K]
//!     one second of warm-up, then S seconds (default 5) of calls; prints
//!     calls/s, IDs/s, latency percentiles and the errors. SNOWMINT_TOKEN, if
//!     set, is sent as `authorization: Bearer ...`.
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};

#[allow(clippy::all, missing_docs)]
mod pb {
    tonic::include_proto!("snowmint.v1");
}

use pb::ids_client::IdsClient;
use pb::ids_server::{Ids, IdsServer};

/// Each call's deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
const WARM_UP: Duration = Duration::from_secs(1);

/// The constant server.
#[derive(Debug)]
struct Constant;

#[tonic::async_trait]
impl Ids for Constant {
    async fn next_ids(
        &self,
        request: Request<pb::NextIdsRequest>,
    ) -> Result<Response<pb::NextIdsResponse>, Status> {
        let count = request.into_inner().count.unwrap_or(1).min(1 << 20) as usize;
        Ok(Response::new(pb::NextIdsResponse {
            ids: vec![2_125_643_182_392_737_800; count],
            generator: "constant".into(),
        }))
    }

    async fn decode(
        &self,
        _request: Request<pb::DecodeRequest>,
    ) -> Result<Response<pb::DecodeResponse>, Status> {
        Err(Status::unimplemented("constant server"))
    }

    async fn list_generators(
        &self,
        _request: Request<pb::ListGeneratorsRequest>,
    ) -> Result<Response<pb::ListGeneratorsResponse>, Status> {
        Err(Status::unimplemented("constant server"))
    }
}

async fn serve_constant() -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listen {addr}");
    let router = tonic::service::Routes::new(IdsServer::new(Constant))
        .prepare()
        .into_axum_router();
    axum::serve(listener, router)
        .await
        .map_err(|e| e.to_string())
}

#[derive(Debug)]
struct Options {
    addr: String,
    count: u64,
    seconds: u64,
    connections: usize,
    concurrency: usize,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        addr: String::new(),
        count: 1,
        seconds: 5,
        connections: 4,
        concurrency: 32,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or(format!("{name}: a positive integer, not '{v}'"))
        };
        match a.as_str() {
            "--count" => o.count = value("--count")?,
            "--seconds" => o.seconds = value("--seconds")?,
            "--connections" => o.connections = value("--connections")? as usize,
            "--concurrency" => o.concurrency = value("--concurrency")? as usize,
            s if !s.starts_with('-') && o.addr.is_empty() => o.addr = s.to_string(),
            s => return Err(format!("unknown argument '{s}'")),
        }
    }
    if o.addr.is_empty() {
        return Err("usage: grpc-load constant | grpc-load ADDR [--count N] [--seconds S] [--connections C] [--concurrency K]".into());
    }
    Ok(o)
}

/// What one caller measured.
#[derive(Debug, Default)]
struct Tally {
    latencies: Vec<Duration>,
    ids: u64,
    errors: u64,
    first_error: Option<String>,
}

async fn load(o: Options) -> Result<(), String> {
    let mut channels: Vec<Channel> = Vec::new();
    for _ in 0..o.connections {
        let ch = Endpoint::from_shared(format!("http://{}", o.addr))
            .map_err(|e| e.to_string())?
            .connect_timeout(CALL_TIMEOUT)
            .timeout(CALL_TIMEOUT)
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", o.addr))?;
        channels.push(ch);
    }
    let token = std::env::var("SNOWMINT_TOKEN").ok();
    let start = Instant::now();
    let measured_from = start + WARM_UP;
    let end = measured_from + Duration::from_secs(o.seconds);
    let mut tasks = Vec::new();
    for i in 0..o.concurrency {
        let mut client = IdsClient::new(channels[i % channels.len()].clone());
        let auth = token
            .as_ref()
            .map(|t| MetadataValue::try_from(format!("Bearer {t}")))
            .transpose()
            .map_err(|_| "SNOWMINT_TOKEN is not a valid header value".to_string())?;
        let count = o.count;
        tasks.push(tokio::spawn(async move {
            let mut t = Tally::default();
            loop {
                let sent = Instant::now();
                if sent >= end {
                    return t;
                }
                let mut req = Request::new(pb::NextIdsRequest {
                    generator: String::new(),
                    count: Some(count),
                });
                if let Some(a) = &auth {
                    req.metadata_mut().insert("authorization", a.clone());
                }
                let r = client.next_ids(req).await;
                if sent < measured_from {
                    continue;
                }
                match r {
                    Ok(r) => {
                        t.ids += r.into_inner().ids.len() as u64;
                        t.latencies.push(sent.elapsed());
                    }
                    Err(e) => {
                        t.errors += 1;
                        t.first_error.get_or_insert_with(|| e.to_string());
                    }
                }
            }
        }));
    }
    let mut all = Tally::default();
    for task in tasks {
        let t = task.await.map_err(|e| e.to_string())?;
        all.latencies.extend(t.latencies);
        all.ids += t.ids;
        all.errors += t.errors;
        if all.first_error.is_none() {
            all.first_error = t.first_error;
        }
    }
    let secs = o.seconds as f64;
    all.latencies.sort();
    let pct = |p: f64| -> f64 {
        let l = &all.latencies;
        if l.is_empty() {
            return 0.0;
        }
        let i = ((l.len() as f64 * p) as usize).min(l.len() - 1);
        l[i].as_secs_f64() * 1e6
    };
    println!(
        "addr={} count={} connections={} concurrency={} seconds={}: {:.0} calls/s, {:.0} IDs/s, \
         latency p50 {:.0} us, p99 {:.0} us, errors {}",
        o.addr,
        o.count,
        o.connections,
        o.concurrency,
        o.seconds,
        all.latencies.len() as f64 / secs,
        all.ids as f64 / secs,
        pct(0.50),
        pct(0.99),
        all.errors,
    );
    if let Some(e) = all.first_error {
        return Err(format!("{} calls failed; the first: {e}", all.errors));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("grpc-load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let r = if args.first().map(String::as_str) == Some("constant") {
        rt.block_on(serve_constant())
    } else {
        match parse(&args) {
            Ok(o) => rt.block_on(load(o)),
            Err(e) => {
                eprintln!("grpc-load: {e}");
                return ExitCode::from(2);
            }
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grpc-load: {e}");
            ExitCode::FAILURE
        }
    }
}
