//! The process: opens every generator, serves until SIGTERM/SIGINT, lets
//! in-flight requests finish, releases every lease.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value as Json};
use snowmint::Value;
use snowmint_lease::AnyGenerator;
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::app::{self, AppState, Gen};
use crate::config::{self, Config, Flags};
use crate::listen::{self, ConnMetrics};
use crate::log::Log;
use crate::net::Net;

/// How long in-flight requests may take to finish after SIGTERM/SIGINT.
const GRACE: Duration = Duration::from_secs(5);

/// Runs the service with these flags; the exit code says how it ended (2: a
/// configuration error, 1: a store that could not be reached or a failure).
pub fn run(flags: Flags) -> ExitCode {
    let config = match config::load(flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("snowmint-server: {e}");
            return ExitCode::from(2);
        }
    };
    let log = Log {
        json: config.json_logs,
    };
    let issued_log = match &config.issued_log {
        Some(path) => match crate::issued::IssuedLog::open(path) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!(
                    "snowmint-server: configuration error in issued_log: {}: {e}",
                    path.display()
                );
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let gens = match open(&config, log) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let state = Arc::new(AppState {
        tokens: app::Tokens::new(&config.tokens),
        rates: config.net.rates,
        idle_timeout: config.net.limits.idle_timeout,
        access_log: config.access_log.then_some(log),
        issued_log,
        ..AppState::new(gens, config.max_count)
    });
    // Claims lost leases again, off the runtime (the SQL stores' clients
    // drive a runtime of their own).
    let healer = crate::heal::Healer::start(state.clone(), log);
    let served = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let served = rt.block_on(serve(
                state.clone(),
                config.listen,
                config.thrift.clone(),
                &config.net,
                config.token_file.clone(),
                log,
            ));
            rt.shutdown_timeout(Duration::from_secs(1));
            served
        }
        Err(e) => Err(format!("cannot start the runtime: {e}")),
    };
    if let Err(e) = &served {
        log.event("error", "serve_failed", &[("message", e.as_str().into())]);
    }
    // No generator is replaced from here on.
    healer.stop();
    let released = release(&state.gens, log);
    log.event("info", "stop", &[]);
    if served.is_ok() && released {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Opens every generator (leases claimed here, before the runtime exists).
fn open(config: &Config, log: Log) -> Result<Vec<Gen>, ExitCode> {
    let mut gens: Vec<Gen> = Vec::new();
    for spec in &config.generators {
        let nodes = Value::Map(
            spec.nodes
                .iter()
                .map(|(n, v)| (n.clone(), (*v).into()))
                .collect(),
        );
        let options = match &spec.lease {
            Some(url) => Value::Map(vec![("lease".into(), url.clone().into())]),
            None => Value::Absent,
        };
        match AnyGenerator::from_values(spec.layout, &nodes, &options) {
            Ok(gen) => {
                if let Some(info) = gen.lease() {
                    log.event(
                        "info",
                        "lease_claimed",
                        &[
                            ("generator", spec.name.clone().into()),
                            ("store", info.store.into()),
                            ("field", info.field.into()),
                            ("slot", info.slot.into()),
                        ],
                    );
                }
                gens.push(Gen::reclaimable(
                    spec.name.clone(),
                    gen,
                    spec.layout,
                    nodes,
                    options,
                ));
            }
            Err(e) => {
                // The lease crate's messages name the store without its password.
                log.event(
                    "error",
                    "generator_failed",
                    &[
                        ("generator", spec.name.clone().into()),
                        ("code", e.code().into()),
                        ("message", e.to_string().into()),
                    ],
                );
                release(&gens, log);
                // A store that cannot be reached may come back: that is not
                // a configuration error.
                let unavailable = e.code() == "lease_unavailable";
                return Err(ExitCode::from(if unavailable { 1 } else { 2 }));
            }
        }
    }
    Ok(gens)
}

/// Releases every lease; false if one could not be released.
fn release(gens: &[Gen], log: Log) -> bool {
    let mut ok = true;
    for g in gens {
        let gen = g.gen();
        if gen.lease().is_none() {
            continue;
        }
        match gen.close() {
            Ok(()) => log.event(
                "info",
                "lease_released",
                &[("generator", g.name.clone().into())],
            ),
            Err(e) => {
                ok = false;
                log.event(
                    "error",
                    "lease_release_failed",
                    &[
                        ("generator", g.name.clone().into()),
                        ("message", e.to_string().into()),
                    ],
                );
            }
        }
    }
    ok
}

/// Serves until SIGTERM/SIGINT; then, after the drain delay, lets in-flight
/// requests finish for at most [`GRACE`].
async fn serve(
    state: Arc<AppState>,
    addr: std::net::SocketAddr,
    thrift: Option<(std::net::SocketAddr, String)>,
    net: &Net,
    token_file: Option<PathBuf>,
    log: Log,
) -> Result<(), String> {
    let listeners = listen::bind(addr, listen::workers())
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let thrift = match thrift {
        Some((a, name)) => {
            let limits = crate::thrift::Limits::with_timeouts(&net.limits);
            Some(crate::thrift::bind(&state, a, &name, limits, log).await?)
        }
        None => None,
    };
    let local = listeners[0].local_addr().map_err(|e| e.to_string())?;
    let mut signals = Signals::new();
    // SIGHUP too, before the start line (its default action ends the process).
    let hangup = signal(SignalKind::hangup());
    let names: Vec<Json> = state.gens.iter().map(|g| g.name.clone().into()).collect();
    log.event(
        "info",
        "start",
        &[
            ("listen", local.to_string().into()),
            ("listeners", listeners.len().into()),
            ("generators", Json::Array(names)),
            ("auth", (!state.tokens.is_empty()).into()),
            ("tls", net.tls.is_some().into()),
            ("client_certs", net.client_certs.into()),
            ("access_log", state.access_log.is_some().into()),
            ("issued_log", state.issued_log.is_some().into()),
        ],
    );
    tokio::spawn(watch_leases(state.clone(), log));
    // The Thrift listener stops when the HTTP one does, after the drain delay.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let Some((service, listener)) = thrift {
        tokio::spawn(crate::thrift::serve(service, listener, stop_rx, log));
    }
    let signal_state = state.clone();
    let drain = net.drain_delay;
    let shutdown = async move {
        let signal = signals.next().await;
        // Not ready from this instant: load balancers stop sending.
        signal_state.shutting_down.store(true, Ordering::SeqCst);
        log.event("info", "shutdown", &[("signal", signal.into())]);
        if !drain.is_zero() {
            // Still serving, so that load balancers see /readyz fail first;
            // a second signal ends the wait.
            log.event("info", "draining", &[("seconds", drain.as_secs().into())]);
            tokio::select! {
                () = tokio::time::sleep(drain) => {}
                s = signals.next() => log.event("info", "drain_cut", &[("signal", s.into())]),
            }
        }
        let _ = stop_tx.send(true);
    };
    let metrics = ConnMetrics {
        open: state.metrics.connections.clone(),
        refused: state.metrics.connections_refused.clone(),
    };
    let router = app::router(state.clone());
    if let Ok(hangup) = hangup {
        let reload = Reload {
            state: state.clone(),
            token_file,
            certs: net.certs.clone(),
            log,
        };
        tokio::spawn(reload.on_each(hangup));
    }
    if !listen::serve(
        listeners,
        router,
        Some(state.clone()),
        net,
        metrics,
        shutdown,
        GRACE,
        log,
    )
    .await
    {
        log.event(
            "error",
            "grace_elapsed",
            &[("seconds", GRACE.as_secs().into())],
        );
    }
    Ok(())
}

