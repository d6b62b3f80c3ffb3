//! The HTTP API: routes, handlers, errors, authentication and metrics.
//!
//! Every ID comes from the core's non-blocking `try_next_id`; when it says
//! to wait, the request sleeps on tokio's timer, never on a runtime thread.
//! A leased generator issues only inside its confirmed reservation (the lease
//! crate refuses past it), so nothing here can hand out an ID outside one.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, FromRequestParts, Path, Query, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value};
use snowmint::{Arg, ArgProblem, Error, Format, Id, IdProblem, Iso8601, Layout};
use snowmint_lease::InfoValue;

use crate::access::Issued;
use crate::auth::Caller;
pub use crate::auth::Tokens;
use crate::metrics::HOT_ROUTES;
pub use crate::state::{now_ms, AppState, Decoded, Gen, GeneratorInfo};

/// The route patterns, as `/metrics` labels them; the layer in `observe.rs` finds a
/// request's pattern here to count it without copying it.
pub(crate) const ROUTES: [&str; 9] = [
    "/v1/ids",
    "/v1/decode/{id}",
    "/v1/generators",
    "/api/snowflake/get/{key}",
    "/api/segment/get/{key}",
    "/decodeSnowflakeId",
    "/healthz",
    "/readyz",
    "/metrics",
];
const _: () = assert!(ROUTES.len() <= HOT_ROUTES);

/// The router over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(ROUTES[0], get(ids))
        .route(ROUTES[1], get(decode))
        .route(ROUTES[2], get(generators))
        // Leaf's controllers answered any method: POST too.
        .route(ROUTES[3], get(leaf_get).post(leaf_get))
        .route(ROUTES[4], get(leaf_segment).post(leaf_segment))
        .route(ROUTES[5], get(leaf_decode).post(leaf_decode))
        .route(ROUTES[6], get(healthz))
        .route(ROUTES[7], get(readyz))
        .route(ROUTES[8], get(metrics))
        .fallback(not_found)
        // The documented JSON error, with axum's `Allow` header.
        .method_not_allowed_fallback(method_not_allowed)
        .layer(crate::observe::Observe {
            state: state.clone(),
            inner: (),
        })
        .with_state(state.clone())
        // gRPC on the same port (h2c), authenticated and counted on its own.
        .merge(crate::grpc::router(state))
}

/// An error answer: `{"error":{"code":...,"message":...}}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// `Retry-After` in seconds (503: 1 unless set).
    retry_after: Option<u64>,
}

impl ApiError {
    /// The HTTP status (gRPC's status code follows from it).
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code (`invalid_option`, `unknown_generator`, ...).
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// With `Retry-After: seconds`.
    pub(crate) fn retry_after(mut self, seconds: u64) -> ApiError {
        self.retry_after = Some(seconds);
        self
    }

    /// The answer to a request without a valid token (401), or with one
    /// without the route's scope (403).
    pub(crate) fn denied(d: crate::auth::Denied) -> ApiError {
        match d {
            crate::auth::Denied::Unauthorized => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid bearer token is required",
            ),
            crate::auth::Denied::Forbidden(s) => ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("this token lacks the '{}' scope this route needs", s.name()),
            ),
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
            | Error::LeaseFenced { .. }
            | Error::ClockMovedBackwards { .. }
            | Error::ClockStalled { .. }
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
        match self.retry_after {
            Some(s) => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(s));
            }
            None if self.status == StatusCode::SERVICE_UNAVAILABLE => {
                h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            None => {}
        }
        if self.status == StatusCode::UNAUTHORIZED {
            h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// The query's parameters. A name given twice is refused (`invalid_option`):
/// which one counts would be a guess, and a proxy or a quota check in front
/// may have read the other.
#[derive(Debug)]
pub struct Params(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Params, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_option", e.body_text()))?;
        let mut map = HashMap::with_capacity(pairs.len());
        for (name, value) in pairs {
            if map.contains_key(&name) {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_option",
                    format!(
                        "the query parameter '{}' is given more than once",
                        cut(&name)
                    ),
                ));
            }
            map.insert(name, value);
        }
        Ok(Params(map))
    }
}

