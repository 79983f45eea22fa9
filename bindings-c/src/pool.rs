//! The threads that every C callback that may block runs on: server handlers, middleware,
//! visibility predicates, token verifiers, and a client's input, authorization, token store,
//! notification and completion callbacks.
//!
//! tokio's blocking pool wakes an idle thread for every job, and its idle threads wait on one
//! condition variable, which wakes the one that has waited longest: eight calls in flight
//! rotate over a score of threads, each call costing two or three context switches, with cold
//! caches. Here a job wakes the thread that parked last (its stack and caches still warm), and
//! a thread that finishes a job takes the next queued one before it parks, so under load a few
//! threads stay busy and are seldom woken. Each thread runs inside the runtime's context (a
//! handler may spawn onto it); a thread idle for [`KEEP_ALIVE`] exits; at most [`MAX_THREADS`]
//! run at once, and jobs beyond them wait their turn.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// How long an idle thread waits for a job before it exits (tokio's blocking pool's default).
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The most threads at once (tokio's blocking pool's default).
const MAX_THREADS: usize = 512;

type Job = Box<dyn FnOnce() + Send>;

/// A parked thread, and the flag that hands it a job (set under the pool's lock).
struct Parked {
    thread: Thread,
    woken: Arc<AtomicBool>,
}

#[derive(Default)]
struct Pool {
    jobs: VecDeque<Job>,
    /// Parked threads, the one that parked last on top.
    parked: Vec<Parked>,
    threads: usize,
}

static POOL: LazyLock<Mutex<Pool>> = LazyLock::new(Mutex::default);

fn pool() -> MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on a pool thread; the receiver gets its value, or an error if `f` panicked. Call
/// it from inside the runtime (its handle is what the thread runs in).
pub(crate) fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> oneshot::Receiver<T> {
    let (tx, rx) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    let mut p = pool();
    p.jobs.push_back(job);
    if let Some(parked) = p.parked.pop() {
        parked.woken.store(true, Ordering::Release);
        drop(p);
        parked.thread.unpark();
    } else if p.threads < MAX_THREADS {
        p.threads += 1;
        drop(p);
        let handle = Handle::current();
        let started = std::thread::Builder::new().name("mcpaxle-handler".into()).spawn(move || work(handle));
        if started.is_err() {
            // No thread could be started (out of memory or a process limit): the job waits
            // for a running thread; with none, it is dropped and its caller told so.
            let mut p = pool();
            p.threads -= 1;
            if p.threads == 0 {
                p.jobs.clear();
            }
        }
    }
    rx
}

/// A pool thread: jobs until none come for [`KEEP_ALIVE`].
fn work(handle: Handle) {
    let _runtime = handle.enter();
    let woken = Arc::new(AtomicBool::new(false));
    let mut p = pool();
    loop {
        if let Some(job) = p.jobs.pop_front() {
            drop(p);
            // A panic loses this job's value (its receiver sees the sender dropped), not the thread.
            let _ = catch_unwind(AssertUnwindSafe(job));
            p = pool();
            continue;
        }
        woken.store(false, Ordering::Relaxed);
        p.parked.push(Parked { thread: std::thread::current(), woken: woken.clone() });
        drop(p);
        let deadline = Instant::now() + KEEP_ALIVE;
        while !woken.load(Ordering::Acquire) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::park_timeout(left);
        }
        p = pool();
        // Decided under the lock: a job handed over meanwhile is taken, not lost.
        if !woken.load(Ordering::Acquire) {
            p.parked.retain(|parked| !Arc::ptr_eq(&parked.woken, &woken));
            p.threads -= 1;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn jobs_run_in_the_runtime_and_a_panic_loses_only_its_job() {
        let values: Vec<_> = (0..64).map(|i| run(move || i * 2)).collect();
        for (i, rx) in values.into_iter().enumerate() {
            assert_eq!(rx.await.unwrap(), i * 2);
        }
        assert!(run(|| Handle::try_current().is_ok()).await.unwrap(), "a job runs in the runtime's context");
        assert!(run(|| -> () { panic!("a handler's panic") }).await.is_err());
        assert_eq!(run(|| 7).await.unwrap(), 7, "the pool still runs jobs after a panic");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_blocked_job_does_not_hold_up_the_next() {
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let first = run(move || blocked.recv().is_ok());
        assert_eq!(run(|| 1).await.unwrap(), 1);
        release.send(()).unwrap();
        assert!(first.await.unwrap());
    }
}
