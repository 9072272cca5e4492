//! The URLs of the authorization flow: well-known metadata locations (RFC 9728 §3.1, RFC 8414
//! §3.1, OpenID Connect Discovery 1.0 §4, in the MCP specification's order), the resource check
//! (RFC 9728 §3.3), query strings (crate `form_urlencoded`) and the https-unless-loopback rule.
//!
//! URLs are cut by the one splitter ([`crate::wire::url::split`]): every URL here is an absolute
//! `http(s)` URL and only its origin, path and query are needed. Identifiers (`resource`,
//! `issuer`) are compared and sent exactly as published, never normalised (RFC 9207 §2.4, RFC
//! 9728 §3.3).

use crate::wire::url::{self, is_loopback_host, UrlParts};

/// Cuts an absolute `http:`/`https:` URL; `None` for anything else, a URL with credentials,
/// spaces or control characters, or no host. The fragment is not read.
pub fn split(url: &str) -> Option<UrlParts<'_>> {
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    let parts = url::split(url);
    let scheme = parts.scheme?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    if parts.authority.is_empty() || parts.has_user_info() {
        return None;
    }
    Some(parts)
}

/// Whether requests to `url` may carry secrets: `https:`, or `http:` to a loopback host
/// (contract §9, the same rule as the MCP endpoint's).
pub fn secure(url: &str) -> bool {
    match split(url) {
        Some(p) if p.scheme.is_some_and(|s| s.eq_ignore_ascii_case("https")) => true,
        Some(p) => is_loopback_host(p.host()),
        None => false,
    }
}

/// RFC 9728 §3.1 / MCP: where to look for the protected resource metadata of `server_url` when
/// the challenge names none: the path-inserted location first, then the root.
pub fn prm_candidates(server_url: &str) -> Vec<String> {
    let Some(p) = split(server_url) else {
        return Vec::new();
    };
    let origin = p.origin();
    let path = p.path.trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    out
}

/// RFC 8414 §3.1 and OpenID Connect Discovery, in the MCP specification's order: for an issuer
/// with a path, OAuth path-inserted, OpenID path-inserted, OpenID path-appended; without a path,
/// OAuth then OpenID at the root.
pub fn as_metadata_candidates(issuer: &str) -> Vec<String> {
    let Some(p) = split(issuer) else {
        return Vec::new();
    };
    let origin = p.origin();
    let path = p.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// RFC 9728 §3.3 / MCP: whether the metadata's `resource` covers `server_url`: the same origin,
/// and the server's path equal to the resource's path or below it (on a `/` boundary).
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some(r), Some(s)) = (split(resource), split(server_url)) else {
        return false;
    };
    if r.origin_key() != s.origin_key() || r.query.is_some() {
        return false;
    }
    let rp = r.path.trim_end_matches('/');
    let sp = s.path;
    rp.is_empty() || sp == rp || sp.trim_end_matches('/') == rp || sp.starts_with(&format!("{rp}/"))
}

/// The server URL as a resource indicator when no metadata names one (2025-03-26 servers):
/// without fragment or query.
pub fn canonical_resource(server_url: &str) -> String {
    match split(server_url) {
        Some(p) => format!("{}{}", p.origin(), p.path),
        None => server_url.to_string(),
    }
}

/// `base` with `params` appended to its query (`?` or `&`), form-encoded.
pub fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        q.append_pair(k, v);
    }
    let q = q.finish();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{q}")
}

/// A form body (`application/x-www-form-urlencoded`).
pub fn form(params: &[(&str, &str)]) -> Vec<u8> {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        q.append_pair(k, v);
    }
    q.finish().into_bytes()
}

/// The decoded query parameters of `url`, in order (repeats kept).
pub fn query_pairs(url: &str) -> Vec<(String, String)> {
    let query = url::split(url).query.unwrap_or("");
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// RFC 6749 §2.3.1: `client_secret_basic` credentials, each form-encoded before base64.
pub fn basic_credentials(client_id: &str, secret: &str) -> String {
    use base64::Engine;
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let raw = format!("{}:{}", enc(client_id), enc(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}
