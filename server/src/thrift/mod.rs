//! Twitter Snowflake's Thrift service (`server/thrift/Snowflake.thrift`):
//! `get_id`, `get_worker_id`, `get_datacenter_id`, `get_timestamp` over the
//! framed transport and the strict binary protocol, on tokio.
//!
//! IDs come from [`AppState::issue`], the path the HTTP routes use. Each
//! connection answers its calls in order. A frame length above the limit, a
//! malformed message, a peer silent for too long in the middle of a frame
//! or idle for too long between calls closes that connection and no other.
//! Thrift carries no token, so the listener is loopback only unless
//! `--insecure` (checked in [`crate::config`]).

pub mod codec;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::app::{now_ms, AppState, Gen};
use crate::log::Log;
use crate::metrics::AgentLabel;
use codec::{AppErrorKind, Call, Method};

/// The stable code of a refused user agent.
pub const INVALID_USER_AGENT: &str = "invalid_user_agent";

/// The limits of the Thrift listener. The server takes the two timeouts
/// from the HTTP listener's `--idle-timeout` and `--header-timeout`
/// ([`Limits::with_timeouts`]); their defaults are these.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The largest frame (bytes after the 4-byte length).
    pub max_frame: usize,
    /// Open connections at most; more are closed as soon as accepted.
    pub max_connections: usize,
    /// How long a connection may wait between calls.
    pub idle_timeout: Duration,
    /// How long the rest of a frame may take once its first byte came, and
    /// how long writing an answer may take.
    pub io_timeout: Duration,
    /// Distinct user agents counted by name in `/metrics`; others are `other`.
    pub max_agents: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_frame: codec::DEFAULT_MAX_FRAME,
            max_connections: crate::net::DEFAULT_THRIFT_MAX_CONNECTIONS,
            idle_timeout: Duration::from_secs(60),
            io_timeout: Duration::from_secs(10),
            max_agents: 1000,
        }
    }
}

impl Limits {
    /// The defaults, with the HTTP listener's idle timeout between calls and
    /// its header timeout for the rest of a frame and an answer's write, and
    /// `--thrift-max-connections`.
    pub fn with_timeouts(net: &crate::net::Limits) -> Limits {
        Limits {
            idle_timeout: net.idle_timeout,
            io_timeout: net.header_timeout,
            max_connections: net.thrift_max_connections,
            ..Limits::default()
        }
    }
}

/// The Thrift service over one generator.
#[derive(Debug)]
pub struct Service {
    state: Arc<AppState>,
    gen: usize,
    limits: Limits,
    agents: Mutex<HashSet<String>>,
}

impl Service {
    /// The service issuing from `state.gens[gen]`.
    pub fn new(state: Arc<AppState>, gen: usize, limits: Limits) -> Service {
        assert!(gen < state.gens.len());
        Service {
            state,
            gen,
            limits,
            agents: Mutex::new(HashSet::new()),
        }
    }

    fn gen(&self) -> &Gen {
        &self.state.gens[self.gen]
    }

    /// The framed answer to one decoded call.
    pub async fn answer(&self, call: &Call) -> Vec<u8> {
        let (name, seqid) = (call.name.as_str(), call.seqid);
        if !codec::is_call(call.kind) {
            return codec::encode_app_error(
                name,
                seqid,
                AppErrorKind::InvalidMessageType,
                &format!("message type {} is not a call", call.kind),
            );
        }
        let value = match &call.method {
            Method::GetWorkerId => node(self.gen(), "worker"),
            Method::GetDatacenterId => node(self.gen(), "datacenter"),
            Method::GetTimestamp => now_ms() as i64,
            Method::GetId(agent) => {
                let agent = match agent {
                    Some(a) if codec::valid_agent(a) => a,
                    other => {
                        let given = other
                            .as_deref()
                            .map(|a| String::from_utf8_lossy(a).chars().take(64).collect())
                            .unwrap_or_else(|| "(none)".to_string());
                        return codec::encode_app_error(
                            name,
                            seqid,
                            AppErrorKind::Unknown,
                            &format!(
                                "InvalidUserAgentError: the user agent {given:?} does not match [a-zA-Z][a-zA-Z\\-0-9]* or is longer than {} bytes [{INVALID_USER_AGENT}]",
                                codec::MAX_AGENT_LEN
                            ),
                        );
                    }
                };
                match self.state.issue(self.gen(), 1).await {
                    Ok(ids) => {
                        self.count(agent);
                        ids[0] as i64
                    }
                    Err(e) => {
                        // The core's message ends with its code: `... [lease_expired]`.
                        let message = if e.code() == "clock_moved_backwards" {
                            format!("InvalidSystemClock: {}", e.message())
                        } else {
                            e.message().to_string()
                        };
                        return codec::encode_app_error(
                            name,
                            seqid,
                            AppErrorKind::InternalError,
                            &message,
                        );
                    }
                }
            }
            Method::Unknown => {
                let shown: String = name.chars().take(64).collect();
                return codec::encode_app_error(
                    name,
                    seqid,
                    AppErrorKind::UnknownMethod,
                    &format!("unknown method {shown:?}"),
                );
            }
        };
        codec::encode_i64_reply(name, seqid, value)
    }

