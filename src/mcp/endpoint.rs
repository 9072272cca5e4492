//! The server URL: scheme and host checks before any request (HTTPS unless loopback, contract §9),
//! and no secret in the URL itself (no `user:pass@`, no query such as `?token=`): a URL is kept in
//! the page's URL list, local storage and error messages, a token never is. [`Endpoint::parse`] is
//! the one check that `connect`, launch links (`contract::launch`) and the page (`checkServerUrl`)
//! all call; [`display_url`] the one form in which a message shows a URL.

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

/// Longest URL (in characters, the `…` included) shown by [`display_url`].
pub const MAX_SHOWN_URL_CHARS: usize = 200;

/// A URL as a message shows it: without its query (`?…`), fragment (`#…`) and user info
/// (`user:pass@`), where a secret may hide, on one line of at most [`MAX_SHOWN_URL_CHARS`]
/// characters ([`one_line_max`]); any text, a URL or not, gets the same cuts. Every error that
/// names a server URL shows this form, and the `megane` entry gives it to Builder (`displayUrl`)
/// for its own `Could not connect to <url>: ` prefix.
///
/// [`one_line_max`]: crate::contract::text::one_line_max
pub fn display_url(url: &str) -> String {
    let url = url.trim();
    let before_query = url.split(['?', '#']).next().unwrap_or("");
    let (scheme, rest) = match before_query.find("://") {
        Some(i) if is_scheme(&before_query[..i]) => before_query.split_at(i + 3),
        _ => ("", before_query),
    };
    // WHATWG URLs also end the authority at `\` (special schemes).
    let end = rest.find(['/', '\\']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority.rsplit('@').next().unwrap_or("");
    crate::contract::text::one_line_max(&format!("{scheme}{host}{path}"), MAX_SHOWN_URL_CHARS)
}

/// Whether `text` is a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// The host (with port) an HTTP redirect's `Location` points to: the authority of an absolute
/// URL (without `user:pass@`), else `current_host` (a relative `Location`); one line, at most 100
/// characters, for an error message.
pub fn redirect_host(location: &str, current_host: &str) -> String {
    let location = location.trim();
    let lower = location.to_ascii_lowercase();
    let rest = match lower.find("://") {
        Some(i)
            if lower[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            &location[i + 3..]
        }
        _ if location.starts_with("//") => &location[2..],
        _ => current_host,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    host.chars()
        .filter(|c| !c.is_control() && !c.is_whitespace())
        .take(100)
        .collect()
}

impl Endpoint {
    /// Checks `url`: `https://` anywhere, `http://` only to a loopback host; no credentials
    /// (`user:pass@`) and no query (`?…`) in the URL, each refused with a hint to use the token
    /// field. The error never repeats the URL (it may hold a secret).
    pub fn parse(url: &str) -> Result<Self, McpError> {
        let url = url.trim();
        if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(McpError::InvalidUrl {
                reason: "it contains spaces or control characters".into(),
            });
        }
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
                reason: "it must not contain a user name or password (user:password@); give the token in the token field instead".into(),
            });
        }
        if rest.split('#').next().unwrap_or("").contains('?') {
            return Err(McpError::InvalidUrl {
                reason: "it must not carry a query (such as ?token=…), which would be kept with the URL; give the token in the token field instead".into(),
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
    fn a_shown_url_keeps_no_query_fragment_or_user_info() {
        for (url, shown) in [
            (
                "https://tools.example.org/mcp",
                "https://tools.example.org/mcp",
            ),
            (
                " http://127.0.0.1:8765/mcp?token=s3cret ",
                "http://127.0.0.1:8765/mcp",
            ),
            (
                "https://me:s3cret@x.org:8443/a/b#token=s3cret",
                "https://x.org:8443/a/b",
            ),
            ("https://a@b@x.org/mcp", "https://x.org/mcp"),
            ("http://u:p@h\\mcp", "http://h\\mcp"),
            ("https://x.org/a@b/c", "https://x.org/a@b/c"),
            ("me:s3cret@x.org/mcp?q", "x.org/mcp"),
            // `://` after something that is not a scheme is not the URL's start.
            ("me:s3cret@x.org/a://b@c", "x.org/a://b@c"),
            ("javascript:alert(1)", "javascript:alert(1)"),
            ("http://h/\nmcp?token=s3cret", "http://h/"),
            ("", ""),
        ] {
            assert_eq!(display_url(url), shown, "{url:?}");
        }
        let long = display_url(&format!("https://x.org/{}", "p".repeat(500)));
        assert_eq!(long.chars().count(), MAX_SHOWN_URL_CHARS);
    }

    /// Found by the `server_url` fuzz target: a control character in the host reached the message.
    #[test]
    fn a_refused_host_is_shown_through_the_sanitiser() {
        let e = Endpoint::parse("http://[::\u{0}]/mcp")
            .unwrap_err()
            .to_string();
        assert!(crate::contract::text::is_one_line(&e), "{e:?}");
        assert!(e.contains("spaces or control characters"), "{e}");
        let e = McpError::InsecureUrl {
            host: "[::\u{0}]\nx".into(),
        }
        .to_string();
        assert!(
            e.starts_with("Refusing to connect to [:: ] over plain http"),
            "{e}"
        );
        // A relative Location names the current host, sanitised too.
        assert_eq!(redirect_host("/next", "a\u{0}b\nc:1"), "abc:1");
        let e = Endpoint::parse("http://evil\u{202E}host\u{2028}x/")
            .unwrap_err()
            .to_string();
        assert!(crate::contract::text::is_one_line(&e), "{e:?}");
    }

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

    #[test]
    fn a_query_or_credentials_in_the_url_are_refused_with_the_token_field_hint() {
        for url in [
            "http://127.0.0.1:8765/mcp?token=s3cret",
            "https://tools.example.org/mcp?x=1",
            "https://tools.example.org?token=s3cret",
            "http://user:s3cret@127.0.0.1:8765/mcp",
            "https://s3cret@tools.example.org/mcp",
        ] {
            let error = Endpoint::parse(url).unwrap_err().to_string();
            assert!(error.contains("token field"), "{url}: {error}");
            assert!(
                !error.contains("s3cret") && !error.contains('\n'),
                "{url}: {error}"
            );
        }
        // A `?` or `@` after the fragment mark is not part of the request URL.
        assert_eq!(
            redirect_host("http://evil.example:8080/x?y", "a"),
            "evil.example:8080"
        );
        assert_eq!(redirect_host("HTTPS://u:p@b.example/", "a"), "b.example");
        assert_eq!(redirect_host("//c.example/mcp", "a"), "c.example");
        assert_eq!(redirect_host("/other/mcp", "127.0.0.1:9"), "127.0.0.1:9");
        assert!(Endpoint::parse("http://127.0.0.1:8765/mcp#a?b").is_ok());
        assert!(Endpoint::parse("http://127.0.0.1:8765/mcp").is_ok());
    }
}