/// At most 64 characters of user input, for messages.
pub(crate) fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// `count`: a positive integer up to the configured maximum (absent: 1).
pub fn parse_count(text: Option<&str>, max: u64) -> Result<usize, ApiError> {
    check_count(count_text(text)?.unwrap_or(1), max)
}

/// `count`: 1 up to the configured maximum.
pub(crate) fn check_count(n: u64, max: u64) -> Result<usize, ApiError> {
    match n {
        0 => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_option",
            "the count must be at least 1",
        )),
        n if n <= max => Ok(n as usize),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_option",
            format!("the count must be at most {max}"),
        )),
    }
}

/// `count` as text: an integer (its range is [`check_count`]'s), None when absent.
fn count_text(text: Option<&str>) -> Result<Option<u64>, ApiError> {
    let Some(text) = text else { return Ok(None) };
    let problem = if let Some(digits) = text.strip_prefix('-') {
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then_some(ArgProblem::Negative)
    } else if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        match text.parse::<u64>() {
            Ok(n) => return Ok(Some(n)),
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
    Params(q): Params,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let count = count_text(q.get("count").map(String::as_str))?;
    let caller = caller.map(|Extension(c)| c);
    let (g, ids) = s
        .next_ids(
            q.get("generator").map(String::as_str),
            count,
            caller.as_ref(),
        )
        .await?;
    let plain = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/plain") && !a.contains("application/json"));
    let (body, kind) = if plain {
        (ids_text(&ids), "text/plain; charset=utf-8")
    } else {
        (ids_json(&g.name, &ids), "application/json")
    };
    let mut r = no_store(body, kind);
    if s.access_log.is_some() {
        r.extensions_mut().insert(Issued(ids.len()));
    }
    Ok(r)
}

/// One decimal ID per line.
fn ids_text(ids: &[u64]) -> String {
    let mut digits = itoa::Buffer::new();
    let mut b = String::with_capacity(ids.len() * 21);
    for &id in ids {
        b.push_str(digits.format(id));
        b.push('\n');
    }
    b
}

/// What `json!({"generator": name, "ids": [id.to_string(), ...]}).to_string()`
/// writes, without a `String` and a `Value` per ID.
fn ids_json(name: &str, ids: &[u64]) -> String {
    let name = Value::from(name).to_string();
    let mut digits = itoa::Buffer::new();
    let mut b = String::with_capacity(24 + name.len() + ids.len() * 23);
    b.push_str("{\"generator\":");
    b.push_str(&name);
    b.push_str(",\"ids\":[");
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            b.push(',');
        }
        b.push('"');
        b.push_str(digits.format(id));
        b.push('"');
    }
    b.push_str("]}");
    b
}

