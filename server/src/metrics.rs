//! The `/metrics` registry (OpenMetrics text via prometheus-client), named
//! by Prometheus' conventions: counters end in `_total` (prometheus-client
//! adds it to a counter's samples), durations are seconds, every per-request
//! HTTP metric has a `route` label (the pattern, never the raw path), and
//! `snowmint_build_info` is 1 with the version in its labels.
//! `cargo xtask test server` parses the page with Prometheus' Python parsers and
//! checks these rules (server/tests/metrics_format.py).

use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, OnceLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// A generator label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GenLabel {
    /// The generator's name.
    pub generator: String,
}

/// A lease state label: the generator and one of [`LEASE_STATES`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaseStateLabel {
    /// The generator's name.
    pub generator: String,
    /// `held`, `expired`, `lost` or `none`.
    pub state: &'static str,
}

/// A generator's lease states, as `snowmint_lease_state` labels them:
/// `held` (a confirmed reservation ahead), `expired` (none ahead: the
/// renewals fail, the lease's own thread keeps trying), `lost` (another
/// holder took the slot: a new claim is being tried), `none` (a generator
/// without a lease: its node values are given).
pub const LEASE_STATES: [&str; 4] = ["held", "expired", "lost", "none"];

/// A route label: the route pattern (or gRPC method), as [`ReqLabel`]'s.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabel {
    /// The matched route (`/v1/decode/{id}`, `/snowmint.v1.Ids/NextIds`), or `unmatched`.
    pub route: String,
}

/// `snowmint_build_info`'s labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabel {
    /// The server's version (`CARGO_PKG_VERSION`).
    pub version: &'static str,
    /// The compiler that built it (`rustc --version`'s second word).
    pub rustc: &'static str,
    /// Whether the network lease stores are built in (the `stores` feature).
    pub stores: &'static str,
}

/// The request latency histogram's buckets: 25 µs to about 3.3 s, in seconds.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_025, 2.0, 18))
}

/// A failure label: the generator and the error's code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FailLabel {
    /// The generator's name.
    pub generator: String,
    /// The stable error code (`lease_expired`, `clock_moved_backwards`, ...).
    pub code: String,
}

/// A request label: the route pattern (never the raw path, which would
/// make one series per ID) and the status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReqLabel {
    /// The matched route (`/v1/decode/{id}`), or `unmatched`.
    pub route: String,
    /// The HTTP status code.
    pub status: u16,
}

/// A Thrift user agent label (`other` once the tracked set is full).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AgentLabel {
    /// The `useragent` of `get_id`.
    pub agent: String,
}

/// A gRPC call label: the method path and the status code's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GrpcLabel {
    /// The method (`/snowmint.v1.Ids/NextIds`), or `unmatched`.
    pub route: String,
    /// The gRPC status code's name (`Ok`, `InvalidArgument`, `Unauthenticated`, ...).
    pub code: String,
}

/// Every metric of the server.
#[derive(Debug)]
pub struct Metrics {
    /// The registry `/metrics` encodes.
    pub registry: Registry,
    /// IDs issued, per generator.
    pub ids: Family<GenLabel, Counter>,
    /// Requests answered, per route and status.
    pub requests: Family<ReqLabel, Counter>,
    /// gRPC calls answered, per method and status code.
    pub grpc_requests: Family<GrpcLabel, Counter>,
    /// Request latency in seconds, per route (HTTP and gRPC).
    pub latency: Family<RouteLabel, Histogram>,
    /// Failed issues, per generator and code (clock steps are `clock_moved_backwards`).
    pub failures: Family<FailLabel, Counter>,
    /// The leased slot, per generator.
    pub lease_slot: Family<GenLabel, Gauge>,
    /// Seconds left in the confirmed reservation.
    pub reservation_remaining: Family<GenLabel, Gauge<f64, AtomicU64>>,
    /// Confirmed renewals (every lease the generator has held).
    pub renewals: Family<GenLabel, Counter>,
    /// Store calls that missed their deadline (every lease the generator has held).
    pub store_timeouts: Family<GenLabel, Counter>,
    /// 1 for the lease's state of [`LEASE_STATES`], 0 for the others.
    pub lease_state: Family<LeaseStateLabel, Gauge>,
    /// Leases claimed again after one was lost.
    pub reclaims: Family<GenLabel, Counter>,
    /// IDs issued over Thrift, per user agent.
    pub thrift_ids: Family<AgentLabel, Counter>,
    /// Open connections.
    pub connections: Gauge,
    /// Connections refused past `--max-connections`.
    pub connections_refused: Counter,
    /// Requests and gRPC calls refused past `--rate-limit` or `--rate-limit-ids`.
    pub rate_limited: Counter,
    /// 1, with the version in the labels.
    pub build_info: Family<BuildLabel, Gauge>,
    /// Held while the lease gauges and counters are brought up to date
    /// ([`Metrics::refresh`]): two scrapes at once must not both add a
    /// counter's difference.
    scrape: Mutex<()>,
    /// Handles to the counters every request bumps, see [`Metrics::count_ok`].
    hot: Hot,
}

