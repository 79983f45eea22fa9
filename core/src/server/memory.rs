//! What the server asks of the process's allocator: glibc's, on Linux. Elsewhere nothing here
//! does anything.
//!
//! - **Thresholds** ([`tune_allocator`]). Left to its defaults, glibc gives a thread's heap back
//!   to the system as soon as 128 KiB at its top are free (`M_TRIM_THRESHOLD`), and maps each
//!   block from 128 KiB up on its own (`M_MMAP_THRESHOLD`; both thresholds grow only after such a
//!   block is freed). A server reading and answering 100 KB bodies then gives back and faults in
//!   the same pages on every call: measured, two thirds of its CPU went to page faults, `madvise`
//!   and the TLB shootdowns they cause (`make bench`, `call-100k`: 247 -> 81 µs per call;
//!   `call-1m`: 2,060 -> 883). So a process that builds a server raises them once, to
//!   [`TRIM_THRESHOLD`] and [`MMAP_THRESHOLD`], unless the application chose its own through
//!   `GLIBC_TUNABLES` (`glibc.malloc.trim_threshold`, `glibc.malloc.mmap_threshold`) or the older
//!   `MALLOC_TRIM_THRESHOLD_`/`MALLOC_MMAP_THRESHOLD_` variables: setting either to glibc's
//!   default keeps glibc's behaviour.
//! - **Trimming after streams** ([`TrimWhenDone`]). glibc keeps the pages freed by 1,000 closed
//!   `subscriptions/listen` streams (their buffers, tasks, queues) for later use, so a process's
//!   RSS never came down after them; a `malloc_trim` returns every whole free page. It walks the
//!   heap, so it runs at most once per [`TRIM_DELAY`], that long after the first stream of a burst
//!   ended (a burst of closes is one trim).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The free space at the top of a heap that glibc gives back on its own (its default: 128 KiB).
pub(crate) const TRIM_THRESHOLD: usize = 16 << 20;

/// The size from which a block is mapped on its own (its default: 128 KiB, growing).
pub(crate) const MMAP_THRESHOLD: usize = 4 << 20;

/// Whether the application left glibc's thresholds to us, judged by the environment it set.
fn thresholds_are_ours(var: impl Fn(&str) -> Option<String>) -> bool {
    let chosen_in_tunables = var("GLIBC_TUNABLES").is_some_and(|t| {
        t.split(':')
            .any(|kv| kv.starts_with("glibc.malloc.trim_threshold=") || kv.starts_with("glibc.malloc.mmap_threshold="))
    });
    !chosen_in_tunables && var("MALLOC_TRIM_THRESHOLD_").is_none() && var("MALLOC_MMAP_THRESHOLD_").is_none()
}

/// Raises glibc's trim and mmap thresholds, once per process (see the module's text).
pub(crate) fn tune_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if thresholds_are_ours(|name| std::env::var(name).ok()) {
            set_thresholds();
        }
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() {
    // SAFETY: mallopt changes allocator parameters; any thread may call it at any time (it takes
    // the arenas' locks), and both values are within glibc's limits (32 MiB for mmap on 64-bit).
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() {}

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
    fn thresholds_the_application_chose_are_kept() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        assert!(thresholds_are_ours(env(&[])));
        assert!(thresholds_are_ours(env(&[("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")])));
        assert!(!thresholds_are_ours(env(&[("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072")])));
        assert!(!thresholds_are_ours(env(&[(
            "GLIBC_TUNABLES",
            "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072"
        )])));
        assert!(!thresholds_are_ours(env(&[("MALLOC_TRIM_THRESHOLD_", "131072")])));
        assert!(!thresholds_are_ours(env(&[("MALLOC_MMAP_THRESHOLD_", "131072")])));
    }

    #[test]
    fn outside_a_runtime_nothing_is_scheduled() {
        static T: Trimmer = Trimmer::new();
        T.schedule(|| panic!("no runtime to run it"), Duration::ZERO);
        assert!(!T.pending.load(Ordering::SeqCst));
    }
}
