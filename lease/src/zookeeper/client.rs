//! The ZooKeeper session under the store: `zookeeper-client` (async) on a
//! runtime of this store's own, every call under `timeout_ms`, and a new
//! session after a failure (an expired session, a connection that stopped
//! answering, or a server that went away).

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use zookeeper_client as zk;

use snowmint::LeaseProblem;

use crate::error::LeaseError;
use crate::store::StoreError;

/// How much longer than a call the client's own connection timeout is.
const CONNECT_MARGIN: Duration = Duration::from_millis(250);

/// One ZooKeeper ensemble: its connection string, and the session (made on
/// the first call).
pub(super) struct Conn {
    /// `host:port,host:port` (no chroot: the store prefixes its paths).
    hosts: String,
    /// How messages name the store (`zookeeper://host:port/chroot`).
    pub(super) name: String,
    timeout: Duration,
    session_timeout: Duration,
    /// `None` only while dropping.
    rt: Option<tokio::runtime::Runtime>,
    client: Mutex<Option<zk::Client>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Closes the session's task without waiting: the store may be dropped
        // on an async runtime's thread (a server), where a blocking shutdown
        // would panic.
        self.client
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Conn {
    pub(super) fn new(hosts: &str, name: String, timeout_ms: u64) -> Result<Conn, LeaseError> {
        // One worker thread: the session's task (pings, replies) runs between
        // the store's calls too, so a session idle between renewals stays alive.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("snowmint-zookeeper")
            .enable_time()
            .build()
            .map_err(|e| {
                LeaseError::unavailable(
                    LeaseProblem::Unreachable,
                    format!("{name}: no runtime: {e}"),
                )
            })?;
        Ok(Conn {
            hosts: hosts.to_string(),
            name,
            timeout: Duration::from_millis(timeout_ms.max(1)),
            // The session only carries requests: no lease depends on it (the
            // records are persistent znodes), so its timeout only decides how
            // soon a dead connection is noticed by the client itself.
            session_timeout: Duration::from_millis(timeout_ms.clamp(4000, 30_000)),
            rt: Some(rt),
            client: Mutex::new(None),
        })
    }

    /// Runs `op` with the session (connecting first if there is none), all of
    /// it within `timeout_ms`. A failure that may have broken the session
    /// drops it: the next call makes a new one (on any listed server).
    pub(super) fn run<T, F, Fut>(&self, op: F) -> Result<T, Failure>
    where
        F: FnOnce(zk::Client) -> Fut,
        Fut: Future<Output = Result<T, zk::Error>>,
    {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let timeout = self.timeout;
        let existing = guard.clone();
        let (hosts, session_timeout) = (self.hosts.clone(), self.session_timeout);
        let rt = self.rt.as_ref().expect("the runtime lives until drop");
        let result = rt.block_on(async move {
            tokio::time::timeout(timeout, async move {
                let client = match existing {
                    Some(c) => c,
                    // The client's own connection timeout a little past
                    // the call's, so that a server that accepts and never
                    // answers ends as the call's timeout ("no answer"), not
                    // as the client's "no hosts" (read as refused) when
                    // both fire at once on a loaded machine.
                    None => zk::Client::connector()
                        .with_session_timeout(session_timeout)
                        .with_connection_timeout(timeout + CONNECT_MARGIN)
                        .with_fail_eagerly()
                        .connect(&hosts)
                        .await
                        .map_err(|e| (None, Failure::Connect(e)))?,
                };
                match op(client.clone()).await {
                    Ok(v) => Ok((client, v)),
                    Err(e) => Err((Some(client), Failure::Zk(e))),
                }
            })
            .await
        });
        match result {
            Ok(Ok((client, v))) => {
                *guard = Some(client);
                Ok(v)
            }
            Ok(Err((client, failure))) => {
                // Answers about the data keep the session; the others end it.
                if failure.keeps_session() {
                    *guard = client;
                } else {
                    *guard = None;
                }
                Err(failure)
            }
            Err(_) => {
                *guard = None;
                Err(Failure::Timeout)
            }
        }
    }

    /// The error the store reports for `f`.
    pub(super) fn unreachable(&self, f: Failure) -> StoreError {
        // The client's own read timeout (its connection timeout, just past
        // `timeout_ms`) is a call without an answer too.
        let silent = |e: &zk::Error| e.to_string().starts_with("no response from connection");
        StoreError::Unreachable(match f {
            Failure::Connect(e) | Failure::Zk(e) if silent(&e) => format!(
                "{}: no answer within {} ms",
                self.name,
                self.timeout.as_millis()
            ),
            Failure::Timeout => format!(
                "{}: no answer within {} ms",
                self.name,
                self.timeout.as_millis()
            ),
            Failure::Connect(zk::Error::NoHosts) => format!(
                "{}: no server accepted a connection (refused or unreachable)",
                self.name
            ),
            Failure::Connect(e) => format!("{}: connecting failed: {e}", self.name),
            Failure::Zk(e) => format!("{}: {e}", self.name),
        })
    }
}

/// Why a call failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// No session could be made.
    Connect(zk::Error),
    /// The server answered with an error.
    Zk(zk::Error),
    /// Nothing within `timeout_ms`.
    Timeout,
}

impl Failure {
    /// The error code of a server's answer about the data (a version that
    /// moved, a node missing or present), which the store handles.
    pub(super) fn zk(&self) -> Option<&zk::Error> {
        match self {
            Failure::Zk(e) => Some(e),
            _ => None,
        }
    }

    fn keeps_session(&self) -> bool {
        matches!(
            self,
            Failure::Zk(
                zk::Error::NoNode
                    | zk::Error::NodeExists
                    | zk::Error::BadVersion
                    | zk::Error::NotEmpty
                    | zk::Error::NoAuth
            )
        )
    }
}
