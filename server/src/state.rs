//! What every request shares: the generators (each one swappable, so that a
//! lost lease is replaced by a new claim without a restart: `heal.rs`), the
//! issue path of every protocol, readiness.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::StatusCode;
use snowmint::{Error, Iso8601, Layout, SystemClock, Value};
use snowmint_lease::{AnyGenerator, InfoValue};

use crate::app::{check_count, cut, decode_layout, ApiError};
use crate::metrics::{FailLabel, Metrics};

/// One named generator.
///
/// Its generator is behind a lock only so that a lease lost to another
/// holder can be replaced by a new claim ([`crate::heal`]); every request
/// takes the current one once ([`Gen::gen`]) and issues from it.
#[derive(Debug)]
pub struct Gen {
    /// Its name in URLs.
    pub name: String,
    current: RwLock<Arc<AnyGenerator>>,
    /// How to claim again: the layout, node values and options it was
    /// opened with (`None`: not leased, or not opened by the service).
    reclaim: Option<(Layout, Value, Value)>,
    /// Leases claimed again after one was lost.
    pub(crate) reclaims: AtomicU64,
    /// The renewals and store timeouts of the leases it held before the
    /// current one (changed with it, under its lock).
    retired: (AtomicU64, AtomicU64),
}

impl Gen {
    /// A generator that is never replaced.
    pub fn new(name: impl Into<String>, gen: AnyGenerator) -> Gen {
        Gen {
            name: name.into(),
            current: RwLock::new(Arc::new(gen)),
            reclaim: None,
            reclaims: AtomicU64::new(0),
            retired: (AtomicU64::new(0), AtomicU64::new(0)),
        }
    }

    /// A generator opened from `layout`, `nodes` and `options`: if leased,
    /// a lost lease is claimed again with the same arguments.
    pub(crate) fn reclaimable(
        name: impl Into<String>,
        gen: AnyGenerator,
        layout: Layout,
        nodes: Value,
        options: Value,
    ) -> Gen {
        let leased = gen.lease().is_some();
        let mut g = Gen::new(name, gen);
        if leased {
            g.reclaim = Some((layout, nodes, options));
        }
        g
    }

    /// The current generator.
    #[inline]
    pub fn gen(&self) -> Arc<AnyGenerator> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The arguments of a new claim (`None`: never claimed again).
    pub(crate) fn reclaim_args(&self) -> Option<&(Layout, Value, Value)> {
        self.reclaim.as_ref()
    }

    /// Makes `new` the current generator; returns the one it replaces.
    pub(crate) fn replace(&self, new: AnyGenerator) -> Arc<AnyGenerator> {
        let mut cur = self.current.write().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = cur.lease() {
            self.retired.0.fetch_add(old.renewals, Ordering::Relaxed);
            self.retired.1.fetch_add(old.timeouts, Ordering::Relaxed);
        }
        std::mem::replace(&mut *cur, Arc::new(new))
    }

    /// The current lease, and the renewals and store timeouts of every
    /// lease this generator has held (None: no lease).
    pub fn lease_counts(&self) -> Option<(snowmint_lease::LeaseInfo, u64, u64)> {
        let cur = self.current.read().unwrap_or_else(|e| e.into_inner());
        let info = cur.lease()?;
        let renewals = self.retired.0.load(Ordering::Relaxed) + info.renewals;
        let timeouts = self.retired.1.load(Ordering::Relaxed) + info.timeouts;
        Some((info, renewals, timeouts))
    }
}

/// What every request shares.
#[derive(Debug)]
pub struct AppState {
    /// The generators, in name order.
    pub gens: Vec<Gen>,
    /// The largest `count`.
    pub max_count: u64,
    /// Accepted bearer tokens (empty: none needed).
    pub tokens: crate::auth::Tokens,
    /// The per-token rates (`--rate-limit`, `--rate-limit-ids`).
    pub rates: crate::limit::Rates,
    /// The metrics.
    pub metrics: Metrics,
    /// Set on SIGTERM/SIGINT: `/readyz` answers 503 from then on.
    pub shutting_down: AtomicBool,
    /// `--idle-timeout`: a gRPC health Watch stream ends after it (a
    /// stream in progress would keep its connection open past it).
    pub idle_timeout: Duration,
    /// Health Watch streams open now, at most [`crate::grpc::MAX_WATCHES`].
    pub watches: Arc<tokio::sync::Semaphore>,
    /// Where the access log goes (`--access-log`; None: off).
    pub access_log: Option<crate::log::Log>,
    /// The record of issued IDs (`--issued-log`; None: off).
    pub issued_log: Option<crate::issued::IssuedLog>,
}

/// The error code of a request whose IDs could not be recorded (`--issued-log`).
pub const ISSUED_LOG_FAILED: &str = "issued_log_failed";