/// How many route patterns [`Metrics::count_ok`] keeps a handle for.
pub const HOT_ROUTES: usize = 16;

/// Handles to series of `requests` (status 200, per route) and `ids` (per
/// generator), each made on its first use through its family, as before, so
/// that `/metrics` lists the same series; later requests bump the shared
/// counter directly, without the family's lock, hashing and label copy.
#[derive(Debug, Default)]
struct Hot {
    ok: [OnceLock<Counter>; HOT_ROUTES],
    latency: [OnceLock<Histogram>; HOT_ROUTES],
    ids: OnceLock<Box<[OnceLock<Counter>]>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with every metric, each with its help text.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("snowmint");
        let ids = Family::<GenLabel, Counter>::default();
        registry.register("ids_issued", "IDs issued", ids.clone());
        let requests = Family::<ReqLabel, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let grpc_requests = Family::<GrpcLabel, Counter>::default();
        registry.register(
            "grpc_requests",
            "gRPC calls answered",
            grpc_requests.clone(),
        );
        let latency = Family::<RouteLabel, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request and gRPC call latency, per route",
            latency.clone(),
        );
        let failures = Family::<FailLabel, Counter>::default();
        registry.register(
            "issue_failures",
            "Requests for IDs that failed, by error code",
            failures.clone(),
        );
        let lease_slot = Family::<GenLabel, Gauge>::default();
        registry.register("lease_slot", "The leased node value", lease_slot.clone());
        let reservation_remaining = Family::<GenLabel, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "lease_reservation_remaining_seconds",
            "Seconds left in the confirmed reservation",
            reservation_remaining.clone(),
        );
        let renewals = Family::<GenLabel, Counter>::default();
        registry.register(
            "lease_renewals",
            "Confirmed lease renewals",
            renewals.clone(),
        );
        let store_timeouts = Family::<GenLabel, Counter>::default();
        registry.register(
            "lease_store_timeouts",
            "Store calls that missed their deadline",
            store_timeouts.clone(),
        );
        let lease_state = Family::<LeaseStateLabel, Gauge>::default();
        registry.register(
            "lease_state",
            "1 for the generator's lease state (held, expired, lost; none: no lease), 0 for the others",
            lease_state.clone(),
        );
        let reclaims = Family::<GenLabel, Counter>::default();
        registry.register(
            "lease_reclaims",
            "Leases claimed again after one was lost to another holder",
            reclaims.clone(),
        );
        let thrift_ids = Family::<AgentLabel, Counter>::default();
        registry.register(
            "thrift_ids",
            "IDs issued over Thrift by get_id, per user agent",
            thrift_ids.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "http_connections",
            "Open HTTP connections",
            connections.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "http_connections_refused",
            "Connections refused past --max-connections",
            connections_refused.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "http_rate_limited",
            "HTTP requests (429) and gRPC calls (RESOURCE_EXHAUSTED) refused past --rate-limit or --rate-limit-ids",
            rate_limited.clone(),
        );
        let build_info = Family::<BuildLabel, Gauge>::default();
        registry.register(
            "build_info",
            "1; the labels say which build of the server this is",
            build_info.clone(),
        );
        build_info
            .get_or_create(&BuildLabel {
                version: env!("CARGO_PKG_VERSION"),
                rustc: env!("SNOWMINT_RUSTC_VERSION"),
                stores: if cfg!(feature = "stores") {
                    "true"
                } else {
                    "false"
                },
            })
            .set(1);
        Metrics {
            registry,
            build_info,
            scrape: Mutex::new(()),
            rate_limited,
            connections,
            connections_refused,
            ids,
            requests,
            grpc_requests,
            latency,
            failures,
            lease_slot,
            reservation_remaining,
            renewals,
            store_timeouts,
            lease_state,
            reclaims,
            thrift_ids,
            hot: Hot::default(),
        }
    }

    /// Counts a 200 answer of route `index` (below [`HOT_ROUTES`]), whose
    /// pattern is `route`: the same series as
    /// `requests.get_or_create(&ReqLabel { route, status: 200 })`.
    pub fn count_ok(&self, index: usize, route: &'static str) {
        let make = || {
            self.requests
                .get_or_create(&ReqLabel {
                    route: route.to_string(),
                    status: 200,
                })
                .clone()
        };
        match self.hot.ok.get(index) {
            Some(slot) => slot.get_or_init(make).inc(),
            None => make().inc(),
        };
    }

    /// Observes a request's latency, `seconds`, for route `index` (below
    /// [`HOT_ROUTES`]), whose pattern is `route`: the same series as
    /// `latency.get_or_create(&RouteLabel { route })`.
    pub fn observe_latency(&self, index: usize, route: &'static str, seconds: f64) {
        let make = || {
            self.latency
                .get_or_create(&RouteLabel {
                    route: route.to_string(),
                })
                .clone()
        };
        match self.hot.latency.get(index) {
            Some(slot) => slot.get_or_init(make).observe(seconds),
            None => make().observe(seconds),
        };
    }

    /// Observes the latency of a request of a route outside the hot set.
    pub fn observe_latency_of(&self, route: &str, seconds: f64) {
        self.latency
            .get_or_create(&RouteLabel {
                route: route.to_string(),
            })
            .observe(seconds);
    }

    /// Counts `n` IDs issued by generator `index` of `of`, named `name`: the
    /// same series as `ids.get_or_create(&GenLabel { generator: name })`.
    pub fn count_ids(&self, index: usize, of: usize, name: &str, n: u64) {
        let make = || {
            self.ids
                .get_or_create(&GenLabel {
                    generator: name.to_string(),
                })
                .clone()
        };
        let slots = self
            .hot
            .ids
            .get_or_init(|| (0..of).map(|_| OnceLock::new()).collect());
        match slots.get(index) {
            Some(slot) => slot.get_or_init(make).inc_by(n),
            None => make().inc_by(n),
        };
    }
}

