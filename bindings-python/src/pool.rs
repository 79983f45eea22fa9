//! The thread pool of a server's plain `def` handlers and plain-function token verifiers
//! (`mcpaxle._pool.Pool` wraps it; that module says what a user sees of it).
//!
//! The queue and the counts live here so that a call reaches a pool thread without the event
//! loop in its path: a runtime worker queues the [`Job`] and signals a condition variable; a
//! pool thread, waiting detached from the interpreter, takes it, converts the payload, runs
//! the handler and sends the outcome straight back to the runtime. Going through the loop
//! instead (loop → pool thread → loop) costs two hand-offs of the GIL between Python threads,
//! measured at about 40 µs of CPU: more than a whole `async def` call.
//!
//! The threads are Python threads (`threading.Thread`, daemons, named `mcpaxle-handler`)
//! running `mcpaxle._pool._work`, a Python loop around [`Pool::take`], [`PoolJob::begin`] and
//! [`PoolJob::finish`]: user code never runs under a Rust frame on them, so the interpreter's
//! exit can stop them as it stops any daemon thread. A runtime worker never attaches to the
//! interpreter, so a thread the pool needs is started by a short-lived helper thread that
//! attaches, calls `mcpaxle._pool._start_thread` and ends.
//!
//! A call that is given up (its request timed out, was cancelled, or the server shut down)
//! while it runs *abandons* its thread: the thread leaves the pool's count and another starts
//! in its place, while fewer than `max_abandoned` are abandoned. When every thread is busy, a
//! warning (logger `mcpaxle.pool`) names the handlers holding them, once until the queue empties.

use crate::bridge::{self, BridgeInner, Payload};
use crate::context::PyRequestContext;
use mcpaxle::server::{RequestContext, Returned};
use mcpaxle::{Error, ErrorKind, Result};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The state of one pool, shared by its Python wrapper, its threads and the handlers using it.
pub struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is queued or the pool shuts down.
    ready: Condvar,
    /// Signalled when a thread waiting in [`Pool::take`] attached again.
    attached: Condvar,
    max_workers: usize,
    max_abandoned: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Arc<Job>>,
    /// Threads of the pool (abandoned ones not counted).
    workers: usize,
    /// Of those, the ones not running a job (waiting for one, or about to).
    free: usize,
    /// Threads running a job that was given up.
    abandoned: usize,
    running: Vec<Arc<Job>>,
    /// Threads inside [`Pool::take`], detached.
    waiting: usize,
    saturated: bool,
    limit_logged: bool,
    closed: bool,
}

/// One call for a pool thread. Its status is changed only with the pool's state locked.
pub struct Job {
    what: Arc<str>,
    status: Mutex<Status>,
    call: Mutex<Option<Call>>,
    reply: Mutex<Option<Reply>>,
}

struct Status {
    phase: Phase,
    started: Instant,
    abandoned: bool,
}

#[derive(PartialEq)]
enum Phase {
    Queued,
    Running,
    Done,
    Dropped,
}

/// What the thread runs.
enum Call {
    /// A handler called by the core: `invoke(payload, ctx, loop)`.
    Handler { invoke: Arc<Py<PyAny>>, payload: Payload, ctx: RequestContext, bridge: Arc<BridgeInner> },
    /// A function submitted from the event loop ([`Pool::submit`]): `fn()`.
    Function(Py<PyAny>),
}

