//! §6: the one table of the words a failed call shows that more than one path makes: a cancel,
//! the offline tools closed under a call, a timeout, a server failure (JSON-RPC and transport),
//! an invalid result, a tool error without text, no result at all. The MCP client, the contract
//! core, the offline tools and the JavaScript modules (through the `callFailure` export, or the
//! outcomes the core makes) take them from here, so each is written once, in one language.

use super::text::one_line;

/// §6: a call the host cancelled; nothing that arrives after it is applied.
pub const CANCELLED: &str = "Cancelled.";

/// A call of the offline tools ended by their `close()` (running, starting the Worker, or
/// queued): a cancel the host did not ask for, so it says why.
pub const OFFLINE_CLOSED: &str = "Cancelled: the offline tools were closed.";

/// §6: the start of every server failure's line: `The server failed: <the error's message>`.
pub const SERVER_FAILED: &str = "The server failed: ";

/// §5.1/§6: the start of Megane Builder's line for a result that cannot be used.
pub const INVALID_RESULT: &str = "The tool returned an invalid result: ";

/// §6: the line shown for a tool error (`isError`) that gives no text.
pub const BARE_TOOL_ERROR: &str = "The tool reported an error.";

/// A call whose answer holds no `tools/call` result at all (not an object).
pub const NO_RESULT: &str = "The server sent no result.";

/// §6: a call (or any request) that had no answer within its time limit of `seconds` and was
/// stopped; it behaves like a cancel and is reported as a timeout. One wording for the remote
/// client and the offline tools.
pub fn timed_out(seconds: u64) -> String {
    format!("No answer within {seconds} s; it was stopped (timeout).")
}

/// The whole seconds a time limit of `ms` milliseconds is shown as (rounded up: a limit of
/// 100 ms is `1 s`, never `0 s`).
pub fn limit_seconds(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

/// §6: `The server failed: <message>`, the message cut to its first line (it is the error's own,
/// or a transport's description; a maker that knows a secret hides it first).
pub fn server_failed(message: &str) -> String {
    format!("{SERVER_FAILED}{}", one_line(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_names_its_limit_rounded_up() {
        assert_eq!(
            timed_out(limit_seconds(60_000)),
            "No answer within 60 s; it was stopped (timeout)."
        );
        assert_eq!(limit_seconds(100), 1);
        assert_eq!(limit_seconds(1_001), 2);
    }

    #[test]
    fn a_server_failure_is_one_line() {
        assert_eq!(
            server_failed("internal error\nTraceback (most recent call last):"),
            "The server failed: internal error"
        );
    }
}
