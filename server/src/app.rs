//! The HTTP API: routes, handlers, errors, authentication and metrics.
//!
//! Every ID comes from the core's non-blocking `try_next_id`; when it says
//! to wait, the request sleeps on tokio's timer, never on a runtime thread.
//! A leased generator issues only inside its confirmed reservation (the lease
//! crate refuses past it), so nothing here can hand out an ID outside one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{MatchedPath, Path, Query, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};
use snowmint::{Arg, ArgProblem, Error, Format, Id, Iso8601, Layout};
use snowmint_lease::{AnyGenerator, InfoValue};
use subtle::ConstantTimeEq;

use crate::metrics::{FailLabel, GenLabel, Metrics, ReqLabel};

/// One named generator.
#[derive(Debug)]
pub struct Gen {
    /// Its name in URLs.
    pub name: String,
    /// The generator, leased or not.
    pub gen: AnyGenerator,
}

/// What every request shares.
#[derive(Debug)]
pub struct AppState {
    /// The generators, in name order.
    pub gens: Vec<Gen>,
    /// The largest `count`.
    pub max_count: u64,
    /// Accepted bearer tokens (empty: none needed).
    pub tokens: Vec<Vec<u8>>,
    /// The metrics.
    pub metrics: Metrics,
    /// Set on SIGTERM/SIGINT: `/readyz` answers 503 from then on.
    pub shutting_down: AtomicBool,
}

/// The router over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/ids", get(ids))
        .route("/v1/decode/{id}", get(decode))
        .route("/v1/generators", get(generators))
        .route("/api/snowflake/get/{key}", get(leaf_get))
        .route("/api/segment/get/{key}", get(leaf_segment))
        .route("/decodeSnowflakeId", get(leaf_decode))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state)
}

/// An error answer: `{"error":{"code":...,"message":...}}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl From<Error> for ApiError {
    /// The status follows from the core's code: the store or the clock (try
    /// again later) is 503, everything else is the request's fault.
    fn from(e: Error) -> ApiError {
        let status = match e {
            Error::LeaseUnavailable(_)
            | Error::LeaseExpired { .. }
            | Error::ClockMovedBackwards { .. }
            | Error::ProcessForked => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}}).to_string();
        let mut r = (self.status, body).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

type Params = Query<HashMap<String, String>>;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl AppState {
    /// The generator named `name`, or the only one when `name` is absent.
    fn pick(&self, name: Option<&str>) -> Result<&Gen, ApiError> {
        match name {
            Some(n) => self.gens.iter().find(|g| g.name == n).ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "unknown_generator",
                    format!("no generator is named '{}'", cut(n)),
                )
            }),
            None if self.gens.len() == 1 => Ok(&self.gens[0]),
            None => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "missing_generator",
                "several generators are configured: name one with ?generator=NAME",
            )),
        }
    }

    /// `count` IDs of `g`, waiting (on tokio's timer) when the core says so.
    async fn issue(&self, g: &Gen, count: usize) -> Result<Vec<u64>, ApiError> {
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            match g.gen.try_next_id() {
                Ok(snowmint::Next::Id(id)) => out.push(id.get()),
                Ok(snowmint::Next::RetryAt(ms)) => match ms.checked_sub(now_ms()) {
                    Some(wait) if wait > 0 => tokio::time::sleep(Duration::from_millis(wait)).await,
                    _ => tokio::task::yield_now().await,
                },
                Err(e) => {
                    let label = FailLabel {
                        generator: g.name.clone(),
                        code: e.code().to_string(),
                    };
                    self.metrics.failures.get_or_create(&label).inc();
                    return Err(e.into());
                }
            }
        }
        let label = GenLabel {
            generator: g.name.clone(),
        };
        self.metrics
            .ids
            .get_or_create(&label)
            .inc_by(out.len() as u64);
        Ok(out)
    }

    /// Why the server cannot issue now (empty: ready).
    fn not_ready(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.shutting_down.load(Ordering::SeqCst) {
            reasons.push("shutting down".to_string());
        }
        let now = now_ms();
        for g in &self.gens {
            let Some(info) = g.gen.lease() else { continue };
            if let Some(lost) = &info.lost {
                reasons.push(format!("{}: slot lost: {lost}", g.name));
            } else if info.reserved_end_ms.is_none_or(|end| end <= now) {
                let cause = info
                    .last_error
                    .as_deref()
                    .unwrap_or("no confirmed reservation ahead");
                reasons.push(format!("{}: reservation ended: {cause}", g.name));
            }
        }
        reasons
    }
}

