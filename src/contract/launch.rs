//! §8 launch links: a page opened with `#tools=<url>&token=<token>` connects on load and removes
//! those parts from the address bar. This module parses the fragment and says what it becomes.

use crate::mcp::endpoint::Endpoint;

/// A parsed `#tools=` launch fragment (§8).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Launch {
    /// The tool server URL (percent-decoded), always `http:` or `https:`.
    pub url: String,
    /// The bearer token (percent-decoded), when the link carries one.
    pub token: Option<String>,
    /// What the address bar's hash should become: the other `&`-separated parts of the fragment,
    /// unchanged and in order, with a leading `#`; empty when nothing else was there.
    pub remaining_fragment: String,
}

/// §8: parse a location hash (with or without the leading `#`).
///
/// Returns `Ok(None)` when the fragment has no `tools=` part (nothing to do), `Ok(Some(..))` for a
/// usable link, and a one-line error for a link whose URL is not `http(s)://` or is not valid
/// percent-encoding. When `tools=` or `token=` repeats, the first one wins; every occurrence is
/// stripped so no token stays in the address bar.
pub fn parse_launch_fragment(hash: &str) -> Result<Option<Launch>, String> {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    let mut url: Option<String> = None;
    let mut token: Option<String> = None;
    let mut kept: Vec<&str> = Vec::new();
    for part in fragment.split('&') {
        if let Some(raw) = part.strip_prefix("tools=") {
            let decoded = percent_decode(raw).map_err(|e| format!("#tools=: {e}"))?;
            url.get_or_insert(decoded);
        } else if let Some(raw) = part.strip_prefix("token=") {
            let decoded = percent_decode(raw).map_err(|e| format!("#token=: {e}"))?;
            token.get_or_insert(decoded);
        } else if !part.is_empty() {
            kept.push(part);
        }
    }
    let Some(url) = url else {
        return Ok(None);
    };
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

/// Decodes `%XX` escapes strictly (and keeps `+` as is, as URL fragments do): every `%` must be
/// followed by exactly two ASCII hex digits (`%+1`, `%1`, `%zz` are refused, not passed through),
/// then the `percent-encoding` crate decodes and the result must be UTF-8.
fn percent_decode(raw: &str) -> Result<String, String> {
    let bytes = raw.as_bytes();
    for (i, _) in raw.match_indices('%') {
        let escape = bytes.get(i + 1..i + 3);
        if !escape.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
            return Err("a '%' is not followed by two hex digits".to_string());
        }
    }
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| "the decoded value is not UTF-8".to_string())
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
    fn a_bad_escape_in_the_token_is_refused_too() {
        for bad in ["%+1", "%2", "%g0", "abc%"] {
            let err = parse_launch_fragment(&format!("#tools=http://127.0.0.1/mcp&token={bad}"))
                .unwrap_err();
            assert!(err.starts_with("#token=: "), "{bad}: {err}");
        }
        let ok = parse_launch_fragment("#tools=http://127.0.0.1/mcp&token=%2B1%41+x")
            .unwrap()
            .unwrap();
        assert_eq!(ok.token.as_deref(), Some("+1A+x"));
    }

    #[test]
    fn refuses_other_schemes_and_bad_escapes() {
        for bad in [
            "#tools=javascript:alert(1)",
            "#tools=file:///etc/passwd",
            "#tools=http://",
            "#tools=%zz",
            "#tools=http%3A%2F%2Fa%2",
            // A sign is not a hex digit (`from_str_radix` would take `+1`).
            "#tools=http%3A%2F%2F127.0.0.1%+1",
            "#tools=http%3A%2F%2F127.0.0.1%+f/mcp",
            "#tools=http://127.0.0.1/%-1",
            "#tools=http://127.0.0.1/%1",
            "#tools=http://127.0.0.1/%c3%28",
        ] {
            let err = parse_launch_fragment(bad).unwrap_err();
            assert!(
                err.starts_with("#tools=") && !err.contains('\n'),
                "{bad}: {err}"
            );
        }
    }
}
