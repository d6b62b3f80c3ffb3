//! The per-token request rate (`--rate-limit N`): one token bucket per
//! configured bearer token, N requests a second with bursts of N. Past it a
//! request gets `429` (`rate_limited`) with `Retry-After`. Requests without
//! a valid token are not counted here (they get `401` from the router).

use std::sync::{Arc, Mutex};
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
    digests: Vec<[u8; 32]>,
    buckets: Vec<Mutex<Bucket>>,
    refused: Counter,
}

struct Bucket {
    level: f64,
    at: Instant,
}

/// `router` with the rate of each of `tokens` limited to `per_second`.
pub fn layer(router: Router, tokens: &[Vec<u8>], per_second: u32, refused: Counter) -> Router {
    let now = Instant::now();
    let limiter = Arc::new(Limiter {
        per_second: f64::from(per_second),
        digests: tokens.iter().map(|t| Sha256::digest(t).into()).collect(),
        buckets: tokens
            .iter()
            .map(|_| {
                Mutex::new(Bucket {
                    level: f64::from(per_second),
                    at: now,
                })
            })
            .collect(),
        refused,
    });
    router.layer(middleware::from_fn_with_state(limiter, check))
}

impl Limiter {
    /// The index of the request's bearer token, compared as in `app`: SHA-256
    /// digests, every token in constant time.
    fn token_index(&self, req: &Request) -> Option<usize> {
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
        for (i, d) in self.digests.iter().enumerate() {
            let same = d.ct_eq(&given);
            index = u64::conditional_select(&index, &(i as u64), same);
            found |= same;
        }
        bool::from(found).then_some(index as usize)
    }

    /// Takes one request from the bucket, or says how many seconds until one is there.
    fn take(&self, i: usize) -> Result<(), u64> {
        let mut b = self.buckets[i].lock().unwrap_or_else(|e| e.into_inner());
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
    if let Some(i) = l.token_index(&req) {
        if let Err(wait) = l.take(i) {
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
    }
    next.run(req).await
}