/// At most 64 characters of user input, for messages.
fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// `count`: a positive integer up to the configured maximum.
fn parse_count(text: Option<&str>, max: u64) -> Result<usize, ApiError> {
    let Some(text) = text else { return Ok(1) };
    let problem = if let Some(digits) = text.strip_prefix('-') {
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then_some(ArgProblem::Negative)
    } else if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<u64>() {
            Ok(0) => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_option",
                    "the count must be at least 1",
                ))
            }
            Ok(n) if n <= max => return Ok(n as usize),
            Ok(_) => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_option",
                    format!("the count must be at most {max}"),
                ))
            }
            Err(_) => Some(ArgProblem::TooLarge),
        }
    } else {
        None
    };
    let problem = problem.unwrap_or(ArgProblem::WrongType { given: "text" });
    Err(Error::InvalidArgument {
        arg: Arg::Count,
        problem,
    }
    .into())
}

/// `GET /v1/ids?generator=NAME&count=N`.
async fn ids(
    State(s): State<Arc<AppState>>,
    Query(q): Params,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let g = s.pick(q.get("generator").map(String::as_str))?;
    let count = parse_count(q.get("count").map(String::as_str), s.max_count)?;
    let ids = s.issue(g, count).await?;
    let plain = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/plain") && !a.contains("application/json"));
    let (body, kind) = if plain {
        let mut b = String::with_capacity(ids.len() * 20);
        for id in &ids {
            b.push_str(&id.to_string());
            b.push('\n');
        }
        (b, "text/plain; charset=utf-8")
    } else {
        let list: Vec<String> = ids.iter().map(u64::to_string).collect();
        (
            json!({"generator": g.name, "ids": list}).to_string(),
            "application/json",
        )
    };
    Ok(no_store(body, kind))
}

fn no_store(body: String, kind: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The layout a decode request names: `layout=` (a preset or a JSON
/// descriptor), else the generator's.
fn decode_layout(s: &AppState, q: &HashMap<String, String>) -> Result<Layout, ApiError> {
    // A generator named is checked even when `layout=` overrides its layout.
    let named = match q.get("generator") {
        Some(n) => Some(s.pick(Some(n))?),
        None => None,
    };
    match q.get("layout") {
        Some(l) if l.trim_start().starts_with('{') => Ok(Layout::parse(l)?),
        Some(p) => Ok(Layout::preset(p)?),
        None => Ok(*named
            .map_or_else(|| s.pick(None), Ok)?
            .gen
            .config()
            .layout()),
    }
}

/// `GET /v1/decode/{id}`: the object `snowmint decode --json` writes.
async fn decode(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Params,
) -> Result<Response, ApiError> {
    let layout = decode_layout(&s, &q)?;
    let id = Id::parse(&id, Format::Decimal)?.get();
    let parts = layout.decompose(id)?;
    let mut m = Map::new();
    m.insert("id".into(), json!(id.to_string()));
    m.insert("timestamp_ms".into(), json!(parts.timestamp_ms()));
    m.insert(
        "time".into(),
        json!(Iso8601(parts.timestamp_ms()).to_string()),
    );
    m.insert("sequence".into(), json!(parts.sequence()));
    for (f, v) in layout.nodes().zip(parts.nodes()) {
        m.insert(f.name().into(), json!(v));
    }
    Ok(no_store(Value::Object(m).to_string(), "application/json"))
}

/// `GET /v1/generators`: each generator's layout, node values and lease
/// (the store as it describes itself: password masked).
async fn generators(State(s): State<Arc<AppState>>) -> Response {
    let list: Vec<Value> = s
        .gens
        .iter()
        .map(|g| {
            let config = g.gen.config();
            let layout = config.layout();
            let descriptor: Value = serde_json::from_str(&layout.to_json()).unwrap_or(Value::Null);
            let nodes: Map<String, Value> = layout
                .nodes()
                .zip(config.nodes().values())
                .map(|(f, v)| (f.name().to_string(), json!(v)))
                .collect();
            let lease = g.gen.lease().map(|info| {
                let m: Map<String, Value> = info
                    .entries()
                    .into_iter()
                    .map(|(name, _, v)| {
                        let v = match v {
                            InfoValue::Int(i) => json!(i),
                            InfoValue::Text(t) => json!(t),
                            InfoValue::None => Value::Null,
                        };
                        (name.to_string(), v)
                    })
                    .collect();
                Value::Object(m)
            });
            json!({
                "name": g.name,
                "preset": layout.preset_name(),
                "layout": descriptor,
                "nodes": nodes,
                "lease": lease,
            })
        })
        .collect();
    no_store(
        json!({ "generators": list }).to_string(),
        "application/json",
    )
}

/// `GET /api/snowflake/get/{key}` (Leaf): one ID as text. The key names a
/// generator; with exactly one configured, every key is served by it, as
/// Leaf ignores the key.
async fn leaf_get(
    State(s): State<Arc<AppState>>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    let g = match s.gens.iter().find(|g| g.name == key) {
        Some(g) => g,
        None => s.pick(if s.gens.len() == 1 { None } else { Some(&key) })?,
    };
    let ids = s.issue(g, 1).await?;
    Ok(no_store(ids[0].to_string(), "text/plain; charset=utf-8"))
}

/// `GET /api/segment/get/{key}` (Leaf): segment mode is not offered.
async fn leaf_segment() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "segment_not_offered",
        "Leaf's segment mode is not offered: use /api/snowflake/get/{key}",
    )
}

