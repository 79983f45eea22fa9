//! The bridge between the tokio runtime and one asyncio event loop.
//!
//! Runtime workers never attach to the interpreter (they never take the GIL). They push
//! [`Job`]s into the bridge's queue and, when no wake-up is pending yet, write one byte to a
//! pipe; the loop watches the pipe (`loop.add_reader`) and runs [`Bridge::drain`], which
//! takes every queued job at once, so a burst of calls costs one wake-up. All conversions
//! between JSON and Python objects happen there, on the loop's thread.
//!
//! Two directions cross it:
//! * a core handler calls Python ([`call`]): the job creates an asyncio task for the
//!   handler's coroutine; the task's done callback converts its result and completes the
//!   Rust future. Dropping that Rust future (the client cancelled or went away) queues a
//!   cancel job: the task is cancelled and the handler sees `asyncio.CancelledError`. Closing
//!   the bridge cancels every handler task still running, since a cancel job could no
//!   longer reach it.
//! * Python awaits Rust ([`awaitable`]): the future is spawned on the runtime and its outcome
//!   resolves an asyncio future of the loop; cancelling that asyncio future aborts the Rust
//!   task.

use crate::context::PyRequestContext;
use crate::middleware::CallNext;
use crate::runtime::{self, check_fork};
use crate::{convert, errors};
use mcpaxle::server::{RequestContext, Returned};
use mcpaxle::{Error, ErrorKind, Result};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::oneshot;

/// Builds the Python value of a completed Rust future, on the loop's thread.
pub type Make = Box<dyn for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send>;

/// What a Python handler is called with.
pub enum Payload {
    /// `tools/call`: the arguments object, shared with the server (read in place, not copied).
    Tool(Arc<Value>),
    /// `resources/read`: the URI and the template's variables.
    Resource { uri: String, variables: Map<String, Value> },
    /// `prompts/get`: the arguments.
    Prompt(Map<String, Value>),
    /// `completion/complete`: the argument's name, its partial value, the resolved arguments.
    Completion { argument: String, value: String, context: Map<String, Value> },
    /// A middleware: the request ([`RequestInfo::to_json`](mcpaxle::server::RequestInfo::to_json))
    /// and its `call_next`.
    Middleware { request: Value, next: CallNext },
}

impl Payload {
    pub fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        Ok(match self {
            Payload::Tool(v) => convert::to_py(py, &v)?,
            Payload::Prompt(m) => convert::map_to_py(py, &m)?.into_any(),
            Payload::Resource { uri, variables } => {
                PyTuple::new(py, [PyString::new(py, &uri).into_any(), convert::map_to_py(py, &variables)?.into_any()])?
                    .into_any()
            }
            Payload::Completion { argument, value, context } => PyTuple::new(
                py,
                [
                    PyString::new(py, &argument).into_any(),
                    PyString::new(py, &value).into_any(),
                    convert::map_to_py(py, &context)?.into_any(),
                ],
            )?
            .into_any(),
            Payload::Middleware { request, next } => {
                PyTuple::new(py, [convert::to_py(py, &request)?, Py::new(py, next)?.into_bound(py).into_any()])?
                    .into_any()
            }
        })
    }
}

enum Job {
    Call { handler: Arc<Py<PyAny>>, payload: Payload, ctx: Option<RequestContext>, slot: Arc<Slot> },
    Cancel(Arc<Slot>),
    Resolve { future: Py<PyAny>, outcome: Result<Make> },
}

/// One handler call in flight: how its outcome reaches Rust, and its task once created.
struct Slot {
    state: Mutex<SlotState>,
}