/// Milliseconds since the Unix epoch by the clock the generators issue by:
/// the core's `SystemClock` (the wall clock read once, then the monotonic
/// clock), read precisely. Readiness must use it, not the wall clock: after
/// a step of the wall clock the two differ, and under load the generators'
/// cached reading lags by as long as its ticking thread waits for a CPU;
/// either way `/readyz` could say a reservation had ended while IDs were
/// still issued inside it (a 30-minute fault-harness run under load saw 71
/// such answers). The precise reading also moves that cache forward, so no
/// ID is issued by an older reading after this one.
pub fn now_ms() -> u64 {
    snowmint::SystemClock.precise_ms()
}

impl AppState {
    /// `gens` with `max_count`, no token, no rate limit, fresh metrics, a
    /// 60 s idle timeout (set the public fields for others).
    pub fn new(gens: Vec<Gen>, max_count: u64) -> AppState {
        AppState {
            gens,
            max_count,
            tokens: Default::default(),
            rates: Default::default(),
            metrics: Metrics::new(),
            shutting_down: Default::default(),
            idle_timeout: Duration::from_secs(crate::net::DEFAULT_IDLE_TIMEOUT),
            watches: Arc::new(tokio::sync::Semaphore::new(crate::grpc::MAX_WATCHES)),
            access_log: None,
            issued_log: None,
        }
    }

    /// The generator named `name`, or the only one when `name` is absent.
    pub fn pick(&self, name: Option<&str>) -> Result<&Gen, ApiError> {
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

    /// `count` IDs of `g`, waiting (on tokio's timer) when the core says so:
    /// the one issue path of every protocol (HTTP, gRPC, Thrift). A failure is
    /// counted under its core code. With `--issued-log`, the IDs are recorded
    /// before they are returned; a failed record is an error (500), and the
    /// IDs are not handed out.
    pub async fn issue(&self, g: &Gen, count: usize) -> Result<Vec<u64>, ApiError> {
        let gen = g.gen();
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            out.push(self.next(g, &gen).await?);
        }
        self.record(g, &out)?;
        self.count_ids(g, out.len() as u64);
        Ok(out)
    }

    /// One ID of `g` (as [`AppState::issue`] with a count of 1, without the vector).
    pub(crate) async fn issue_one(&self, g: &Gen) -> Result<u64, ApiError> {
        let id = self.next(g, &g.gen()).await?;
        self.record(g, &[id])?;
        self.count_ids(g, 1);
        Ok(id)
    }

    /// Appends `ids` to the record of issued IDs, if there is one (a
    /// blocking write(2) of one line to a regular file, as the access log
    /// writes to stderr).
    #[inline]
    fn record(&self, g: &Gen, ids: &[u64]) -> Result<(), ApiError> {
        let Some(log) = &self.issued_log else {
            return Ok(());
        };
        log.record(&g.name, ids).map_err(|message| {
            let label = FailLabel {
                generator: g.name.clone(),
                code: ISSUED_LOG_FAILED.to_string(),
            };
            self.metrics.failures.get_or_create(&label).inc();
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ISSUED_LOG_FAILED,
                message,
            )
        })
    }

    /// The next ID of `g` (from `gen`, its current generator), waiting when the core says so; a failure is counted.
    ///
    /// The wait reads the core's precise clock, which also moves its cached
    /// clock (refreshed by a thread every 0.5 ms, later on a busy machine)
    /// forward, so that a retry sees the new millisecond at once. Waits of
    /// 2 ms or more sleep on tokio's timer (1 ms ticks, waking up to a tick
    /// late) until the last millisecond; the last one waits for
    /// [`crate::tick::next_millisecond`]. Sleeping through it on the timer would leave
    /// the next millisecond's sequence unused: a `count` of 4,096 on the
    /// `twitter` layout made 6% of its 4,096,000 IDs/s that way.
    #[inline]
    async fn next(&self, g: &Gen, gen: &AnyGenerator) -> Result<u64, Error> {
        let mut retried = false;
        loop {
            match gen.try_next_id() {
                Ok(snowmint::Next::Id(id)) => return Ok(id.get()),
                Ok(snowmint::Next::RetryAt(ms)) => match ms.checked_sub(SystemClock.precise_ms()) {
                    Some(wait) if wait >= 2 => {
                        tokio::time::sleep(Duration::from_millis(wait - 1)).await
                    }
                    Some(1) => crate::tick::next_millisecond().await,
                    // The time has come (the precise reading moved the
                    // cache): retry at once, then let other tasks run.
                    _ if !retried => retried = true,
                    _ => tokio::task::yield_now().await,
                },
                Err(e) => {
                    let label = FailLabel {
                        generator: g.name.clone(),
                        code: e.code().to_string(),
                    };
                    self.metrics.failures.get_or_create(&label).inc();
                    return Err(e);
                }
            }
        }
    }

    /// Adds `n` to `g`'s issued IDs.
    fn count_ids(&self, g: &Gen, n: u64) {
        let index = self
            .gens
            .iter()
            .position(|x| std::ptr::eq(x, g))
            .unwrap_or(usize::MAX);
        self.metrics.count_ids(index, self.gens.len(), &g.name, n);
    }

    /// Why the server cannot issue now (empty: ready); without `detail`,
    /// what is wrong but not the store's error text.
    pub fn not_ready(&self, detail: bool) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.shutting_down.load(Ordering::SeqCst) {
            reasons.push("shutting down".to_string());
        }
        let now = now_ms();
        for g in &self.gens {
            if let Some((what, cause)) = generator_not_ready(g, now) {
                reasons.push(match detail {
                    true => format!("{}: {what}: {cause}", g.name),
                    false => format!("{}: {what}", g.name),
                });
            }
        }
        reasons
    }

    /// Whether `g` can issue now (and the server is not shutting down).
    pub fn generator_ready(&self, g: &Gen) -> bool {
        !self.shutting_down.load(Ordering::SeqCst) && generator_not_ready(g, now_ms()).is_none()
    }

    /// `count` IDs of the generator named (or the only one), `count` checked
    /// against the maximum and `caller`'s ID rate: `GET /v1/ids` and gRPC's `NextIds`.
    pub async fn next_ids(
        &self,
        generator: Option<&str>,
        count: Option<u64>,
        caller: Option<&crate::auth::Caller>,
    ) -> Result<(&Gen, Vec<u64>), ApiError> {
        let g = self.pick(generator)?;
        let count = check_count(count.unwrap_or(1), self.max_count)?;
        self.rates.admit_ids(caller, count as u64)?;
        Ok((g, self.issue(g, count).await?))
    }

    /// `id` split by the layout named (`layout`: a preset or a JSON
    /// descriptor), else by the generator's: `GET /v1/decode/{id}` and gRPC's
    /// `Decode`.
    pub fn decode(
        &self,
        id: u64,
        generator: Option<&str>,
        layout: Option<&str>,
    ) -> Result<Decoded, ApiError> {
        Decoded::new(&decode_layout(self, generator, layout)?, id)
    }

    /// Every generator's layout, node values and lease: `GET /v1/generators`
    /// and gRPC's `ListGenerators`.
    pub fn generators(&self) -> Vec<GeneratorInfo> {
        self.gens
            .iter()
            .map(|g| {
                let gen = g.gen();
                let config = gen.config();
                let layout = config.layout();
                GeneratorInfo {
                    name: g.name.clone(),
                    preset: layout.preset_name(),
                    layout_json: layout.to_json(),
                    nodes: layout
                        .nodes()
                        .zip(config.nodes().values())
                        .map(|(f, v)| (f.name().to_string(), *v))
                        .collect(),
                    lease: gen.lease().map(|info| {
                        info.entries()
                            .into_iter()
                            .map(|(name, _, v)| (name, v))
                            .collect()
                    }),
                }
            })
            .collect()
    }
}