impl Metrics {
    /// Brings the lease metrics of `gens` up to date at `now` (ms), before
    /// `/metrics` encodes them: each generator's lease state (`none` without
    /// a lease), and for a leased one its slot, the time left in its
    /// reservation, its renewals and store timeouts (counted over every
    /// lease it has held: a lease claimed again starts its own at 0), and
    /// its re-claims, listed from the start at 0.
    pub fn refresh(&self, gens: &[crate::state::Gen], now: u64) {
        let _one = self.scrape.lock().unwrap_or_else(|e| e.into_inner());
        for g in gens {
            let label = GenLabel {
                generator: g.name.clone(),
            };
            let (state, counts) = match g.lease_counts() {
                Some((info, renewals, timeouts)) => {
                    self.lease_slot.get_or_create(&label).set(info.slot as i64);
                    let left = info
                        .reserved_end_ms
                        .map_or(0, |end| end.saturating_sub(now));
                    self.reservation_remaining
                        .get_or_create(&label)
                        .set(left as f64 / 1000.0);
                    drop(self.reclaims.get_or_create(&label));
                    (
                        crate::state::lease_state(&info, now),
                        Some((renewals, timeouts)),
                    )
                }
                None => ("none", None),
            };
            if let Some((renewals, timeouts)) = counts {
                for (family, total) in
                    [(&self.renewals, renewals), (&self.store_timeouts, timeouts)]
                {
                    let c = family.get_or_create(&label);
                    c.inc_by(total.saturating_sub(c.get()));
                }
            }
            for st in LEASE_STATES {
                let l = LeaseStateLabel {
                    generator: g.name.clone(),
                    state: st,
                };
                self.lease_state
                    .get_or_create(&l)
                    .set(i64::from(st == state));
            }
        }
    }
}

/// `text`, prometheus-client's OpenMetrics page, in Prometheus' older text
/// format (0.0.4, for a scraper that asks for `text/plain`): a counter's
/// `HELP` and `TYPE` name its samples' `_total` name, and the `UNIT` and
/// `# EOF` lines go. The samples are the same (this registry writes no
/// `_created` samples; label values are escaped alike in both formats).
pub fn prometheus_text(text: &str) -> String {
    let counters: std::collections::HashSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(text.len() + 16 * counters.len());
    for line in text.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| Some((p, line.strip_prefix(p)?)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                out.push_str(prefix);
                out.push_str(name);
                if counters.contains(name) {
                    out.push_str("_total");
                }
                if !tail.is_empty() {
                    out.push(' ');
                    out.push_str(tail);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_text_format_names_counters_by_their_samples() {
        let om = "# HELP a_x X \"q\".\n# TYPE a_x counter\na_x_total{route=\"/v1/ids\"} 3\n\
                  # HELP g G.\n# TYPE g gauge\n# UNIT g seconds\ng 1.5\n# EOF\n";
        assert_eq!(
            prometheus_text(om),
            "# HELP a_x_total X \"q\".\n# TYPE a_x_total counter\na_x_total{route=\"/v1/ids\"} 3\n\
             # HELP g G.\n# TYPE g gauge\ng 1.5\n"
        );
    }
}