/// A 200 answer of `kind` that caches must not keep (the headers
/// `(kind, body).into_response()` then `Cache-Control: no-store` give, built
/// without writing `Content-Type` twice).
fn no_store(body: String, kind: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    let h = r.headers_mut();
    h.reserve(2);
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// A `layout=` parameter: a JSON descriptor when it starts with `{` (after
/// whitespace), else a preset name.
pub fn parse_layout(text: &str) -> Result<Layout, ApiError> {
    if text.trim_start().starts_with('{') {
        Ok(Layout::parse(text)?)
    } else {
        Ok(Layout::preset(text)?)
    }
}

/// The layout a decode request names: `layout=` (a preset or a JSON
/// descriptor), else the generator's.
pub fn decode_layout(
    s: &AppState,
    generator: Option<&str>,
    layout: Option<&str>,
) -> Result<Layout, ApiError> {
    // A generator named is checked even when `layout=` overrides its layout.
    let named = match generator {
        Some(n) => Some(s.pick(Some(n))?),
        None => None,
    };
    match layout {
        Some(l) => parse_layout(l),
        None => Ok(*named
            .map_or_else(|| s.pick(None), Ok)?
            .gen()
            .config()
            .layout()),
    }
}

/// `GET /v1/decode/{id}`: the object `snowmint decode --json` writes.
async fn decode(
    State(s): State<Arc<AppState>>,
    id: Result<Path<String>, PathRejection>,
    Params(q): Params,
) -> Result<Response, ApiError> {
    // A path segment that is not UTF-8 once decoded is not an ID either.
    let Ok(Path(id)) = id else {
        return Err(Error::InvalidId(IdProblem::BadChar { at: 0 }).into());
    };
    let id = Id::parse(&id, Format::Decimal)?.get();
    let d = s.decode(
        id,
        q.get("generator").map(String::as_str),
        q.get("layout").map(String::as_str),
    )?;
    Ok(no_store(decoded_json(&d).to_string(), "application/json"))
}

/// The body of `GET /v1/decode/{id}`: `text` (a decimal ID) decoded with `layout`.
pub fn decode_json(layout: &Layout, text: &str) -> Result<Value, ApiError> {
    let id = Id::parse(text, Format::Decimal)?.get();
    Ok(decoded_json(&Decoded::new(layout, id)?))
}

/// The object `snowmint decode --json` writes, from a decoded ID.
fn decoded_json(d: &Decoded) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(d.id.to_string()));
    m.insert("timestamp_ms".into(), json!(d.timestamp_ms));
    m.insert("time".into(), json!(d.time));
    m.insert("sequence".into(), json!(d.sequence));
    for (name, v) in &d.nodes {
        m.insert(name.clone(), json!(v));
    }
    Value::Object(m)
}