/// A lease's state at `now`, one of [`crate::metrics::LEASE_STATES`].
pub fn lease_state(info: &snowmint_lease::LeaseInfo, now: u64) -> &'static str {
    if info.lost.is_some() {
        "lost"
    } else if info.reserved_end_ms.is_none_or(|end| end <= now) {
        "expired"
    } else {
        "held"
    }
}

/// Why `g` cannot issue at `now` (None: it can): what, and its cause.
fn generator_not_ready(g: &Gen, now: u64) -> Option<(&'static str, String)> {
    let info = g.gen().lease()?;
    if let Some(lost) = &info.lost {
        Some(("slot lost", lost.clone()))
    } else if info.reserved_end_ms.is_none_or(|end| end <= now) {
        let cause = info
            .last_error
            .as_deref()
            .unwrap_or("no confirmed reservation ahead");
        Some(("reservation ended", cause.to_string()))
    } else {
        None
    }
}

/// An ID split into its parts.
#[derive(Debug)]
pub struct Decoded {
    /// The ID.
    pub id: u64,
    /// The start of its time unit, Unix ms.
    pub timestamp_ms: u64,
    /// The same in ISO 8601 (UTC).
    pub time: String,
    /// The sequence value.
    pub sequence: u64,
    /// The node fields by name, in the layout's order.
    pub nodes: Vec<(String, u64)>,
}

impl Decoded {
    /// `id` split by `layout`.
    pub fn new(layout: &Layout, id: u64) -> Result<Decoded, ApiError> {
        let parts = layout.decompose(id)?;
        Ok(Decoded {
            id,
            timestamp_ms: parts.timestamp_ms(),
            time: Iso8601(parts.timestamp_ms()).to_string(),
            sequence: parts.sequence(),
            nodes: layout
                .nodes()
                .zip(parts.nodes())
                .map(|(f, v)| (f.name().to_string(), *v))
                .collect(),
        })
    }
}

/// One generator as `GET /v1/generators` shows it.
#[derive(Debug)]
pub struct GeneratorInfo {
    /// Its name.
    pub name: String,
    /// The layout's preset name, if it is one.
    pub preset: Option<&'static str>,
    /// The layout's JSON descriptor.
    pub layout_json: String,
    /// Every node value by name, in the layout's order.
    pub nodes: Vec<(String, u64)>,
    /// The lease's entries (store password masked), if leased.
    pub lease: Option<Vec<(&'static str, InfoValue)>>,
}