/// Where its outcome goes.
enum Reply {
    Handler(oneshot::Sender<Result<Returned>>),
    /// `done((ok, value))`: hands the outcome to the loop that awaits it.
    Function(Py<PyAny>),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Job {
    fn new(what: Arc<str>, call: Call, reply: Reply) -> Arc<Job> {
        Arc::new(Job {
            what,
            status: Mutex::new(Status { phase: Phase::Queued, started: Instant::now(), abandoned: false }),
            call: Mutex::new(Some(call)),
            reply: Mutex::new(Some(reply)),
        })
    }
}

impl Shared {
    fn new(max_workers: usize, max_abandoned: usize) -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            attached: Condvar::new(),
            max_workers,
            max_abandoned,
        })
    }

    /// Queues a job: a free thread takes it, or a new thread starts, or it waits (said once).
    fn submit(self: &Arc<Self>, job: Arc<Job>) {
        let mut s = lock(&self.state);
        s.closed = false; // served again after a shutdown
        s.queue.push_back(job.clone());
        if s.free >= s.queue.len() {
            // A free thread not yet claimed by a queued job.
            drop(s);
            self.ready.notify_one();
            return;
        }
        if s.workers < self.max_workers {
            s.workers += 1;
            s.free += 1;
            drop(s);
            self.start_thread();
            return;
        }
        if s.saturated {
            return;
        }
        s.saturated = true;
        let running: Vec<&Arc<Job>> = s.running.iter().filter(|j| !lock(&j.status).abandoned).collect();
        // Threads just started have not taken their job yet: the first queued ones are theirs.
        let claimed = s.workers.saturating_sub(running.len());
        let mut holders: Vec<(&str, usize)> = Vec::new();
        for j in running.iter().copied().chain(s.queue.iter().take(claimed)) {
            if Arc::ptr_eq(j, &job) {
                continue;
            }
            match holders.iter_mut().find(|(what, _)| *what == &*j.what) {
                Some((_, n)) => *n += 1,
                None => holders.push((&j.what, 1)),
            }
        }
        holders.sort_by_key(|(_, n)| std::cmp::Reverse(*n)); // stable: ties keep the order they were met in
        let names: Vec<String> =
            holders.iter().map(|(what, n)| if *n > 1 { format!("{what} x{n}") } else { what.to_string() }).collect();
        let longest = running.iter().map(|j| lock(&j.status).started.elapsed().as_secs_f64()).fold(0.0, f64::max);
        let workers = self.max_workers;
        drop(running);
        drop(s);
        tracing::warn!(
            target: "mcpaxle::pool",
            "mcpaxle: all {workers} handler threads are busy ({}, running for up to {longest:.1} s), so the {} waits for one. \
             A plain def handler holds its thread until it returns: give slow or stuck ones a timeout \
             (Server(handler_timeout_ms=...) or @server.tool(timeout_ms=...)), make them async, or raise max_workers.",
            names.join(", "),
            job.what,
        );
    }

    /// The awaiting side gave `job` up: dropped if queued; its thread abandoned if it runs (a
    /// replacement starts when calls wait), while fewer than `max_abandoned` are.
    fn give_up(self: &Arc<Self>, job: &Arc<Job>) {
        let mut s = lock(&self.state);
        let mut status = lock(&job.status);
        match status.phase {
            Phase::Queued => {
                status.phase = Phase::Dropped;
                s.queue.retain(|j| !Arc::ptr_eq(j, job));
                return;
            }
            Phase::Running if !status.abandoned => {}
            _ => return,
        }
        if s.abandoned >= self.max_abandoned {
            if s.limit_logged {
                return;
            }
            s.limit_logged = true;
            let stuck = s.abandoned;
            drop(status);
            drop(s);
            tracing::error!(
                target: "mcpaxle::pool",
                "mcpaxle: the {} was given up but its thread cannot be stopped, and {stuck} abandoned threads are already \
                 running (max_abandoned_threads): it keeps its place in the pool until it returns (said once until one of \
                 them returns).",
                job.what,
            );
            return;
        }
        status.abandoned = true;
        s.abandoned += 1;
        s.workers -= 1;
        let start = !s.queue.is_empty() && s.free < s.queue.len() && !s.closed;
        if start {
            s.workers += 1;
            s.free += 1;
        }
        drop(status);
        drop(s);
        if start {
            self.start_thread();
        }
    }

    /// The job a thread ran is done: counted free (or out of the pool) before its outcome is
    /// delivered, so that the next call this one lets the awaiting side make finds the thread
    /// available. Whether the thread leaves (it was abandoned and the pool is full again).
    fn done(&self, job: &Arc<Job>) -> bool {
        let mut s = lock(&self.state);
        let mut status = lock(&job.status);
        status.phase = Phase::Done;
        s.running.retain(|j| !Arc::ptr_eq(j, job));
        if s.queue.is_empty() {
            s.saturated = false;
        }
        let mut leave = false;
        if status.abandoned {
            s.abandoned -= 1;
            s.limit_logged = false;
            leave = s.closed || s.workers >= self.max_workers;
            if !leave {
                s.workers += 1;
            }
        }
        if !leave {
            s.free += 1;
        }
        leave
    }

    /// Starts one pool thread (already counted) from a helper thread that attaches for it.
    fn start_thread(self: &Arc<Self>) {
        let shared = self.clone();
        // Named as the pool's threads: a thread started from it inherits its OS-level name.
        let helper = std::thread::Builder::new().name("mcpaxle-handler".into()).spawn(move || {
            let started = Python::try_attach(|py| {
                let pool = Py::new(py, Pool { shared: shared.clone() })?;
                py.import("mcpaxle._pool")?
                    .getattr("_start_thread")?
                    .call1((pool,))
                    .map(drop)
                    .inspect_err(|e| e.print(py))
            });
            if !matches!(started, Some(Ok(()))) {
                shared.thread_failed();
            }
        });
        if helper.is_err() {
            self.thread_failed();
        }
    }

    /// The calling thread leaves the shut down pool.
    fn leave(&self, mut s: MutexGuard<'_, State>) -> Option<PoolJob> {
        s.workers -= 1;
        s.free -= 1;
        None
    }

    fn thread_failed(&self) {
        let mut s = lock(&self.state);
        s.workers -= 1;
        s.free -= 1;
        drop(s);
        tracing::error!(target: "mcpaxle::pool", "mcpaxle: a handler thread could not be started; calls wait for the others");
    }
}