/// `GET /decodeSnowflakeId?snowflakeId=N` (Leaf): `timestamp` as Leaf writes
/// it (`ms(yyyy-MM-dd HH:mm:ss.SSS)`, here in UTC), `workerId` (the node
/// bits as one number) and `sequenceId`, all strings.
async fn leaf_decode(
    State(s): State<Arc<AppState>>,
    Query(q): Params,
) -> Result<Response, ApiError> {
    let layout = decode_layout(&s, &q)?;
    let text = q.get("snowflakeId").map(String::as_str).unwrap_or_default();
    let id = Id::parse(text, Format::Decimal)?.get();
    let parts = layout.decompose(id)?;
    let ms = parts.timestamp_ms();
    let date = Iso8601(ms).to_string().replace('T', " ").replace('Z', "");
    let mut worker: u64 = 0;
    for (f, v) in layout.nodes().zip(parts.nodes()) {
        worker = (worker << f.bits()) | v;
    }
    let body = json!({
        "timestamp": format!("{ms}({date})"),
        "workerId": worker.to_string(),
        "sequenceId": parts.sequence().to_string(),
    });
    Ok(no_store(body.to_string(), "application/json"))
}

/// `GET /healthz`: the process runs.
async fn healthz() -> Response {
    no_store("ok\n".into(), "text/plain; charset=utf-8")
}

/// `GET /readyz`: 200 while every generator can issue, else 503 with the reasons.
async fn readyz(State(s): State<Arc<AppState>>) -> Response {
    let reasons = s.not_ready();
    let ready = reasons.is_empty();
    let mut r = no_store(
        json!({"ready": ready, "reasons": reasons}).to_string(),
        "application/json",
    );
    if !ready {
        *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

/// `GET /metrics`: OpenMetrics text; the lease gauges are read now.
async fn metrics(State(s): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let now = now_ms();
    for g in &s.gens {
        let Some(info) = g.gen.lease() else { continue };
        let label = GenLabel {
            generator: g.name.clone(),
        };
        let m = &s.metrics;
        m.lease_slot.get_or_create(&label).set(info.slot as i64);
        let left = info
            .reserved_end_ms
            .map_or(0, |end| end.saturating_sub(now));
        m.reservation_remaining
            .get_or_create(&label)
            .set(left as i64);
        m.renewals.get_or_create(&label).set(info.renewals as i64);
        m.store_timeouts
            .get_or_create(&label)
            .set(info.timeouts as i64);
    }
    let mut body = String::new();
    prometheus_client::encoding::text::encode(&mut body, &s.metrics.registry)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    Ok(no_store(
        body,
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    ))
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// True when `given` is one of `tokens`, comparing every token in constant time.
fn token_ok(tokens: &[Vec<u8>], given: &[u8]) -> bool {
    let mut ok = subtle::Choice::from(0);
    for t in tokens {
        ok |= t.as_slice().ct_eq(given);
    }
    ok.into()
}

/// Authentication (all but the probes), then the request, counted and timed.
async fn observe(State(s): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    let probe = route == "/healthz" || route == "/readyz";
    let response = if !probe && !s.tokens.is_empty() {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            });
        match given {
            Some(t) if token_ok(&s.tokens, t.trim().as_bytes()) => next.run(req).await,
            _ => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid bearer token is required",
            )
            .into_response(),
        }
    } else {
        next.run(req).await
    };
    let label = ReqLabel {
        route,
        status: response.status().as_u16(),
    };
    s.metrics.requests.get_or_create(&label).inc();
    s.metrics.latency.observe(start.elapsed().as_secs_f64());
    response
}
