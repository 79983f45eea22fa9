//! Giving memory back to the system once a crowd of long-lived streams is gone. glibc's
//! allocator keeps the pages freed by 1,000 closed `subscriptions/listen` streams (their
//! buffers, tasks, queues) for later use, so a process's RSS never came down after them; a
//! `malloc_trim` returns every whole free page. It walks the heap, so it runs at most once per
//! [`TRIM_DELAY`], that long after the first stream of a burst ended (a burst of closes is one
//! trim). Elsewhere than glibc it does nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long after a stream ends the memory is given back (the other streams of the same burst
/// end meanwhile).
pub(crate) const TRIM_DELAY: Duration = Duration::from_secs(1);

/// Held by a long-lived stream: when it is dropped (the stream ended or its client left), the
/// freed memory is given back after [`TRIM_DELAY`].
pub(crate) struct TrimWhenDone;

impl Drop for TrimWhenDone {
    fn drop(&mut self) {
        static TRIMMER: Trimmer = Trimmer::new();
        TRIMMER.schedule(trim, TRIM_DELAY);
    }
}

/// At most one trim waiting at a time.
struct Trimmer {
    pending: AtomicBool,
}

impl Trimmer {
    const fn new() -> Self {
        Trimmer { pending: AtomicBool::new(false) }
    }

    /// Runs `trim` after `delay` unless it is already to run; outside a runtime, not.
    fn schedule(&'static self, trim: fn(), delay: Duration) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.pending.store(false, Ordering::Release);
            return;
        };
        runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            self.pending.store(false, Ordering::Release);
            trim();
        });
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static TRIMS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        TRIMS.fetch_add(1, Ordering::SeqCst);
    }

    #[tokio::test]
    async fn a_burst_of_ends_is_one_trim_after_the_delay() {
        static T: Trimmer = Trimmer::new();
        let delay = Duration::from_millis(200);
        for _ in 0..1000 {
            T.schedule(count, delay);
        }
        assert_eq!(TRIMS.load(Ordering::SeqCst), 0, "not before the delay");
        tokio::time::sleep(delay * 3).await;
        assert_eq!(TRIMS.load(Ordering::SeqCst), 1, "one trim for the burst");
        T.schedule(count, delay);
        tokio::time::sleep(delay * 3).await;
        assert_eq!(TRIMS.load(Ordering::SeqCst), 2, "the next end schedules again");
        // The real one runs too (it gives back what it can, and nothing breaks).
        drop(TrimWhenDone);
    }

    #[test]
    fn outside_a_runtime_nothing_is_scheduled() {
        static T: Trimmer = Trimmer::new();
        T.schedule(|| panic!("no runtime to run it"), Duration::ZERO);
        assert!(!T.pending.load(Ordering::SeqCst));
    }
}