/// Runs a handler on a thread of `pool` and waits for its outcome; dropping the future gives
/// the call up.
pub async fn call(
    pool: &Arc<Shared>,
    what: Arc<str>,
    invoke: Arc<Py<PyAny>>,
    bridge: Arc<BridgeInner>,
    payload: Payload,
    ctx: RequestContext,
) -> Result<Returned> {
    let (tx, rx) = oneshot::channel();
    let job = Job::new(what, Call::Handler { invoke, payload, ctx, bridge }, Reply::Handler(tx));
    pool.submit(job.clone());
    struct GiveUp<'a>(&'a Arc<Shared>, Option<Arc<Job>>);
    impl Drop for GiveUp<'_> {
        fn drop(&mut self) {
            if let Some(job) = self.1.take() {
                self.0.give_up(&job);
            }
        }
    }
    let mut guard = GiveUp(pool, Some(job));
    let outcome = rx.await;
    guard.1 = None;
    outcome.unwrap_or_else(|_| {
        Err(Error::new(ErrorKind::Cancelled, "Cancelled: the server stopped before a handler thread took this call"))
    })
}

/// The native half of `mcpaxle._pool.Pool`.
#[pyclass(frozen, name = "Pool", module = "mcpaxle._native")]
pub struct Pool {
    pub shared: Arc<Shared>,
}

#[pymethods]
impl Pool {
    #[new]
    fn new(max_workers: usize, max_abandoned: usize) -> Self {
        Pool { shared: Shared::new(max_workers, max_abandoned) }
    }

    /// Queues `fn()` (called from the event loop); `done((ok, value))` hands its outcome back.
    fn submit(&self, what: &str, function: Py<PyAny>, done: Py<PyAny>) -> PyResult<PoolJob> {
        crate::runtime::runtime()?; // the core's log events (this pool's warnings) reach logging
        let job = Job::new(what.into(), Call::Function(function), Reply::Function(done));
        self.shared.submit(job.clone());
        Ok(PoolJob { shared: self.shared.clone(), job })
    }

    /// Gives a submitted job up (its awaiting task was cancelled).
    fn give_up(&self, job: &PoolJob) {
        self.shared.give_up(&job.job);
    }

