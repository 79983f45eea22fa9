//! What makes "no callback runs after `_free` returns" true: every object that calls into C (a
//! server, a client, a subscription) has an [`Owner`] with an `active` flag and a count of the
//! callbacks running. A callback starts only while the owner is active; `_free` clears the flag
//! and waits for the running callbacks to return (not counting those of the freeing thread,
//! so that freeing from inside a callback does not deadlock).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The owners whose callbacks are running on this thread (innermost last), and whether
    /// each is a ticket's delivery.
    static RUNNING: RefCell<Vec<(u64, bool)>> = const { RefCell::new(Vec::new()) };
}

#[derive(Debug)]
struct State {
    active: bool,
    /// Callbacks running now (started by `enter`).
    running: usize,
    /// Tickets not delivered yet: async operations whose callback must still run once.
    pending: usize,
}

/// The active flag and running-callback count of one object that calls into C.
#[derive(Debug)]
pub(crate) struct Owner {
    id: u64,
    state: Mutex<State>,
    idle: Condvar,
}

impl Owner {
    pub fn new() -> Self {
        Owner {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(State { active: true, running: 0, pending: 0 }),
            idle: Condvar::new(),
        }
    }

    /// A process-unique id (reply handles are tagged with it).
    pub fn id(&self) -> u64 {
        self.id
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` (a call into C) if the owner is still active; `None` if it was closed.
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        {
            let mut s = self.lock();
            if !s.active {
                return None;
            }
            s.running += 1;
        }
        struct Leave<'a>(&'a Owner);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let _ = RUNNING.try_with(|r| r.borrow_mut().pop());
                let mut s = self.0.lock();
                s.running -= 1;
                self.0.idle.notify_all();
            }
        }
        let _ = RUNNING.try_with(|r| r.borrow_mut().push((self.id, false)));
        let _leave = Leave(self);
        Some(f())
    }

    /// Promises one callback for an async operation: `close` waits until it was delivered.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        self.lock().pending += 1;
        Ticket(self.clone())
    }

    /// Clears the active flag: no callback starts from now on.
    pub fn deactivate(&self) {
        self.lock().active = false;
    }

    /// Clears the active flag and waits until no callback of this owner runs on another thread.
    /// Returns whether the owner was active.
    pub fn close(&self) -> bool {
        let mine = |ticket: bool| {
            RUNNING.try_with(|r| r.borrow().iter().filter(|e| **e == (self.id, ticket)).count()).unwrap_or(0)
        };
        let (mine_callbacks, mine_tickets) = (mine(false), mine(true));
        let mut s = self.lock();
        let was = s.active;
        s.active = false;
        while s.running > mine_callbacks || s.pending > mine_tickets {
            s = self.idle.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        was
    }
}

/// The promise of one callback (see [`Owner::ticket`]); delivered exactly once, even while the
/// owner is being closed.
pub(crate) struct Ticket(Arc<Owner>);

impl Ticket {
    /// Runs the callback, then releases the promise.
    pub fn deliver<R>(self, f: impl FnOnce() -> R) -> R {
        let _ = RUNNING.try_with(|r| r.borrow_mut().push((self.0.id, true)));
        let r = f();
        let _ = RUNNING.try_with(|r| r.borrow_mut().pop());
        r
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.pending -= 1;
        self.0.idle.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[test]
    fn close_waits_for_running_callbacks_and_blocks_new_ones() {
        let owner = Arc::new(Owner::new());
        let done = Arc::new(AtomicBool::new(false));
        let (o, d) = (owner.clone(), done.clone());
        let t = std::thread::spawn(move || {
            o.enter(|| {
                std::thread::sleep(Duration::from_millis(100));
                d.store(true, Ordering::SeqCst);
            })
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(owner.close());
        assert!(done.load(Ordering::SeqCst), "close returned while a callback ran");
        assert!(owner.enter(|| ()).is_none());
        assert!(t.join().unwrap().is_some());
    }

    #[test]
    fn close_waits_for_tickets_but_not_for_the_one_delivering() {
        let owner = Arc::new(Owner::new());
        let ticket = owner.ticket();
        let (o, delivered) = (owner.clone(), Arc::new(AtomicBool::new(false)));
        let d = delivered.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            ticket.deliver(|| d.store(true, Ordering::SeqCst));
            drop(o);
        });
        owner.close();
        assert!(delivered.load(Ordering::SeqCst), "close returned before the ticket was delivered");
        t.join().unwrap();
        let second = owner.ticket();
        second.deliver(|| owner.close());
    }

    #[test]
    fn close_from_inside_a_callback_does_not_deadlock() {
        let owner = Owner::new();
        assert_eq!(owner.enter(|| owner.close()), Some(true));
        assert!(owner.enter(|| ()).is_none());
    }
}