    /// Counts one ID for `agent` (a valid agent: ASCII).
    fn count(&self, agent: &[u8]) {
        let agent = String::from_utf8_lossy(agent);
        let label = {
            let mut seen = self.agents.lock().unwrap_or_else(|p| p.into_inner());
            if seen.contains(agent.as_ref()) {
                agent.into_owned()
            } else if seen.len() < self.limits.max_agents {
                seen.insert(agent.to_string());
                agent.into_owned()
            } else {
                "other".to_string()
            }
        };
        self.state
            .metrics
            .thrift_ids
            .get_or_create(&AgentLabel { agent: label })
            .inc();
    }
}

/// The node value of the field `name` of `g` (the leased value for a leased
/// field), 0 when the layout has no such field.
fn node(g: &Gen, name: &str) -> i64 {
    let gen = g.gen();
    let config = gen.config();
    let value = config
        .layout()
        .nodes()
        .zip(config.nodes().values())
        .find(|(f, _)| f.name() == name)
        .map_or(0, |(_, v)| *v as i64);
    value
}

/// Binds the Thrift listener for the generator named `name` (the
/// configuration checked that it exists) and logs `thrift_start`.
pub async fn bind(
    state: &Arc<AppState>,
    addr: std::net::SocketAddr,
    name: &str,
    limits: Limits,
    log: Log,
) -> Result<(Arc<Service>, TcpListener), String> {
    let gen = state
        .gens
        .iter()
        .position(|g| g.name == name)
        .ok_or_else(|| format!("no generator is named '{name}'"))?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr} (thrift): {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    log.event(
        "info",
        "thrift_start",
        &[
            ("listen", local.to_string().into()),
            ("generator", name.into()),
        ],
    );
    let service = Service::new(state.clone(), gen, limits);
    Ok((Arc::new(service), listener))
}

/// Accepts connections on `listener` until `stop` turns true.
pub async fn serve(
    service: Arc<Service>,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    log: Log,
) {
    let slots = Arc::new(Semaphore::new(service.limits.max_connections));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of file descriptors and the like: wait a little.
                log.event(
                    "error",
                    "thrift_accept_failed",
                    &[("message", e.to_string().into())],
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            connection(&service, stream, stop).await;
            drop(permit);
        });
    }
}

/// Answers the calls of one connection until it closes, misbehaves or times
/// out, or the server stops (between calls).
async fn connection(service: &Service, mut stream: TcpStream, mut stop: watch::Receiver<bool>) {
    let limits = &service.limits;
    loop {
        let mut header = [0u8; 4];
        let first = tokio::select! {
            r = tokio::time::timeout(limits.idle_timeout, stream.read(&mut header[..1])) => r,
            _ = stop.wait_for(|s| *s) => return,
        };
        match first {
            Ok(Ok(1)) => {}
            _ => return, // closed, failed or idle too long
        }
        let body = tokio::time::timeout(limits.io_timeout, async {
            stream.read_exact(&mut header[1..]).await.ok()?;
            // The length is checked before the buffer exists.
            let len = codec::frame_len(header, limits.max_frame).ok()?;
            let mut body = vec![0u8; len];
            stream.read_exact(&mut body).await.ok()?;
            Some(body)
        })
        .await;
        let Ok(Some(body)) = body else { return };
        let Ok(call) = codec::decode_call(&body) else {
            return;
        };
        let answer = service.answer(&call).await;
        match tokio::time::timeout(limits.io_timeout, stream.write_all(&answer)).await {
            Ok(Ok(())) => {}
            _ => return,
        }
    }
}
