//! The server URL: scheme and host checks before any request (HTTPS unless loopback, contract §9),
//! and no secret in the URL itself (no `user:pass@`, no query such as `?token=`): a URL is kept in
//! the page's URL list, local storage and error messages, a token never is. [`Endpoint::parse`] is
//! the one check that `connect`, launch links (`contract::launch`) and the page (`checkServerUrl`)
//! all call; [`display_url`] the one form in which a message shows a URL. Every URL here is cut by
//! the one splitter ([`super::url::split`]).

use std::fmt;

use super::text::{one_line_max, without_hidden};
use super::url::{self, split};

pub use super::url::is_loopback_host;

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

/// Why a server URL is refused ([`Endpoint::parse`]); the MCP client's `McpError::InvalidUrl` and
/// `McpError::InsecureUrl` carry the same and show the same words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// The URL could not be used (not http/https, no host, …).
    Invalid {
        /// What is wrong.
        reason: String,
    },
    /// `http:` to a host that is not loopback: refused before any request (contract §9).
    Insecure {
        /// The host that was refused.
        host: String,
    },
}

/// The message of [`UrlError::Invalid`].
pub fn write_invalid(f: &mut fmt::Formatter<'_>, reason: &str) -> fmt::Result {
    write!(f, "The tool server URL is not usable: {reason}.")
}

/// The message of [`UrlError::Insecure`]. The host is the user's text: shown through the
/// sanitiser (a NUL or a line break in it must not reach the message).
pub fn write_insecure(f: &mut fmt::Formatter<'_>, host: &str) -> fmt::Result {
    write!(
        f,
        "Refusing to connect to {} over plain http: use https:// (http is allowed only for a server on this computer: localhost, 127.0.0.1 or [::1]).",
        one_line_max(host, 100)
    )
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::Invalid { reason } => write_invalid(f, reason),
            UrlError::Insecure { host } => write_insecure(f, host),
        }
    }
}

impl std::error::Error for UrlError {}

/// Longest URL (in characters, the `…` included) shown by [`display_url`].
pub const MAX_SHOWN_URL_CHARS: usize = 200;

/// A URL as a message shows it: without its query (`?…`), fragment (`#…`) and user info
/// (`user:pass@`), where a secret may hide, on one line of at most [`MAX_SHOWN_URL_CHARS`]
/// characters ([`one_line_max`]); any text, a URL or not, gets the same cuts. Every error that
/// names a server URL shows this form, and the `megane` entry gives it to Builder (`displayUrl`)
/// for its own `Could not connect to <url>: ` prefix.
pub fn display_url(url: &str) -> String {
    // Read as a browser reads it (tabs and line breaks dropped, ends trimmed), and with nothing
    // hidden left: a control character before the scheme must not hide user info from the cut.
    let mut shown = without_hidden(url).into_owned();
    // A cut only removes text, so it can join what it leaves into a new `user:pass@` (the text
    // `J:@http://h:@x` is no URL; cut once it reads `http://h:@x`), and the one-line rule trims
    // and takes the first line with something on it (`@\u{2028}https://u@h`): cut and make one
    // line again until nothing changes. It ends: a round that changes anything after the first
    // makes the text shorter (one line of one line is the same line).
    loop {
        let next = one_line_max(&cut_for_display(&shown), MAX_SHOWN_URL_CHARS);
        if next == shown {
            return shown;
        }
        shown = next;
    }
}

/// One round of [`display_url`]'s cut: the scheme and `//` as written, the host and port, the
/// path; the user info, query and fragment gone.
fn cut_for_display(url: &str) -> String {
    let parts = split(url);
    let lead = match (parts.scheme, parts.marked) {
        (Some(scheme), _) => format!("{scheme}://"),
        (None, true) => "//".to_string(),
        (None, false) => String::new(),
    };
    format!("{lead}{}{}", parts.host_port(), parts.path)
}

