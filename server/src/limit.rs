//! The per-token request rate (`--rate-limit N`): one token bucket per
//! configured bearer token, N requests a second with bursts of N. Past it a
//! request gets `429` (`rate_limited`) with `Retry-After`. Requests without
//! a valid token are not counted here (they get `401` from the router).

use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use prometheus_client::metrics::counter::Counter;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

/// The buckets, one per token (in the token file's order).
struct Limiter {
    per_second: f64,
    table: RwLock<Table>,
    refused: Counter,
}

/// Each token's digest and bucket.
struct Table {
    digests: Vec<[u8; 32]>,
    buckets: Vec<Mutex<Bucket>>,
}

/// The limit's handle: [`RateLimit::reload`] follows a new token file.
#[derive(Clone)]
pub struct RateLimit(Arc<Limiter>);

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit").finish_non_exhaustive()
    }
}

impl RateLimit {
    /// The buckets of `tokens` (a new token starts with a full bucket; a
    /// token kept from before keeps its bucket, so a reload does not refill it).
    pub fn reload(&self, tokens: &[Vec<u8>]) {
        let l = &self.0;
        let mut table = l.table.write().unwrap_or_else(|e| e.into_inner());
        let old = std::mem::replace(&mut *table, Table::new(tokens, l.per_second));
        for (d, b) in old.digests.iter().zip(old.buckets) {
            if let Some(i) = table.digests.iter().position(|x| x == d) {
                table.buckets[i] = b;
            }
        }
    }
}

impl Table {
    fn new(tokens: &[Vec<u8>], per_second: f64) -> Table {
        let now = Instant::now();
        Table {
            digests: tokens.iter().map(|t| Sha256::digest(t).into()).collect(),
            buckets: tokens
                .iter()
                .map(|_| {
                    Mutex::new(Bucket {
                        level: per_second,
                        at: now,
                    })
                })
                .collect(),
        }
    }
}

struct Bucket {
    level: f64,
    at: Instant,
}

/// `router` with the rate of each of `tokens` limited to `per_second`, and
/// the handle that reloads the tokens.
pub fn layer(
    router: Router,
    tokens: &[Vec<u8>],
    per_second: u32,
    refused: Counter,
) -> (Router, RateLimit) {
    let per_second = f64::from(per_second);
    let limiter = Arc::new(Limiter {
        per_second,
        table: RwLock::new(Table::new(tokens, per_second)),
        refused,
    });
    let handle = RateLimit(Arc::clone(&limiter));
    (
        router.layer(middleware::from_fn_with_state(limiter, check)),
        handle,
    )
}

impl Limiter {
    /// The index of the request's bearer token, compared as in `app`: SHA-256
    /// digests, every token in constant time.
    fn token_index(&self, table: &Table, req: &Request) -> Option<usize> {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })?;
        let given: [u8; 32] = Sha256::digest(given.trim().as_bytes()).into();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u64;
        for (i, d) in table.digests.iter().enumerate() {
            let same = d.ct_eq(&given);
            index = u64::conditional_select(&index, &(i as u64), same);
            found |= same;
        }
        bool::from(found).then_some(index as usize)
    }

    /// Takes one request from the bucket of the request's token (none: a
    /// request without a valid token, not counted here), or says how many
    /// seconds until one is there.
    fn admit(&self, req: &Request) -> Result<(), u64> {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        let Some(i) = self.token_index(&table, req) else {
            return Ok(());
        };
        let mut b = table.buckets[i].lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let refill = now.duration_since(b.at).as_secs_f64() * self.per_second;
        b.level = (b.level + refill).min(self.per_second);
        b.at = now;
        if b.level >= 1.0 {
            b.level -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - b.level) / self.per_second).ceil().max(1.0) as u64)
        }
    }
}

async fn check(State(l): State<Arc<Limiter>>, req: Request, next: Next) -> Response {
    if let Err(wait) = l.admit(&req) {
        l.refused.inc();
        let body = serde_json::json!({"error": {
            "code": "rate_limited",
            "message": "this token's request rate is over the server's --rate-limit: try again later",
        }});
        let mut r = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert(header::RETRY_AFTER, HeaderValue::from(wait));
        return r;
    }
    next.run(req).await
}
