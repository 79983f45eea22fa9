//! `mcpaxle_set_log_handler`: the core's log events in the application's own logging.

use crate::context::mcpaxle_log_level;
use crate::ffi::{SendPtr, ffi_boundary, mcpaxle_result};
use mcpaxle_core::host_log::{LogRecord, LogSink, set_sink};
use mcpaxle_core::schema::LoggingLevel;
use std::ffi::{CString, c_char, c_void};

/// Receives one log event of the core: its `level` (`MCPAXLE_LOG_ERROR`, `_WARNING`, `_INFO`
/// or `_DEBUG`), `target` (where in the core it comes from,
/// `"mcpaxle::transport::http::server"`), `message`, and `fields_json` (the event's other
/// values, a JSON object). All borrowed for the duration of the call.
///
/// Thread: the core's one log thread, `mcpaxle-log`, one event at a time (blocking delays only
/// the events after it).
pub type mcpaxle_log_handler = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: mcpaxle_log_level,
        target: *const c_char,
        message: *const c_char,
        fields_json: *const c_char,
    ),
>;

/// Hands the core's log events (a connection limit reached, a Redis bus reconnecting, a stdio
/// server's stderr, an issuer's key set unreachable, ...) to `handler`, with `user_data`;
/// NULL stops. Without a handler they go nowhere. Events the handler does not take up fast
/// enough are dropped (at most 1,024 wait); the next event handed over says how many.
///
/// Process-wide: a later call replaces the handler. Fails with `MCPAXLE_ERR_USAGE` in a
/// process whose Rust code already installed a global `tracing` subscriber (the events go
/// there). `user_data` must stay valid until the handler is replaced or removed. Thread: any.
///
/// ```c
/// static void to_syslog(void *ud, mcpaxle_log_level level, const char *target,
///                       const char *message, const char *fields_json) {
///     syslog(level >= MCPAXLE_LOG_ERROR ? LOG_ERR : LOG_INFO, "%s: %s", target, message);
/// }
/// mcpaxle_set_log_handler(to_syslog, NULL);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpaxle_set_log_handler(
    handler: mcpaxle_log_handler,
    user_data: *mut c_void,
) -> mcpaxle_result {
    ffi_boundary!({
        let user_data = SendPtr(user_data);
        let sink = handler.map(|func| -> LogSink {
            Box::new(move |r: LogRecord| {
                let level = match r.level {
                    LoggingLevel::Debug => mcpaxle_log_level::MCPAXLE_LOG_DEBUG,
                    LoggingLevel::Info => mcpaxle_log_level::MCPAXLE_LOG_INFO,
                    LoggingLevel::Warning | LoggingLevel::Notice => mcpaxle_log_level::MCPAXLE_LOG_WARNING,
                    _ => mcpaxle_log_level::MCPAXLE_LOG_ERROR,
                };
                let text = |s: String| CString::new(s.replace('\0', "\u{fffd}")).unwrap_or_default();
                let (target, message) = (text(r.target), text(r.message));
                let fields = text(serde_json::Value::Object(r.fields).to_string());
                // SAFETY: the function pointer and user data were registered together; the
                // strings live until it returns.
                unsafe { func(user_data.get(), level, target.as_ptr(), message.as_ptr(), fields.as_ptr()) }
            })
        });
        set_sink(sink)?;
        Ok(())
    })
}