struct SlotState {
    tx: Option<oneshot::Sender<Result<Returned>>>,
    task: Option<Py<PyAny>>,
    cancelled: bool,
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The shared half of a [`Bridge`].
pub struct BridgeInner {
    pid: u32,
    queue: Mutex<Vec<Job>>,
    wake_pending: AtomicBool,
    read_fd: RawFd,
    write_fd: RawFd,
    closed: AtomicBool,
    event_loop: Py<PyAny>,
    /// The handler calls whose task runs, by slot address: cancelled when the bridge closes.
    running: Mutex<HashMap<usize, Arc<Slot>>>,
}

impl BridgeInner {
    /// Queues a job and wakes the loop; false (and the job is dropped) once the bridge closed.
    fn push(&self, job: Job) -> bool {
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(job);
        if !self.wake_pending.swap(true, Ordering::AcqRel) {
            let byte = 1u8;
            // A full pipe already holds a wake-up; any other failure means the loop is gone.
            unsafe { libc::write(self.write_fd, (&byte as *const u8).cast(), 1) };
        }
        true
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Arc<Slot>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The event loop this bridge serves.
    pub fn event_loop<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.event_loop.bind(py).clone()
    }

    /// Whether the bridge was closed (its loop ended).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn run(&self, py: Python<'_>, this: &Arc<BridgeInner>, job: Job) {
        match job {
            Job::Call { handler, payload, ctx, slot } => {
                if slot.lock().cancelled {
                    return;
                }
                if let Err(e) = self.start(py, this, &handler, payload, ctx, &slot) {
                    let err = errors::from_py_err(py, &e);
                    if let Some(tx) = slot.lock().tx.take() {
                        let _ = tx.send(Err(err));
                    }
                }
            }
            Job::Cancel(slot) => {
                let task = slot.lock().task.take();
                if let Some(task) = task {
                    if let Err(e) = task.bind(py).call_method0(intern!(py, "cancel")) {
                        e.write_unraisable(py, None);
                    }
                }
            }
            Job::Resolve { future, outcome } => {
                let future = future.bind(py);
                if future.call_method0(intern!(py, "done")).and_then(|d| d.is_truthy()).unwrap_or(true) {
                    return;
                }
                let set = match outcome.map_err(|e| errors::to_py_err(py, &e)).and_then(|make| make(py)) {
                    Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
                    Err(err) => future.call_method1(intern!(py, "set_exception"), (err.value(py),)),
                };
                if let Err(e) = set {
                    e.write_unraisable(py, None);
                }
            }
        }
    }

    fn start(
        &self,
        py: Python<'_>,
        this: &Arc<BridgeInner>,
        handler: &Py<PyAny>,
        payload: Payload,
        ctx: Option<RequestContext>,
        slot: &Arc<Slot>,
    ) -> PyResult<()> {
        let coro = match ctx {
            Some(ctx) => {
                let ctx = Py::new(py, PyRequestContext::new(ctx, this.clone()))?;
                handler.bind(py).call1((payload.into_py(py)?, ctx))?
            }
            None => handler.bind(py).call1((payload.into_py(py)?,))?,
        };
        let task = self.event_loop.bind(py).call_method1(intern!(py, "create_task"), (coro,))?;
        task.call_method1(
            intern!(py, "add_done_callback"),
            (Completer { slot: slot.clone(), bridge: Arc::downgrade(this) },),
        )?;
        let mut state = slot.lock();
        if state.cancelled {
            drop(state);
            task.call_method0(intern!(py, "cancel"))?;
        } else {
            state.task = Some(task.unbind());
            drop(state);
            // The task cannot finish before this returns to the loop: its Completer, which
            // removes it, runs after this insert.
            self.running().insert(slot_key(slot), slot.clone());
        }
        Ok(())
    }
}

impl Drop for BridgeInner {
    fn drop(&mut self) {
        unsafe {
            libc::close(self.read_fd);
            libc::close(self.write_fd);
        }
    }
}

/// The bridge of one asyncio event loop. Made by `mcpaxle._bridge.bridge_for(loop)`, which
/// registers [`Bridge::drain`] as the reader of [`Bridge::fileno`].
#[pyclass(frozen, name = "Bridge", module = "mcpaxle._native")]
pub struct Bridge {
    pub inner: Arc<BridgeInner>,
}

