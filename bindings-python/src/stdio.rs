//! The protocol's output for the stdio transport: a duplicate of file descriptor 1 written by
//! a dedicated thread (blocking writes, in order), while fd 1 itself points at stderr for as
//! long as the server runs, so that a `print()` or a C library writing to stdout cannot
//! corrupt the stream of MCP messages.

use futures_util::task::AtomicWaker;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::PollSender;

/// Where the protocol goes while serving stdio, and how fd 1 is put back afterwards.
pub struct ProtocolOut {
    /// The writer the transport writes to.
    pub writer: FdWriter,
    /// Completes once every byte written has reached the fd (the writer thread ended).
    pub flushed: oneshot::Receiver<()>,
    /// A copy of the original fd 1, to restore with [`restore_stdout`].
    pub saved_stdout: Option<RawFd>,
}

/// Duplicates fd 1 for the protocol and, with `redirect`, points fd 1 at stderr.
pub fn protocol_out(redirect: bool) -> io::Result<ProtocolOut> {
    let out = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if out < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut saved = None;
    if redirect {
        let s = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
        if s < 0 || unsafe { libc::dup2(2, 1) } < 0 {
            let e = io::Error::last_os_error();
            unsafe {
                libc::close(out);
                if s >= 0 {
                    libc::close(s);
                }
            }
            return Err(e);
        }
        saved = Some(s);
    }
    // Bounded, so that a client that does not read stdout holds up the transport's writes (and
    // with them its reading of stdin, StdioOptions::max_outbound_queue) instead of piling up here.
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(WRITES_IN_FLIGHT);
    let (done_tx, done_rx) = oneshot::channel();
    let written = Arc::new(Written::default());
    let progress = written.clone();
    std::thread::Builder::new().name("mcpaxle-stdout".into()).spawn(move || {
        while let Some(chunk) = rx.blocking_recv() {
            if write_all(out, &chunk).is_err() {
                break;
            }
            progress.writes.fetch_add(1, Ordering::Release);
            progress.waker.wake();
        }
        progress.ended.store(true, Ordering::Release);
        progress.waker.wake();
        unsafe { libc::close(out) };
        let _ = done_tx.send(());
    })?;
    let writer = FdWriter { tx: Some(PollSender::new(tx)), sent: 0, written };
    Ok(ProtocolOut { writer, flushed: done_rx, saved_stdout: saved })
}

/// How far the writer thread got: what [`FdWriter::poll_flush`] waits for.
#[derive(Default)]
struct Written {
    /// Writes that reached the fd.
    writes: AtomicU64,
    /// The thread stopped (the fd failed, or the writer was shut down).
    ended: AtomicBool,
    waker: AtomicWaker,
}

/// The writes handed to the writer thread and not yet written: past them `poll_write` waits.
const WRITES_IN_FLIGHT: usize = 4;

/// Points fd 1 back at what it was before [`protocol_out`] redirected it.
pub fn restore_stdout(saved: Option<RawFd>) {
    if let Some(s) = saved {
        unsafe {
            libc::dup2(s, 1);
            libc::close(s);
        }
    }
}

fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// An `AsyncWrite` handing each write to the writer thread (never blocks the runtime; waits,
/// as a pipe would, while [`WRITES_IN_FLIGHT`] writes are not yet written). A flush completes
/// once every write reached the fd, so that what the transport counts as written (and the
/// room it then gives to new answers, `StdioOptions::max_outbound_queue`) is written.
pub struct FdWriter {
    tx: Option<PollSender<Vec<u8>>>,
    /// Writes handed to the thread.
    sent: u64,
    written: Arc<Written>,
}

impl AsyncWrite for FdWriter {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let Some(tx) = self.tx.as_mut() else { return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())) };
        if std::task::ready!(tx.poll_reserve(cx)).is_err() || tx.send_item(buf.to_vec()).is_err() {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        self.sent += 1;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let w = &self.written;
        w.waker.register(cx.waker());
        if w.writes.load(Ordering::Acquire) >= self.sent {
            Poll::Ready(Ok(()))
        } else if w.ended.load(Ordering::Acquire) {
            Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        } else {
            Poll::Pending
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.tx = None;
        Poll::Ready(Ok(()))
    }
}
