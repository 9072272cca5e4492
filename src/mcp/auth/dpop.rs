//! DPoP proofs (RFC 9449; MCP extension SEP-1932), sans-I/O: the JWS signing input of a proof for
//! one request, and the servers' nonce requests. The key and the signature are the driver's
//! (WebCrypto, ES256); the clock and the `jti` randomness are handed in.

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The public half of the connection's P-256 key, as JWK coordinates (base64url, RFC 7518 §6.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// `x`.
    pub x: String,
    /// `y`.
    pub y: String,
}

/// The signing input (`header.payload`) of a DPoP proof (RFC 9449 §4.2) for `method` `url`
/// (query and fragment dropped), issued at `iat` (seconds since the Unix epoch), with `jti`
/// (unique per proof); `access_token` adds `ath` (§4.3, resource requests), `nonce` the server's
/// nonce (§8, §9). Sign it with ES256 and append `.` + the base64url signature.
pub fn proof_input(
    key: &PublicKey,
    method: &str,
    url: &str,
    iat: u64,
    jti: &str,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let htu = url.split(['?', '#']).next().unwrap_or(url);
    let header = json!({"typ": "dpop+jwt", "alg": "ES256",
        "jwk": {"kty": "EC", "crv": "P-256", "x": key.x, "y": key.y}});
    let mut claims = json!({"jti": jti, "htm": method, "htu": htu, "iat": iat});
    if let Some(t) = access_token {
        claims["ath"] = json!(b64.encode(Sha256::digest(t.as_bytes())));
    }
    if let Some(n) = nonce {
        claims["nonce"] = json!(n);
    }
    format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    )
}

/// The nonce a server asks proofs to carry: its `DPoP-Nonce` header on an answer whose error is
/// `use_dpop_nonce` (a 400 JSON error of the token endpoint, §8; a 401 `WWW-Authenticate` of a
/// resource server, §9). `None` for any other answer.
pub fn nonce_asked(status: u16, headers: &[(String, String)], body: &[u8]) -> Option<String> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let nonce = header("dpop-nonce")
        .map(str::trim)
        .filter(|n| !n.is_empty())?;
    let in_body = || {
        serde_json::from_slice::<Value>(body)
            .ok()
            .is_some_and(|v| v["error"] == "use_dpop_nonce")
    };
    let in_challenge = || {
        header("www-authenticate")
            .and_then(super::challenge::parse)
            .is_some_and(|c| c.error.as_deref() == Some("use_dpop_nonce"))
    };
    ((status == 400 && in_body()) || (status == 401 && in_challenge())).then(|| nonce.to_string())
}
