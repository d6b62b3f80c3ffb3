//! The one timeout mechanism: a long-lived worker thread per lease runs every
//! store call of that lease (claim, renewals, release), and the caller waits
//! for the answer with a deadline.
//!
//! A call that answers after its deadline is handled here, in one place: the
//! worker hands the late value to the call's `late` handler (a late claim is
//! released keeping its `hwm`; a late renewal is dropped, see
//! [`Worker::call`]).
//!
//! A worker stuck in a hung call (a half-open TCP connection, a server that
//! accepted the request and never answers) must not make the next renewal
//! wait behind it: when a call misses its deadline its worker is *abandoned*
//! (it finishes, or hangs, unobserved, and exits after its call returns) and
//! the next call starts a fresh one. At most [`MAX_HUNG`] abandoned workers
//! may still be inside a call; past that, calls fail at once rather than
//! pile up threads on a store that does not answer.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::store::StoreError;

/// How many abandoned workers may still be inside a hung call before new
/// calls fail at once (each holds a thread and usually a connection).
pub(crate) const MAX_HUNG: usize = 4;

type Job = Box<dyn FnOnce() + Send>;

/// Runs the store calls of one lease on a long-lived thread.
pub(crate) struct Worker {
    /// The live worker's queue; `None` before the first call and after the
    /// live worker was abandoned.
    line: Mutex<Option<mpsc::Sender<Job>>>,
    /// Worker threads still running (the live one and abandoned ones inside
    /// a hung call).
    threads: Arc<AtomicUsize>,
    /// Workers abandoned so far (a call missed its deadline).
    abandoned: AtomicU64,
}

impl Worker {
    /// A worker; its thread starts with the first call.
    pub(crate) fn new() -> Worker {
        Worker {
            line: Mutex::new(None),
            threads: Arc::new(AtomicUsize::new(0)),
            abandoned: AtomicU64::new(0),
        }
    }

    /// Workers abandoned so far because a call missed its deadline.
    pub(crate) fn abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// Runs `f` on the worker and waits at most `timeout_ms` for its answer.
    /// Past the deadline the call fails as `Unreachable` and, if it later
    /// succeeds, `late` receives its value on the worker thread.
    ///
    /// Calls of one lease never overlap (the claim precedes the renewal
    /// thread, which `close` joins before the release), so a worker runs one
    /// call at a time and an abandoned one has nothing queued behind it.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        timeout_ms: u64,
        f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
        late: impl FnOnce(T) + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            if let Err(mpsc::SendError(Ok(value))) = tx.send(f()) {
                late(value);
            }
        });
        let mut line = self.line.lock().unwrap_or_else(|e| e.into_inner());
        let job = match line.as_ref() {
            Some(q) => q.send(job).err().map(|mpsc::SendError(job)| job),
            None => Some(job),
        };
        if let Some(job) = job {
            // No live worker (first call, or the last one was abandoned or
            // died): start one.
            *line = Some(self.spawn(job)?);
        }
        drop(line);
        match rx.recv_timeout(Duration::from_millis(timeout_ms)) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Abandon the stuck worker: dropping its queue makes it exit
                // once its call returns; the next call gets a fresh one.
                *self.line.lock().unwrap_or_else(|e| e.into_inner()) = None;
                self.abandoned.fetch_add(1, Ordering::Relaxed);
                Err(StoreError::Unreachable(format!(
                    "no answer within {timeout_ms} ms"
                )))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(StoreError::Unreachable("the store call panicked".into()))
            }
        }
    }

    /// Starts a worker thread running `first`, then whatever the returned
    /// queue brings, until the queue is dropped.
    fn spawn(&self, first: Job) -> Result<mpsc::Sender<Job>, StoreError> {
        let live = self.threads.load(Ordering::Acquire);
        if live >= MAX_HUNG {
            return Err(StoreError::Unreachable(format!(
                "{} earlier store calls are still without an answer",
                live
            )));
        }
        let (tx, rx) = mpsc::channel::<Job>();
        let threads = Arc::clone(&self.threads);
        threads.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new()
            .name("snowmint-lease".into())
            .spawn(move || {
                struct Exit(Arc<AtomicUsize>);
                impl Drop for Exit {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                let _exit = Exit(threads);
                first();
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        match spawned {
            Ok(_) => Ok(tx),
            Err(e) => {
                self.threads.fetch_sub(1, Ordering::AcqRel);
                Err(StoreError::Unreachable(format!(
                    "cannot start a thread: {e}"
                )))
            }
        }
    }
}

/// One timed call on a worker of its own (the operations commands: one call
/// each), with the same deadline rule.
pub(crate) fn timed<T: Send + 'static>(
    timeout_ms: u64,
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    Worker::new().call(timeout_ms, f, |_| {})
}