/// `GET /v1/generators`: each generator's layout, node values and lease
/// (the store as it describes itself: password masked).
async fn generators(State(s): State<Arc<AppState>>) -> Response {
    let list: Vec<Value> = s
        .generators()
        .into_iter()
        .map(|g| {
            let descriptor: Value = serde_json::from_str(&g.layout_json).unwrap_or(Value::Null);
            let nodes: Map<String, Value> =
                g.nodes.into_iter().map(|(n, v)| (n, json!(v))).collect();
            let lease = g.lease.map(|entries| {
                let m: Map<String, Value> = entries
                    .into_iter()
                    .map(|(name, v)| {
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
                "preset": g.preset,
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
    caller: Option<Extension<Caller>>,
    key: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    s.rates
        .admit_ids(caller.as_ref().map(|Extension(c)| c), 1)?;
    // A key that is not UTF-8 once decoded names no generator.
    let key = key.map_or_else(|_| String::new(), |Path(k)| k);
    let g = match s.gens.iter().find(|g| g.name == key) {
        Some(g) => g,
        None => s.pick(if s.gens.len() == 1 { None } else { Some(&key) })?,
    };
    let id = s.issue_one(g).await?;
    let mut r = no_store(
        itoa::Buffer::new().format(id).to_string(),
        "text/plain; charset=utf-8",
    );
    if s.access_log.is_some() {
        r.extensions_mut().insert(Issued(1));
    }
    Ok(r)
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
/// bits as one number) and `sequenceId`, all strings. Without `generator=`
/// or `layout=`, several generators that share one layout decode with it
/// (Leaf's route serves them all with one layout); an ID that is not one
/// gets Leaf's `errorMsg` beside the error object.
async fn leaf_decode(
    State(s): State<Arc<AppState>>,
    Params(q): Params,
) -> Result<Response, ApiError> {
    let (generator, layout) = (
        q.get("generator").map(String::as_str),
        q.get("layout").map(String::as_str),
    );
    let layout = match (generator, layout, shared_layout(&s)) {
        (None, None, Some(l)) => l,
        _ => decode_layout(&s, generator, layout)?,
    };
    let text = q.get("snowflakeId").map(String::as_str).unwrap_or_default();
    match leaf_decode_json(&layout, text) {
        Ok(body) => Ok(no_store(body.to_string(), "application/json")),
        Err(e) if e.code == "invalid_id" => {
            let body = json!({
                "errorMsg": LEAF_BAD_ID,
                "error": {"code": e.code, "message": e.message},
            });
            let mut r = no_store(body.to_string(), "application/json");
            *r.status_mut() = e.status;
            Ok(r)
        }
        Err(e) => Err(e),
    }
}

/// What Leaf's `decodeSnowflakeId` answers for an ID it cannot parse.
pub const LEAF_BAD_ID: &str = "snowflake Id反解析发生异常!";

/// The layout every generator has, if they all have one.
fn shared_layout(s: &AppState) -> Option<Layout> {
    let first = *s.gens.first()?.gen().config().layout();
    s.gens
        .iter()
        .all(|g| *g.gen().config().layout() == first)
        .then_some(first)
}

/// The body of `GET /decodeSnowflakeId`: `text` (Leaf's `snowflakeId`, a
/// decimal ID; absent is empty) decoded with `layout`.
pub fn leaf_decode_json(layout: &Layout, text: &str) -> Result<Value, ApiError> {
    let id = Id::parse(text, Format::Decimal)?.get();
    let parts = layout.decompose(id)?;
    let ms = parts.timestamp_ms();
    let date = Iso8601(ms).to_string().replace('T', " ").replace('Z', "");
    let mut worker: u64 = 0;
    for (f, v) in layout.nodes().zip(parts.nodes()) {
        worker = (worker << f.bits()) | v;
    }
    Ok(json!({
        "timestamp": format!("{ms}({date})"),
        "workerId": worker.to_string(),
        "sequenceId": parts.sequence().to_string(),
    }))
}

/// `GET /healthz`: the process runs.
async fn healthz() -> Response {
    no_store("ok\n".into(), "text/plain; charset=utf-8")
}

/// `GET /readyz`: 200 while every generator can issue, else 503 with the
/// reasons. With tokens configured, a request without a valid one gets the
/// reasons without their causes (a store's error text may name hosts,
/// users or databases).
async fn readyz(State(s): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let auth = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    let detail = s.tokens.check(auth, None).is_ok();
    let reasons = s.not_ready(detail);
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

/// `GET /metrics`: OpenMetrics text, or Prometheus' older text format
/// (0.0.4) for a client whose `Accept` names `text/plain` and not
/// OpenMetrics; the lease metrics are read now.
async fn metrics(State(s): State<Arc<AppState>>, headers: HeaderMap) -> Result<Response, ApiError> {
    s.metrics.refresh(&s.gens, now_ms());
    let mut body = String::new();
    prometheus_client::encoding::text::encode(&mut body, &s.metrics.registry)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if accept.contains("text/plain") && !accept.contains("application/openmetrics-text") {
        return Ok(no_store(
            crate::metrics::prometheus_text(&body),
            "text/plain; version=0.0.4; charset=utf-8",
        ));
    }
    Ok(no_store(
        body,
        "application/openmetrics-text; version=1.0.0; charset=utf-8",
    ))
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take this method: see the Allow header",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_bodies_are_what_serde_json_writes() {
        let cases: [(&str, &[u64]); 4] = [
            ("default", &[1]),
            ("a \"quoted\" \\ name\n\u{1}é", &[0, 9, 10, u64::MAX]),
            ("", &[1_234_567_890_123_456_789, 42]),
            ("orders", &[]),
        ];
        for (name, ids) in cases {
            let list: Vec<String> = ids.iter().map(u64::to_string).collect();
            let want = json!({"generator": name, "ids": list}).to_string();
            assert_eq!(ids_json(name, ids), want);
            let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
            assert_eq!(ids_text(ids), text);
        }
    }
}
