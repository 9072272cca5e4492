//! §8 launch links: a page opened with `#tools=<url>&token=<token>` connects on load and removes
//! those parts from the address bar. This module parses the fragment and says what it becomes.

use super::text::one_line_max;

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

/// Refuses anything but an absolute `http://` or `https://` URL with a host.
fn check_http_url(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => {
            if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
                Err("#tools=: the server URL contains spaces or control characters".to_string())
            } else {
                Ok(())
            }
        }
        _ => Err(format!(
            "#tools=: only http:// and https:// server URLs can be opened, not {}",
            one_line_max(url, 80)
        )),
    }
}

/// Decodes `%XX` escapes (and keeps `+` as is, as URL fragments do). Hand-written because it is
/// twelve lines and the crate otherwise needs no URL dependency.
fn percent_decode(raw: &str) -> Result<String, String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .ok_or("a '%' is not followed by two hex digits")?;
            let text = std::str::from_utf8(hex).map_err(|_| "a '%' escape is not hex")?;
            let value = u8::from_str_radix(text, 16).map_err(|_| "a '%' escape is not hex")?;
            out.push(value);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the decoded value is not UTF-8".to_string())
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
    fn no_tools_part_is_nothing_to_do() {
        assert_eq!(parse_launch_fragment("#section-2").unwrap(), None);
        assert_eq!(parse_launch_fragment("").unwrap(), None);
    }

    #[test]
    fn refuses_other_schemes_and_bad_escapes() {
        for bad in [
            "#tools=javascript:alert(1)",
            "#tools=file:///etc/passwd",
            "#tools=http://",
            "#tools=%zz",
            "#tools=http%3A%2F%2Fa%2",
        ] {
            let err = parse_launch_fragment(bad).unwrap_err();
            assert!(
                err.starts_with("#tools=") && !err.contains('\n'),
                "{bad}: {err}"
            );
        }
    }
}