/// The host (with port) an HTTP redirect's `Location` points to: the authority of an absolute
/// URL or a network-path reference (without `user:pass@`), else `current_host` (a relative
/// `Location`); one line, at most 100 characters, for an error message.
pub fn redirect_host(location: &str, current_host: &str) -> String {
    let location = without_hidden(location);
    let parts = split(&location);
    let host = if parts.marked {
        parts.host_port()
    } else {
        url::split(current_host).host_port()
    };
    host.chars()
        .filter(|c| !c.is_control() && !c.is_whitespace())
        .take(100)
        .collect()
}

impl Endpoint {
    /// Checks `url`: `https://` anywhere, `http://` only to a loopback host; no credentials
    /// (`user:pass@`) and no query (`?…`) in the URL, each refused with a hint to use the token
    /// field. The error never repeats the URL (it may hold a secret).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let invalid = |reason: &str| UrlError::Invalid {
            reason: reason.to_string(),
        };
        let url = url.trim();
        if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(invalid("it contains spaces or control characters"));
        }
        let lower = url.to_ascii_lowercase();
        let parts = split(&lower);
        let secure = match parts.scheme {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(invalid("it must start with https:// or http://")),
        };
        if parts.has_user_info() {
            return Err(invalid("it must not contain a user name or password (user:password@); give the token in the token field instead"));
        }
        if parts.query.is_some() {
            return Err(invalid("it must not carry a query (such as ?token=…), which would be kept with the URL; give the token in the token field instead"));
        }
        let host = parts.host();
        if host.starts_with('[') && !host.ends_with(']') {
            return Err(invalid("unterminated [IPv6] host"));
        }
        if host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let loopback = is_loopback_host(host);
        if !secure && !loopback {
            return Err(UrlError::Insecure {
                host: host.to_string(),
            });
        }
        let authority = match parts.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        Ok(Endpoint {
            url: url.to_string(),
            host: host.to_string(),
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
            // Read as a browser reads it: line breaks and tabs dropped.
            ("http://h/\nmcp?token=s3cret", "http://h/mcp"),
            // Found by the `server_url` fuzz target: a control character (or a hidden direction
            // control) before the scheme hid the user info from the cut.
            (
                "\n\u{19}https://user:pass@examp\u{19}\tle.org/mc\t\u{0}p",
                "https://example.org/mcp",
            ),
            ("\u{202E}https://user:pass@x.org/m", "https://x.org/m"),
            // Found by the `server_url` fuzz target: what the cut left began with a space (or a
            // line separator) that the one-line rule then took away.
            (
                "\u{11}@\u{2000}\u{0}\u{b}https://userss@htpxi/mcp\u{2008}$",
                "https://htpxi/mcp $",
            ),
            ("@\u{2028}https://u:p@h/m", "https://h/m"),
            // Found by the `server_url` fuzz target: the first cut joined what was left into a
            // URL with user info of its own.
            (
                "J:@http://127.5.0J:@http://117.4ttpt\u{f}",
                "http://http://117.4ttpt",
            ),
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
        assert!(crate::wire::text::is_one_line(&e), "{e:?}");
        assert!(e.contains("spaces or control characters"), "{e}");
        let e = UrlError::Insecure {
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
        assert!(crate::wire::text::is_one_line(&e), "{e:?}");
    }

    /// The URL is cut where a browser's `fetch` cuts it (the one splitter, `url::split`): a `\`
    /// ends the authority, so this URL reaches 127.0.0.1 and is a loopback URL; a host that only
    /// looks like loopback is not one.
    #[test]
    fn the_host_is_the_one_fetch_reaches() {
        let e = Endpoint::parse("http://127.0.0.1\\evil.example/mcp").unwrap();
        assert_eq!((e.host.as_str(), e.loopback), ("127.0.0.1", true));
        for url in [
            "http://127.0.0.1.evil.example/mcp",
            "http://127.0.0.1%2eevil.example/mcp",
            "http://evil.example\\127.0.0.1/mcp",
        ] {
            assert!(
                matches!(Endpoint::parse(url), Err(UrlError::Insecure { .. })),
                "{url}"
            );
        }
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
