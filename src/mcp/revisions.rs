//! The MCP protocol revisions this client speaks, and what each requires of a request. A leaf:
//! negotiation ([`super::version`]) and the messages ([`super::errors`]) both read it.

/// The newest legacy revision, offered in `initialize`.
pub const LEGACY_OFFER: &str = "2025-11-25";

/// Legacy (initialize-handshake) revisions we accept in a server's `initialize` answer, newest first.
pub const LEGACY_SUPPORTED: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The stateless (modern era) revision we speak.
pub const MODERN: &str = "2026-07-28";

/// Modern revisions we can speak, newest first.
pub const MODERN_SUPPORTED: [&str; 1] = [MODERN];

/// Whether a revision needs the `MCP-Protocol-Version` header (2025-06-18 and later).
pub fn sends_version_header(version: &str) -> bool {
    version >= "2025-06-18"
}
