//! §8 launch links: a page opened with `#tools=<url>&token=<token>` connects on load and removes
//! those parts from the address bar. This module parses the fragment and says what it becomes.
//!
//! The fragment is read as Megane Builder reads it, with `URLSearchParams` semantics (the WHATWG
//! `application/x-www-form-urlencoded` parser, crate `form_urlencoded` from the `url` project):
//! keys and values are percent-decoded, `+` is a space, a `%` not followed by two hex digits
//! stays as it is, bytes that are not UTF-8 become U+FFFD, a repeated key counts once (the first),
//! and one leading `?` is dropped. So a link reads the same in the demo page, in Builder and in
//! the package's `megane` entry (whose `readLaunchParams` is `URLSearchParams` itself).

use crate::wire::endpoint::Endpoint;

/// A parsed `#tools=` launch fragment (§8).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Launch {
    /// The tool server URL (decoded), always `http:` or `https:`.
    pub url: String,
    /// The bearer token (decoded), when the link carries a non-empty one.
    pub token: Option<String>,
    /// What the address bar's hash should become: the other `&`-separated parts of the fragment,
    /// unchanged and in order, with a leading `#`; empty when nothing else was there.
    pub remaining_fragment: String,
}

/// §8: parse a location hash (with or without the leading `#`).
///
/// Returns `Ok(None)` when the fragment has no `tools` key (nothing to do), `Ok(Some(..))` for a
/// usable link, and a one-line error for a link whose first `tools` value is empty or not a URL
/// `connect` accepts ([`Endpoint::parse`]: `https://`, or `http://` to loopback; no `user:pass@`,
/// no query). When `tools` or `token` repeats, the first one counts (`URLSearchParams.get`); every
/// occurrence is stripped so no token stays in the address bar.
pub fn parse_launch_fragment(hash: &str) -> Result<Option<Launch>, String> {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    // `new URLSearchParams(string)` drops one leading `?`.
    let params = fragment.strip_prefix('?').unwrap_or(fragment);
    let mut url: Option<String> = None;
    let mut token: Option<String> = None;
    let mut kept: Vec<&str> = Vec::new();
    for part in params.split('&').filter(|p| !p.is_empty()) {
        // One `&`-free part is one name-value pair.
        let (key, value) = form_urlencoded::parse(part.as_bytes())
            .next()
            .unwrap_or_default();
        match &*key {
            "tools" => {
                url.get_or_insert_with(|| value.into_owned());
            }
            "token" => {
                token.get_or_insert_with(|| value.into_owned());
            }
            _ => kept.push(part),
        }
    }
    let Some(url) = url else {
        return Ok(None);
    };
    if url.is_empty() {
        return Err("#tools=: the server URL is empty".to_string());
    }
    check_http_url(&url)?;
    let remaining_fragment = if kept.is_empty() {
        String::new()
    } else {
        format!("#{}", kept.join("&"))
    };
    Ok(Some(Launch {
        url,
        token: token.filter(|t| !t.is_empty()),
        remaining_fragment,
    }))
}

/// Refuses a URL with spaces or control characters, then checks it as `connect` does
/// ([`Endpoint::parse`]: `https://`, or `http://` to loopback; no `user:pass@`, no query).
fn check_http_url(url: &str) -> Result<(), String> {
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("#tools=: the server URL contains spaces or control characters".to_string());
    }
    Endpoint::parse(url)
        .map(|_| ())
        .map_err(|e| format!("#tools=: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_url_and_token_and_keeps_other_parts() {
        let launch = parse_launch_fragment(
            "#view=3&tools=http%3A%2F%2F127.0.0.1%3A8765%2Fmcp&token=a%20b&x",
        )
        .unwrap()
        .unwrap();
        assert_eq!(launch.url, "http://127.0.0.1:8765/mcp");
        assert_eq!(launch.token.as_deref(), Some("a b"));
        assert_eq!(launch.remaining_fragment, "#view=3&x");
    }

    #[test]
    fn without_hash_and_without_token() {
        let launch = parse_launch_fragment("tools=https://tools.example.org/mcp")
            .unwrap()
            .unwrap();
        assert_eq!(launch.url, "https://tools.example.org/mcp");
        assert_eq!(launch.token, None);
        assert_eq!(launch.remaining_fragment, "");
    }

    #[test]
    fn a_secret_in_the_server_url_is_refused_with_the_token_field_hint() {
        for hash in [
            "#tools=http%3A%2F%2F127.0.0.1%3A8765%2Fmcp%3Ftoken%3Ds3cret",
            "#tools=http://127.0.0.1:8765/mcp?token=s3cret",
            "#tools=http%3A%2F%2Fme%3As3cret%40127.0.0.1%3A8765%2Fmcp",
        ] {
            let err = parse_launch_fragment(hash).unwrap_err();
            assert!(
                err.starts_with("#tools=: ") && err.contains("token field"),
                "{hash}: {err}"
            );
            assert!(!err.contains("s3cret"), "{hash}: {err}");
        }
    }

    #[test]
    fn no_tools_part_is_nothing_to_do() {
        assert_eq!(parse_launch_fragment("#section-2").unwrap(), None);
        assert_eq!(parse_launch_fragment("").unwrap(), None);
    }

    #[test]
    fn read_as_url_search_params_read_them() {
        // `+` is a space, a bad escape stays as it is, bytes that are not UTF-8 become U+FFFD,
        // keys are decoded too, the first of a repeated key counts, one leading `?` goes.
        let read = |hash: &str| parse_launch_fragment(hash).unwrap().unwrap();
        let link = read("#tools=http://127.0.0.1/mcp&token=%2B1%41+x%zz%ff");
        assert_eq!(link.token.as_deref(), Some("+1A x%zz\u{FFFD}"));
        let link = read("#to%6Ben=a&%74ools=https://x.org/mcp&tools=https://y.org/mcp&token=b");
        assert_eq!(
            (link.url.as_str(), link.token.as_deref()),
            ("https://x.org/mcp", Some("a"))
        );
        assert_eq!(
            read("#?tools=https://x.org/mcp&&v=1").remaining_fragment,
            "#v=1"
        );
        // The first value counts even when it is empty (Builder then has no link).
        assert!(parse_launch_fragment("#tools&tools=https://x.org/mcp").is_err());
    }

    #[test]
    fn refuses_other_schemes_and_bad_escapes() {
        for bad in [
            "#tools=javascript:alert(1)",
            "#tools=file:///etc/passwd",
            "#tools=http://",
            "#tools=%zz",
            "#tools=",
            "#tools&token=s",
            "#tools=http%3A%2F%2Fa%2",
            // `+` is a space, and a URL with a space is refused.
            "#tools=http%3A%2F%2F127.0.0.1+/mcp",
            "#tools=http://127.0.0.1/%c3%28+x",
        ] {
            let err = parse_launch_fragment(bad).unwrap_err();
            assert!(
                err.starts_with("#tools=") && !err.contains('\n'),
                "{bad}: {err}"
            );
        }
    }
}