#[pymethods]
impl Bridge {
    /// A bridge for `event_loop` (not yet registered with it).
    #[new]
    fn new(event_loop: Py<PyAny>) -> PyResult<Self> {
        check_fork()?;
        let mut fds = [0 as RawFd; 2];
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        for fd in fds {
            unsafe {
                libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK);
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        Ok(Bridge {
            inner: Arc::new(BridgeInner {
                pid: std::process::id(),
                queue: Mutex::new(Vec::new()),
                wake_pending: AtomicBool::new(false),
                read_fd: fds[0],
                write_fd: fds[1],
                closed: AtomicBool::new(false),
                event_loop,
                running: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The file descriptor the loop watches.
    fn fileno(&self) -> RawFd {
        self.inner.read_fd
    }

    /// Whether the bridge was closed.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Runs every queued job; called by the loop when the pipe is readable.
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        check_fork()?;
        if self.inner.pid != std::process::id() {
            return Ok(());
        }
        let mut buf = [0u8; 64];
        while unsafe { libc::read(self.inner.read_fd, buf.as_mut_ptr().cast(), buf.len()) } == buf.len() as isize {}
        self.inner.wake_pending.store(false, Ordering::Release);
        let jobs = std::mem::take(&mut *self.inner.queue.lock().unwrap_or_else(|e| e.into_inner()));
        for job in jobs {
            self.inner.run(py, &self.inner, job);
        }
        Ok(())
    }

    /// Closes the bridge: later jobs are refused (their calls fail); queued ones are dropped;
    /// handler tasks still running are cancelled (a cancel job could no longer reach them).
    fn close(&self, py: Python<'_>) {
        self.inner.closed.store(true, Ordering::Release);
        let jobs = std::mem::take(&mut *self.inner.queue.lock().unwrap_or_else(|e| e.into_inner()));
        drop(jobs);
        let running = std::mem::take(&mut *self.inner.running());
        let loop_closed = self
            .inner
            .event_loop
            .bind(py)
            .call_method0(intern!(py, "is_closed"))
            .and_then(|c| c.is_truthy())
            .unwrap_or(true);
        if loop_closed {
            return;
        }
        for slot in running.into_values() {
            let task = slot.lock().task.take();
            if let Some(task) = task {
                if let Err(e) = task.bind(py).call_method0(intern!(py, "cancel")) {
                    e.write_unraisable(py, None);
                }
            }
        }
    }
}

/// The done callback of a handler's task: converts its outcome and completes the call.
#[pyclass(frozen, module = "mcpaxle._native")]
struct Completer {
    slot: Arc<Slot>,
    bridge: Weak<BridgeInner>,
}

/// A slot's key in [`BridgeInner::running`].
fn slot_key(slot: &Arc<Slot>) -> usize {
    Arc::as_ptr(slot) as usize
}

#[pymethods]
impl Completer {
    fn __call__(&self, py: Python<'_>, task: &Bound<'_, PyAny>) {
        let outcome = outcome(py, task.call_method0(intern!(py, "result")));
        let (tx, task) = {
            let mut state = self.slot.lock();
            (state.tx.take(), state.task.take())
        };
        drop(task);
        if let Some(bridge) = self.bridge.upgrade() {
            bridge.running().remove(&slot_key(&self.slot));
        }
        if let Some(tx) = tx {
            let _ = tx.send(outcome);
        }
    }
}

/// The outcome of a handler run by the Python layer's wrapper: its value (JSON types, bytes
/// kept) or what it raised.
pub fn outcome(py: Python<'_>, returned: PyResult<Bound<'_, PyAny>>) -> Result<Returned> {
    match returned {
        Ok(v) => convert::returned_from_py(&v).map_err(|e| {
            Error::internal(format!(
                "Internal error: the handler returned a value that cannot be sent as JSON: {}",
                e.value(py)
            ))
        }),
        // The wrapper logged an unexpected exception with its traceback (`_handlers._failure`):
        // the core does not log it again.
        Err(e) => Err(errors::from_py_err(py, &e).reported()),
    }
}

/// Queues a cancel job when a call's Rust future is dropped before its outcome arrived.
struct CancelOnDrop {
    bridge: Arc<BridgeInner>,
    slot: Option<Arc<Slot>>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.lock().cancelled = true;
            self.bridge.push(Job::Cancel(slot));
        }
    }
}

/// Calls a Python handler (`handler(payload, ctx)` returning a coroutine) on the bridge's
/// loop and waits for its value (bytes kept apart) without ever attaching to the interpreter.
pub async fn call(
    bridge: Arc<BridgeInner>,
    handler: Arc<Py<PyAny>>,
    payload: Payload,
    ctx: RequestContext,
) -> Result<Returned> {
    call_inner(bridge, handler, payload, Some(ctx)).await
}

/// Calls a Python callable that takes no context (`handler(value)` returning a coroutine: a
/// client's input handler, progress callback or OAuth authorize step, a server's token
/// verifier) on the bridge's loop, the same way as [`call`].
pub async fn call_client(bridge: Arc<BridgeInner>, handler: Arc<Py<PyAny>>, value: Value) -> Result<Value> {
    match call_inner(bridge, handler, Payload::Tool(Arc::new(value)), None).await? {
        Returned::Json(v) => Ok(v),
        _ => Err(Error::internal(
            "Internal error: the callback returned a value that cannot be sent as JSON: bytes are not JSON",
        )),
    }
}

/// Calls a Python middleware (`handler((request, call_next))` returning a coroutine) on the
/// bridge's loop, the same way as [`call`]: its value is the result it returns.
pub async fn call_middleware(
    bridge: Arc<BridgeInner>,
    handler: Arc<Py<PyAny>>,
    request: Value,
    next: CallNext,
) -> Result<Value> {
    match call_inner(bridge, handler, Payload::Middleware { request, next }, None).await? {
        Returned::Json(v) => Ok(v),
        _ => Err(Error::internal(
            "Internal error: a middleware must return the result dict that call_next gave it (or a changed copy), not bytes",
        )),
    }
}

async fn call_inner(
    bridge: Arc<BridgeInner>,
    handler: Arc<Py<PyAny>>,
    payload: Payload,
    ctx: Option<RequestContext>,
) -> Result<Returned> {
    let (tx, rx) = oneshot::channel();
    let slot = Arc::new(Slot { state: Mutex::new(SlotState { tx: Some(tx), task: None, cancelled: false }) });
    if !bridge.push(Job::Call { handler, payload, ctx, slot: slot.clone() }) {
        return Err(loop_gone());
    }
    let mut guard = CancelOnDrop { bridge, slot: Some(slot) };
    let outcome = rx.await;
    guard.slot = None;
    outcome.unwrap_or_else(|_| Err(loop_gone()))
}

fn loop_gone() -> Error {
    Error::new(ErrorKind::Cancelled, "Cancelled: the asyncio event loop serving this server or client stopped")
}

/// Aborts the Rust task behind an awaitable when the awaitable is cancelled.
#[pyclass(frozen, module = "mcpaxle._native")]
struct AbortOnCancel {
    handle: tokio::task::AbortHandle,
}

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, py: Python<'_>, future: &Bound<'_, PyAny>) {
        if future.call_method0(intern!(py, "cancelled")).and_then(|c| c.is_truthy()).unwrap_or(false) {
            self.handle.abort();
        }
    }
}

/// Makes a Python awaitable (an asyncio future of the bridge's loop) from a Rust future:
/// the one place every awaitable of this module is made. `make` builds the Python result on
/// the loop's thread. Call it on the loop's thread.
pub fn awaitable<'py, F, T>(
    py: Python<'py>,
    bridge: &Arc<BridgeInner>,
    fut: F,
    make: fn(T) -> Make,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T>> + Send + 'static,
    T: Send + 'static,
{
    runtime::runtime()?;
    let future = bridge.event_loop.bind(py).call_method0(intern!(py, "create_future"))?;
    let target = future.clone().unbind();
    let b = bridge.clone();
    let handle = runtime::spawn(async move {
        let outcome = fut.await.map(make);
        // Refused once the loop closed: nobody can be waiting any more.
        let _ = b.push(Job::Resolve { future: target, outcome });
    })?;
    future.call_method1(intern!(py, "add_done_callback"), (AbortOnCancel { handle: handle.abort_handle() },))?;
    Ok(future)
}

/// A [`Make`] for a JSON value.
pub fn make_value(v: Value) -> Make {
    Box::new(move |py| convert::to_py(py, &v))
}

/// A [`Make`] for `None`.
pub fn make_none(_: ()) -> Make {
    Box::new(|py| Ok(py.None().into_bound(py)))
}
