//! MCP protocol negotiation: how a legacy `initialize` answer and a modern -32022 error are
//! negotiated against the revisions we speak ([`super::revisions`]), and which protocol era the
//! host asked for.

use serde_json::Value;

use super::errors::McpError;
use super::revisions::{LEGACY_SUPPORTED, MODERN_SUPPORTED};
use crate::wire::jsonrpc::RpcError;

/// Which protocol era the host asked for.
///
/// The default is [`ProtocolChoice::Auto`], decided by measurement (`benches/protocol_fallback.mjs`):
/// against a legacy server whose CORS preflight refuses the 2026-07-28 headers, auto's fallback costs
/// a few milliseconds per connect (median 5.8 ms over 126.5 ms, headless Chromium) and one notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// The `initialize` handshake only (what browser-reachable servers speak today).
    Legacy,
    /// Only the stateless 2026-07-28 protocol.
    Modern,
    /// Probe the modern protocol with `server/discover`, fall back to the legacy handshake (default).
    #[default]
    Auto,
}

impl ProtocolChoice {
    /// Parses the JavaScript option value (`"legacy"`, `"modern"`, `"auto"`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "legacy" => Some(ProtocolChoice::Legacy),
            "modern" => Some(ProtocolChoice::Modern),
            "auto" => Some(ProtocolChoice::Auto),
            _ => None,
        }
    }
}

/// The era a connection ended up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, optional session.
    Legacy,
    /// Stateless, per-request version in `_meta`.
    Modern,
}

/// Checks a server's `initialize` answer; returns the accepted version.
pub fn accept_legacy(answer: &str) -> Result<&'static str, McpError> {
    if MODERN_SUPPORTED.contains(&answer) {
        return Err(McpError::ModernOnly);
    }
    LEGACY_SUPPORTED
        .iter()
        .copied()
        .find(|v| *v == answer)
        .ok_or_else(|| McpError::UnsupportedVersion {
            offered: answer.chars().take(40).collect(),
        })
}

/// The newest modern revision in `supported` (from a -32022 error's data) that we also speak.
pub fn mutual_modern(supported: &[String]) -> Option<&'static str> {
    MODERN_SUPPORTED
        .iter()
        .copied()
        .find(|v| supported.iter().any(|s| s == v))
}

/// The error for a server whose supported versions share none with ours: [`McpError::ModernOnly`]
/// when it lists a modern revision we speak (the host asked for the legacy era), else
/// [`McpError::UnsupportedVersion`].
pub fn no_mutual_version(supported: &[String]) -> McpError {
    if mutual_modern(supported).is_some() {
        McpError::ModernOnly
    } else {
        McpError::UnsupportedVersion {
            offered: supported.join(", "),
        }
    }
}

/// Whether `supported` lists a legacy revision we speak (then a modern probe may fall back).
pub fn has_mutual_legacy(supported: &[String]) -> bool {
    LEGACY_SUPPORTED
        .iter()
        .any(|v| supported.iter().any(|s| s == v))
}

/// The versions a -32022 error lists in `data.supported` (or `data.supportedVersions`).
pub fn supported_in(e: &RpcError) -> Vec<String> {
    version_list(
        e.data
            .as_ref()
            .and_then(|d| d.get("supported").or_else(|| d.get("supportedVersions"))),
    )
}

/// The protocol versions a server lists (`supportedVersions`, or -32022's `data.supported`):
/// the strings of a JSON array, empty when absent or not an array.
pub fn version_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