    /// The next job for the calling pool thread, waiting (detached) for one; None when the
    /// pool shut down: the thread ends.
    fn take(&self, py: Python<'_>) -> Option<PoolJob> {
        let shared = &self.shared;
        let mut s = lock(&shared.state);
        if s.closed {
            return shared.leave(s);
        }
        s.waiting += 1;
        drop(s);
        let job = py.detach(|| {
            let mut s = lock(&shared.state);
            while s.queue.is_empty() && !s.closed {
                s = shared.ready.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            let job = s.queue.pop_front()?;
            s.free -= 1;
            {
                let mut status = lock(&job.status);
                status.phase = Phase::Running;
                status.started = Instant::now();
            }
            s.running.push(job.clone());
            Some(job)
        });
        // Attached again: counted out of the waiting only now (see `shutdown`).
        let mut s = lock(&shared.state);
        s.waiting -= 1;
        shared.attached.notify_all();
        match job {
            Some(job) => Some(PoolJob { shared: shared.clone(), job }),
            None => shared.leave(s),
        }
    }

    /// Stops the idle threads (the next call starts new ones) and drops the queued calls;
    /// threads running calls finish them, then end.
    ///
    /// Waits (detached, up to a second) for the idle threads to attach again: a thread woken
    /// while the interpreter exits would be stopped by it under this module's frames, which
    /// crashes the process; once attached, a thread only returns to Python and ends.
    fn shutdown(&self, py: Python<'_>) {
        let shared = &self.shared;
        let mut s = lock(&shared.state);
        s.closed = true;
        for job in s.queue.drain(..) {
            lock(&job.status).phase = Phase::Dropped;
            lock(&job.reply).take(); // a handler's call ends (the server stopped)
        }
        drop(s);
        shared.ready.notify_all();
        py.detach(|| {
            let s = lock(&shared.state);
            let _ = shared.attached.wait_timeout_while(s, Duration::from_secs(1), |s| s.waiting > 0);
        });
    }

    /// How many threads run calls that were given up.
    #[getter]
    fn abandoned(&self) -> usize {
        lock(&self.shared.state).abandoned
    }

    /// How many threads the pool has (abandoned ones not counted).
    #[getter]
    fn workers(&self) -> usize {
        lock(&self.shared.state).workers
    }
}

/// One job, as a pool thread (or the task awaiting it) sees it.
#[pyclass(frozen, name = "PoolJob", module = "mcpaxle._native")]
pub struct PoolJob {
    shared: Arc<Shared>,
    job: Arc<Job>,
}

#[pymethods]
impl PoolJob {
    /// What to call and with what: `(invoke, (payload, ctx, loop))` for a handler, `(fn, ())`
    /// for a submitted function.
    fn begin<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let call = lock(&self.job.call).take();
        match call {
            Some(Call::Handler { invoke, payload, ctx, bridge }) => {
                let event_loop = bridge.event_loop(py);
                let ctx = Py::new(py, PyRequestContext::new(ctx, bridge))?.into_any();
                let args = PyTuple::new(py, [payload.into_py(py)?, ctx.into_bound(py), event_loop])?;
                Ok((invoke.clone_ref(py), args))
            }
            Some(Call::Function(function)) => Ok((function, PyTuple::empty(py))),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err("this pool job was already begun")),
        }
    }

    /// The call returned `value` (`ok`) or raised it: counts the thread free, then hands the
    /// outcome over. Whether the thread leaves the pool.
    fn finish(&self, py: Python<'_>, ok: bool, value: Bound<'_, PyAny>) -> bool {
        let reply = lock(&self.job.reply).take();
        match reply {
            Some(Reply::Handler(tx)) => {
                let outcome = bridge::outcome(py, if ok { Ok(value) } else { Err(PyErr::from_value(value)) });
                let leave = self.shared.done(&self.job);
                let _ = tx.send(outcome);
                leave
            }
            Some(Reply::Function(done)) => {
                let leave = self.shared.done(&self.job);
                // RuntimeError when the loop closed: nobody waits for it any more.
                let _ = done.call1(py, ((ok, value),));
                leave
            }
            None => self.shared.done(&self.job),
        }
    }
}

/// A handler the server runs on a pool's threads: `invoke(payload, ctx, loop)` returning the
/// handler's value (made by `mcpaxle._pool.Pool.handler`).
#[pyclass(frozen, name = "PoolHandler", module = "mcpaxle._native")]
pub struct PoolHandler {
    pub shared: Arc<Shared>,
    pub what: Arc<str>,
    pub invoke: Arc<Py<PyAny>>,
}

#[pymethods]
impl PoolHandler {
    #[new]
    fn new(pool: &Pool, what: &str, invoke: Py<PyAny>) -> Self {
        PoolHandler { shared: pool.shared.clone(), what: what.into(), invoke: Arc::new(invoke) }
    }
}
