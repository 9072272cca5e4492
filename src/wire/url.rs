//! The one URL splitter: a URL (or any text a message may show as one) cut into scheme,
//! authority, path, query and fragment, borrowed from the text. The server URL check
//! ([`super::endpoint::Endpoint::parse`]), the shown form of a URL ([`super::endpoint::display_url`]),
//! a redirect's host ([`super::endpoint::redirect_host`]) and the authorization flow's URLs
//! (`mcp::auth::urls`) all read URLs through [`split`]; each keeps only its own rule on top.
//!
//! The cuts are the WHATWG URL parser's for `http:` and `https:` (special schemes): the authority
//! ends at the first `/`, `\`, `?` or `#`, the path at `?` or `#`, the query at `#`, so a URL is cut
//! where a browser's `fetch` would cut it. Hand-written rather than the `url` crate: only the cuts
//! are needed, never normalisation (identifiers are compared as published), and `url` would add
//! its IDNA tables (~100 KB gzip) to the package.

/// A URL cut into its parts, each as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// The scheme before `://` (RFC 3986 syntax: a letter, then letters, digits, `+`, `-`, `.`),
    /// as written; `None` when the text does not start with one.
    pub scheme: Option<&'a str>,
    /// `user:pass@host:port` as written: after `scheme://` or a leading `//`, else the text's lead
    /// up to its first `/`, `\`, `?` or `#` (a bare `host/path`; empty for `/path`).
    pub authority: &'a str,
    /// The path (`""` or starting with `/` or `\` after an authority).
    pub path: &'a str,
    /// The query, without `?`.
    pub query: Option<&'a str>,
    /// The fragment, without `#`.
    pub fragment: Option<&'a str>,
    /// Whether an authority was marked as one (`scheme://` or a leading `//`) rather than taken
    /// from a bare text's lead.
    pub marked: bool,
}

impl<'a> UrlParts<'a> {
    /// The authority without user info (`host:port`, after the last `@`).
    pub fn host_port(&self) -> &'a str {
        self.authority.rsplit('@').next().unwrap_or("")
    }

    /// Whether the authority carries user info (`user:pass@`).
    pub fn has_user_info(&self) -> bool {
        self.authority.contains('@')
    }

    /// The host without port: a bracketed IPv6 literal up to its `]` (the whole rest when the
    /// `]` is missing), else up to the first `:`.
    pub fn host(&self) -> &'a str {
        let authority = self.host_port();
        if authority.starts_with('[') {
            authority.split_inclusive(']').next().unwrap_or(authority)
        } else {
            authority.split(':').next().unwrap_or("")
        }
    }

    /// The port as written after the host's `:`, when there is a non-empty one.
    pub fn port(&self) -> Option<&'a str> {
        let authority = self.host_port();
        authority[self.host().len()..]
            .strip_prefix(':')
            .filter(|p| !p.is_empty())
    }

    /// The scheme (when written) and the authority: `scheme://authority`.
    pub fn origin(&self) -> String {
        match self.scheme {
            Some(scheme) => format!("{scheme}://{}", self.authority),
            None => self.authority.to_string(),
        }
    }

    /// [`UrlParts::origin`] lower-cased (scheme and host are case-insensitive): for comparisons
    /// only.
    pub fn origin_key(&self) -> String {
        self.origin().to_ascii_lowercase()
    }
}

/// Whether `text` is a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
pub fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// Cuts `text` (as it is: nothing trimmed or decoded) into its parts.
pub fn split(text: &str) -> UrlParts<'_> {
    let (scheme, rest, marked) = match text.find("://") {
        Some(i) if is_scheme(&text[..i]) => (Some(&text[..i]), &text[i + 3..], true),
        _ => match text.strip_prefix("//") {
            Some(rest) => (None, rest, true),
            None => (None, text, false),
        },
    };
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (tail, fragment) = match tail.split_once('#') {
        Some((t, f)) => (t, Some(f)),
        None => (tail, None),
    };
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    UrlParts {
        scheme,
        authority,
        path,
        query,
        fragment,
        marked,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cuts_are_a_browsers() {
        let p = split("https://me:pw@x.org:8443/a/b?c=1&d#frag?x");
        assert_eq!(
            (p.scheme, p.authority, p.path, p.query, p.fragment),
            (
                Some("https"),
                "me:pw@x.org:8443",
                "/a/b",
                Some("c=1&d"),
                Some("frag?x")
            )
        );
        assert_eq!(
            (p.host_port(), p.host(), p.port()),
            ("x.org:8443", "x.org", Some("8443"))
        );
        // `\` ends the authority as `/` does (WHATWG, special schemes).
        let p = split("http://127.0.0.1\\evil.org/mcp");
        assert_eq!((p.host(), p.path), ("127.0.0.1", "\\evil.org/mcp"));
        // A `?` or `#` in what would be the authority ends it.
        assert_eq!(split("http://h?x@y").host(), "h");
        assert_eq!(split("http://[::1]:9/m").host(), "[::1]");
        assert_eq!(split("http://[::1:9/m").host(), "[::1:9");
        assert_eq!(split("http://h:/m").port(), None);
    }

    #[test]
    fn text_without_a_scheme() {
        // A network-path reference.
        let p = split("//c.example/mcp");
        assert_eq!((p.scheme, p.authority, p.marked), (None, "c.example", true));
        // An absolute path: no authority.
        let p = split("/next?x");
        assert_eq!((p.authority, p.path, p.query), ("", "/next", Some("x")));
        // A bare `host/path`: its lead is the authority, not marked as one.
        let p = split("me:s3cret@x.org/mcp?q");
        assert_eq!((p.host_port(), p.path, p.marked), ("x.org", "/mcp", false));
        // `://` after something that is not a scheme is not the URL's start.
        let p = split("x.org/a://b@c");
        assert_eq!((p.scheme, p.authority, p.path), (None, "x.org", "/a://b@c"));
        assert_eq!(split("1http://x/").scheme, None);
        assert_eq!(split("javascript:alert(1)").path, "");
    }

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "LOCALHOST",
            "a.localhost",
            "127.0.0.1",
            "127.1.2.3",
            "[::1]",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "127.0.0.1.example.org",
            "192.168.1.2",
            "[::2]",
            "127.0.0.256",
            "127..0.1",
            "",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