/// What SIGHUP reloads: the token file and the TLS certificate and key.
struct Reload {
    state: Arc<AppState>,
    token_file: Option<PathBuf>,
    certs: Option<Arc<crate::tls::Certs>>,
    log: Log,
}

impl Reload {
    /// Reloads on every SIGHUP.
    async fn on_each(self, mut hangup: Signal) {
        while hangup.recv().await.is_some() {
            self.log
                .event("info", "reload", &[("signal", "SIGHUP".into())]);
            self.reload();
        }
    }

    /// Reads each file again; a file that cannot be read or parsed keeps
    /// what was in use, and the log says why (never a token or key).
    fn reload(&self) {
        let log = self.log;
        if let Some(path) = &self.token_file {
            match crate::auth::read_tokens(path) {
                Ok(tokens) => {
                    let n = tokens.len();
                    self.state.tokens.set(&tokens);
                    log.event(
                        "info",
                        "reloaded",
                        &[("what", "token_file".into()), ("tokens", n.into())],
                    );
                }
                Err(e) => log.event(
                    "error",
                    "reload_failed",
                    &[
                        ("what", "token_file".into()),
                        ("message", e.to_string().into()),
                    ],
                ),
            }
        }
        if let Some(certs) = &self.certs {
            match certs.reload() {
                Ok(()) => log.event("info", "reloaded", &[("what", "tls".into())]),
                Err(e) => log.event(
                    "error",
                    "reload_failed",
                    &[("what", "tls".into()), ("message", e.to_string().into())],
                ),
            }
        }
    }
}

/// SIGTERM and SIGINT, caught from the moment this is made. It is made
/// before the start line: a signal sent as soon as that line appears must
/// find the handler, not the default action that ends the process at once.
struct Signals(Option<(Signal, Signal)>);

impl Signals {
    fn new() -> Signals {
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => Signals(Some((term, int))),
            // Without handlers the default actions stay: the process just ends.
            _ => Signals(None),
        }
    }

    /// The next SIGTERM or SIGINT, by name.
    async fn next(&mut self) -> &'static str {
        let Some((term, int)) = &mut self.0 else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        }
    }
}

/// One log line per lease change: a renewal failing, recovering, the slot lost.
async fn watch_leases(state: Arc<AppState>, log: Log) {
    let mut last: Vec<(Option<String>, Option<String>)> = vec![(None, None); state.gens.len()];
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        for (g, seen) in state.gens.iter().zip(last.iter_mut()) {
            let Some(info) = g.gen().lease() else {
                continue;
            };
            let now = (info.last_error.clone(), info.lost.clone());
            if now == *seen {
                continue;
            }
            let name: Json = g.name.clone().into();
            match (&now.0, &now.1) {
                (_, Some(lost)) => log.event(
                    "error",
                    "lease_lost",
                    &[("generator", name), ("message", json!(lost))],
                ),
                (Some(err), None) => log.event(
                    "error",
                    "lease_renewal_failed",
                    &[("generator", name), ("message", json!(err))],
                ),
                (None, None) => log.event("info", "lease_renewed", &[("generator", name)]),
            }
            *seen = now;
        }
    }
}
