//! The server URL: scheme and host checks before any request (HTTPS unless loopback, contract §9).

use super::errors::McpError;

/// A checked endpoint URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL as given (used for every request).
    pub url: String,
    /// The host, without port or brackets' content changed (`[::1]` stays bracketed).
    pub host: String,
    /// Whether the host is loopback.
    pub loopback: bool,
    /// The host with its port when the URL gives one (`127.0.0.1:8765`), lower case: what a
    /// server without `serverInfo.name` is called.
    pub authority: String,
}

/// Whether `host` (as written in a URL authority, without port) is a loopback name or address.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    if h == "localhost" || h.ends_with(".localhost") || h == "[::1]" {
        return true;
    }
    let parts: Vec<&str> = h.split('.').collect();
    parts.len() == 4
        && parts[0] == "127"
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.parse::<u8>().is_ok())
}

impl Endpoint {
    /// Checks `url`: `https://` anywhere, `http://` only to a loopback host; no credentials in the URL.
    pub fn parse(url: &str) -> Result<Self, McpError> {
        let url = url.trim();
        let lower = url.to_ascii_lowercase();
        let (secure, rest) = if let Some(r) = lower.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = lower.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(McpError::InvalidUrl {
                reason: "it must start with https:// or http://".into(),
            });
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            return Err(McpError::InvalidUrl {
                reason: "it must not contain a user name or password; give the token separately"
                    .into(),
            });
        }
        let host = if authority.starts_with('[') {
            match authority.find(']') {
                Some(end) => authority[..=end].to_string(),
                None => {
                    return Err(McpError::InvalidUrl {
                        reason: "unterminated [IPv6] host".into(),
                    })
                }
            }
        } else {
            authority.split(':').next().unwrap_or("").to_string()
        };
        if host.is_empty() {
            return Err(McpError::InvalidUrl {
                reason: "it has no host".into(),
            });
        }
        let loopback = is_loopback_host(&host);
        if !secure && !loopback {
            return Err(McpError::InsecureUrl { host });
        }
        let port = authority[host.len()..]
            .strip_prefix(':')
            .filter(|p| !p.is_empty());
        let authority = match port {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        };
        Ok(Endpoint {
            url: url.to_string(),
            host,
            loopback,
            authority,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authority_keeps_the_port() {
        let e = Endpoint::parse("http://127.0.0.1:8765/mcp").unwrap();
        assert_eq!(
            (e.host.as_str(), e.authority.as_str()),
            ("127.0.0.1", "127.0.0.1:8765")
        );
        let e = Endpoint::parse("https://Tools.Example.org/mcp").unwrap();
        assert_eq!(e.authority, "tools.example.org");
        let e = Endpoint::parse("http://[::1]:9000/mcp").unwrap();
        assert_eq!(
            (e.host.as_str(), e.authority.as_str()),
            ("[::1]", "[::1]:9000")
        );
        let e = Endpoint::parse("http://localhost:/mcp").unwrap();
        assert_eq!(e.authority, "localhost");
    }
}
