//! The sans-I/O authorization core (`mcp::auth`): challenge parsing, metadata locations, and the
//! flow's decisions fed with authorization-server answers. The same core passes every `auth/*`
//! scenario of the official conformance suite (tests/peers/run_conformance_suite.sh); these tests
//! pin the refusals and the request contents one by one, and the answers they feed are the
//! faults no real server produces on demand.
#![cfg(not(target_arch = "wasm32"))]

use base64::Engine;
use megane_builder_client::mcp::auth::{
    challenge, urls, AuthConfig, Authorizer, EnterpriseIdp, Flow, Step, Tokens, ENTROPY_BYTES,
    MAX_FLOWS_PER_OPERATION,
};
use megane_builder_client::mcp::{HttpRequest, McpError, Method};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const SERVER: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";
const CALLBACK: &str = "https://page.example.com/callback.html";
const ENTROPY: [u8; ENTROPY_BYTES] = [7; ENTROPY_BYTES];

fn config() -> AuthConfig {
    AuthConfig {
        redirect_uri: CALLBACK.into(),
        ..AuthConfig::default()
    }
}

fn as_meta(extra: Value) -> Value {
    let mut m = json!({
        "issuer": ISSUER,
        "authorization_endpoint": format!("{ISSUER}/authorize"),
        "token_endpoint": format!("{ISSUER}/token"),
        "registration_endpoint": format!("{ISSUER}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            m.as_object_mut().unwrap().remove(k);
        } else {
            m[k] = v.clone();
        }
    }
    m
}

fn send(flow: &mut Flow) -> HttpRequest {
    match flow.step() {
        Step::Send(r) => r,
        other => panic!("expected a request, got {other:?}"),
    }
}

fn answer(flow: &mut Flow, status: u16, body: &Value) {
    flow.handle_response(status, &[], body.to_string().as_bytes());
}

fn failed(flow: &mut Flow) -> String {
    match flow.step() {
        Step::Failed(e @ McpError::Authorization { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn query(url: &str, key: &str) -> Option<String> {
    urls::query_pairs(url)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

fn form(req: &HttpRequest) -> Vec<(String, String)> {
    urls::query_pairs(&format!("?{}", String::from_utf8_lossy(&req.body)))
}

/// Runs a flow from a 401 with `header` to the authorization URL (registering dynamically when
/// the flow asks to).
fn authorization_url(
    auth: &mut Authorizer,
    header: &str,
    prm: Value,
    meta: Value,
) -> (Flow, String) {
    let mut flow = auth.begin(401, Some(header), 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm, meta);
    match flow.step() {
        Step::Send(r) if r.url.ends_with("/register") => {
            answer(&mut flow, 201, &json!({"client_id": "dyn-client"}));
            match flow.step() {
                Step::Redirect(u) => (flow, u),
                other => panic!("{other:?}"),
            }
        }
        Step::Redirect(u) => (flow, u),
        other => panic!("{other:?}"),
    }
}

fn answer_metadata(flow: &mut Flow, prm: Value, meta: Value) {
    let r = send(flow);
    assert_eq!(r.method, Method::Get);
    assert!(r.url.contains("oauth-protected-resource"), "{}", r.url);
    answer(flow, 200, &prm);
    let r = send(flow);
    assert!(r.url.contains("/.well-known/"), "{}", r.url);
    answer(flow, 200, &meta);
}

fn prm(extra: Value) -> Value {
    let mut p = json!({"resource": SERVER, "authorization_servers": [ISSUER]});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn callback(url: &str, extra: &str) -> String {
    let state = query(url, "state").unwrap();
    format!("{CALLBACK}?code=the-code&state={state}{extra}")
}

#[test]
fn challenge_parsing() {
    let c = challenge::parse(
        r#"Basic realm="x", Bearer error="insufficient_scope", scope="mcp:read  mcp:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error_description="a \"quoted\" text""#,
    )
    .unwrap();
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert!(c.insufficient_scope());
    assert_eq!(
        c.scope,
        Some(vec!["mcp:read".to_string(), "mcp:write".to_string()])
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    );
    // Parameter names are case-insensitive; token values work unquoted.
    let c = challenge::parse("bearer ERROR=invalid_token").unwrap();
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    assert_eq!(challenge::parse("Basic realm=\"x\""), None);
    assert_eq!(
        challenge::parse("Bearer").unwrap(),
        challenge::Challenge::default()
    );
    // A truncated quoted string ends parsing without a panic.
    let c = challenge::parse("Bearer scope=\"a b").unwrap();
    assert_eq!(c.scope, None);
}

#[test]
fn metadata_locations_in_the_specification_order() {
    assert_eq!(
        urls::prm_candidates("https://mcp.example.com/public/mcp"),
        [
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        urls::prm_candidates("http://127.0.0.1:8765"),
        ["http://127.0.0.1:8765/.well-known/oauth-protected-resource"]
    );
    assert_eq!(
        urls::as_metadata_candidates("https://auth.example.com/tenant1"),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration"
        ]
    );
    assert_eq!(
        urls::as_metadata_candidates("https://auth.example.com"),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server",
            "https://auth.example.com/.well-known/openid-configuration"
        ]
    );
}

#[test]
fn resource_coverage_and_secure_urls() {
    assert!(urls::resource_covers("https://mcp.example.com/mcp", SERVER));
    assert!(urls::resource_covers("https://mcp.example.com", SERVER));
    assert!(urls::resource_covers("https://MCP.example.com/", SERVER));
    assert!(!urls::resource_covers(
        "https://evil.example.com/mcp",
        SERVER
    ));
    assert!(!urls::resource_covers("https://mcp.example.com/mc", SERVER));
    assert!(!urls::resource_covers("http://mcp.example.com/mcp", SERVER));
    assert!(urls::secure("https://a.example/x"));
    assert!(urls::secure("http://localhost:3000/cb"));
    assert!(urls::secure("http://127.0.0.1/cb"));
    assert!(!urls::secure("http://auth.example.com/token"));
    assert!(!urls::secure("https://user:pw@auth.example.com/"));
    assert!(!urls::secure("javascript:alert(1)"));
}

#[test]
fn full_flow_with_dynamic_registration_pkce_resource_and_scopes() {
    let mut auth = Authorizer::new(SERVER, config());
    let header = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:basic""#;
    let (mut flow, url) = authorization_url(
        &mut auth,
        header,
        prm(json!({"scopes_supported": ["mcp:other"]})),
        as_meta(json!({"scopes_supported": ["mcp:basic", "offline_access"]})),
    );
    assert!(url.starts_with(&format!("{ISSUER}/authorize?")));
    assert_eq!(query(&url, "response_type").as_deref(), Some("code"));
    assert_eq!(query(&url, "client_id").as_deref(), Some("dyn-client"));
    assert_eq!(query(&url, "redirect_uri").as_deref(), Some(CALLBACK));
    assert_eq!(
        query(&url, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert_eq!(query(&url, "resource").as_deref(), Some(SERVER));
    // The challenge's scope (not the metadata's), and offline_access because the server lists it.
    assert_eq!(
        query(&url, "scope").as_deref(),
        Some("mcp:basic offline_access")
    );
    let state = query(&url, "state").unwrap();
    assert!(state.len() >= 20);
    flow.handle_callback(&callback(&url, &format!("&iss={}", urlenc(ISSUER))));
    let token_req = send(&mut flow);
    assert_eq!(token_req.url, format!("{ISSUER}/token"));
    assert_eq!(token_req.header("Authorization"), None);
    let f = form(&token_req);
    let get = |k: &str| f.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
    assert_eq!(get("grant_type").as_deref(), Some("authorization_code"));
    assert_eq!(get("code").as_deref(), Some("the-code"));
    assert_eq!(get("client_id").as_deref(), Some("dyn-client"));
    assert_eq!(get("resource").as_deref(), Some(SERVER));
    let verifier = get("code_verifier").unwrap();
    let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    assert_eq!(query(&url, "code_challenge"), Some(expected));
    answer(
        &mut flow,
        200,
        &json!({"access_token": "AT-1", "token_type": "bearer", "refresh_token": "RT-1"}),
    );
    let Step::Done(tokens) = flow.step() else {
        panic!()
    };
    assert_eq!(tokens.access_token, "AT-1");
    assert!(!format!("{tokens:?}").contains("AT-1"));
    auth.complete(*tokens);
    assert_eq!(auth.access_token(), Some("AT-1"));
}

fn urlenc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[test]
fn refusals_are_one_line_and_name_the_problem() {
    let header = "Bearer scope=\"s\"";
    // A resource that is not this server: refused before any authorization server is contacted.
    let mut auth = Authorizer::new(SERVER, config());
    let mut flow = auth.begin(401, Some(header), 0, &ENTROPY).unwrap();
    send(&mut flow);
    answer(
        &mut flow,
        200,
        &json!({"resource": "https://evil.example.com/mcp", "authorization_servers": [ISSUER]}),
    );
    let m = failed(&mut flow);
    assert!(
        m.contains("another resource") && m.contains("evil.example.com"),
        "{m}"
    );
    // Authorization server metadata Builder refuses, and what the refusal names.
    for (metadata, named) in [
        (
            json!({"code_challenge_methods_supported": ["plain"]}),
            "PKCE with S256",
        ),
        (
            json!({"issuer": "https://attacker.example.com"}),
            "RFC 8414",
        ),
        (
            json!({"token_endpoint": "http://auth.example.com/token"}),
            "not https",
        ),
        (
            json!({"registration_endpoint": null}),
            "configure a client ID",
        ),
    ] {
        let mut flow = auth.begin(401, Some(header), 0, &ENTROPY).unwrap();
        send(&mut flow);
        answer(&mut flow, 200, &prm(json!({})));
        send(&mut flow);
        answer(&mut flow, 200, &as_meta(metadata));
        let m = failed(&mut flow);
        assert!(m.contains(named), "{m}");
    }
}

/// Makes the callback URL from the authorization URL.
type Callback = Box<dyn Fn(&str) -> String>;

#[test]
fn callback_checks_state_iss_and_errors() {
    let mut auth = Authorizer::new(SERVER, config());
    let meta = as_meta(json!({"authorization_response_iss_parameter_supported": true}));
    let cases: Vec<(Callback, &str)> = vec![
        (
            Box::new(|u| callback(u, "&iss=https%3A%2F%2Fevil.example.com")),
            "RFC 9207",
        ),
        (
            Box::new(|u| callback(u, "&iss=https%3A%2F%2Fauth.example.com%2F")),
            "RFC 9207",
        ),
        (Box::new(|u| callback(u, "")), "lacks the issuer"),
        (
            Box::new(|_| format!("{CALLBACK}?code=c&state=forged&iss={}", urlenc(ISSUER))),
            "state mismatch",
        ),
        (
            Box::new(|u| format!("{}&state=again", callback(u, ""))),
            "repeats a parameter",
        ),
        (
            Box::new(|u| callback(u, "&error=access_denied&error_description=no%0Away")),
            "access_denied: no",
        ),
        (
            Box::new(|u| callback(u, "").replace(CALLBACK, "https://other.example.com/cb")),
            "other than this page",
        ),
    ];
    for (make, expected) in cases {
        let (mut flow, url) = authorization_url(&mut auth, "Bearer", prm(json!({})), meta.clone());
        flow.handle_callback(&make(&url));
        let m = failed(&mut flow);
        assert!(m.contains(expected), "{m} (expected {expected})");
        assert!(!m.contains('\n'));
    }
    // Not advertised and absent: accepted.
    let (mut flow, url) =
        authorization_url(&mut auth, "Bearer", prm(json!({})), as_meta(json!({})));
    flow.handle_callback(&callback(&url, ""));
    assert!(matches!(flow.step(), Step::Send(r) if r.url.ends_with("/token")));
}

#[test]
fn client_identity_preregistered_cimd_and_secret_methods() {
    // Pre-registered with a secret, server takes client_secret_post only.
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            client_id: Some("pre id".into()),
            client_secret: Some("s3cret:x".into()),
            ..config()
        },
    );
    let meta = as_meta(
        json!({"token_endpoint_auth_methods_supported": ["client_secret_post"], "registration_endpoint": null}),
    );
    let (mut flow, url) = authorization_url(&mut auth, "Bearer", prm(json!({})), meta);
    assert_eq!(query(&url, "client_id").as_deref(), Some("pre id"));
    flow.handle_callback(&callback(&url, ""));
    let r = send(&mut flow);
    let f = form(&r);
    assert!(f.contains(&("client_secret".into(), "s3cret:x".into())));
    assert_eq!(r.header("Authorization"), None);
    // The same with client_secret_basic: form-encoded id and secret, base64 (RFC 6749 §2.3.1).
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            client_id: Some("pre id".into()),
            client_secret: Some("s3cret:x".into()),
            ..config()
        },
    );
    let meta = as_meta(json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}));
    let (mut flow, url) = authorization_url(&mut auth, "Bearer", prm(json!({})), meta);
    flow.handle_callback(&callback(&url, ""));
    let r = send(&mut flow);
    let expected = base64::engine::general_purpose::STANDARD.encode("pre+id:s3cret%3Ax");
    assert_eq!(
        r.header("Authorization"),
        Some(format!("Basic {expected}").as_str())
    );
    assert!(!String::from_utf8_lossy(&r.body).contains("s3cret"));
    // A client ID metadata document where the server supports them (no registration request).
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            client_metadata_url: Some("https://page.example.com/client.json".into()),
            ..config()
        },
    );
    let meta = as_meta(json!({"client_id_metadata_document_supported": true}));
    let (_, url) = authorization_url(&mut auth, "Bearer", prm(json!({})), meta);
    assert_eq!(
        query(&url, "client_id").as_deref(),
        Some("https://page.example.com/client.json")
    );
}

fn signed_in(auth: &mut Authorizer, scope: &str, refresh: Option<&str>) -> Tokens {
    let (mut flow, url) = authorization_url(
        auth,
        &format!("Bearer scope=\"{scope}\""),
        prm(json!({})),
        as_meta(json!({})),
    );
    flow.handle_callback(&callback(&url, ""));
    send(&mut flow);
    let mut t = json!({"access_token": "AT", "token_type": "Bearer"});
    if let Some(r) = refresh {
        t["refresh_token"] = json!(r);
    }
    answer(&mut flow, 200, &t);
    let Step::Done(tokens) = flow.step() else {
        panic!()
    };
    auth.complete(*tokens.clone());
    *tokens
}

#[test]
fn step_up_unites_scopes_and_stops_at_the_limit() {
    let mut auth = Authorizer::new(SERVER, config());
    signed_in(&mut auth, "mcp:basic", None);
    let header = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
    let mut flow = auth.begin(403, Some(header), 1, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), as_meta(json!({})));
    // The registration made for this issuer is reused: straight to the authorization URL.
    let Step::Redirect(url) = flow.step() else {
        panic!()
    };
    assert_eq!(query(&url, "client_id").as_deref(), Some("dyn-client"));
    assert_eq!(query(&url, "scope").as_deref(), Some("mcp:basic mcp:write"));
    let e = auth
        .begin(403, Some(header), MAX_FLOWS_PER_OPERATION, &ENTROPY)
        .unwrap_err();
    assert!(e.to_string().contains("mcp:write"), "{e}");
}

#[test]
fn refresh_first_then_a_new_sign_in_when_refused() {
    let mut auth = Authorizer::new(SERVER, config());
    signed_in(&mut auth, "mcp:basic", Some("RT-secret"));
    let mut flow = auth
        .begin(401, Some("Bearer error=\"invalid_token\""), 0, &ENTROPY)
        .unwrap();
    answer_metadata(&mut flow, prm(json!({})), as_meta(json!({})));
    let r = send(&mut flow);
    let f = form(&r);
    assert!(f.contains(&("grant_type".into(), "refresh_token".into())));
    assert!(f.contains(&("refresh_token".into(), "RT-secret".into())));
    assert!(f.contains(&("resource".into(), SERVER.into())));
    // Refused (with the refresh token echoed): a new authorization, and no secret in any message.
    answer(
        &mut flow,
        400,
        &json!({"error": "invalid_grant", "error_description": "RT-secret expired"}),
    );
    let Step::Redirect(url) = flow.step() else {
        panic!()
    };
    flow.handle_callback(&callback(&url, ""));
    send(&mut flow);
    answer(
        &mut flow,
        400,
        &json!({"error": "invalid_grant", "error_description": "code for RT-secret"}),
    );
    let m = failed(&mut flow);
    assert!(
        m.contains("invalid_grant") && !m.contains("RT-secret"),
        "{m}"
    );
    // Accepted refresh keeps the refresh token when none is returned.
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), as_meta(json!({})));
    send(&mut flow);
    answer(
        &mut flow,
        200,
        &json!({"access_token": "AT-2", "token_type": "Bearer"}),
    );
    let Step::Done(t) = flow.step() else { panic!() };
    assert_eq!(t.access_token, "AT-2");
    assert_eq!(t.refresh_token.as_deref(), Some("RT-secret"));
}

#[test]
fn a_dpop_token_type_is_refused() {
    let mut auth = Authorizer::new(SERVER, config());
    let (mut flow, url) =
        authorization_url(&mut auth, "Bearer", prm(json!({})), as_meta(json!({})));
    flow.handle_callback(&callback(&url, ""));
    send(&mut flow);
    answer(
        &mut flow,
        200,
        &json!({"access_token": "AT", "token_type": "DPoP"}),
    );
    assert!(failed(&mut flow).contains("only Bearer"));
}

#[test]
fn dpop_where_the_server_asks_for_it() {
    use megane_builder_client::mcp::auth::dpop;
    let c = challenge::parse(r#"DPoP error="use_dpop_nonce", resource_metadata="https://x/prm""#)
        .unwrap();
    assert!(c.dpop && c.error.as_deref() == Some("use_dpop_nonce"));
    assert!(!challenge::parse("Bearer").unwrap().dpop);
    // A DPoP challenge: token requests carry a proof, the AS's nonce is honoured once, and the
    // DPoP token is accepted as such.
    let mut auth = Authorizer::new(SERVER, config());
    let meta = as_meta(json!({"dpop_signing_alg_values_supported": ["ES256"]}));
    let (mut flow, url) = authorization_url(&mut auth, "DPoP", prm(json!({})), meta.clone());
    assert_eq!(flow.dpop_proof(), None, "no proof on the authorization URL");
    flow.handle_callback(&callback(&url, ""));
    let first = send(&mut flow);
    assert_eq!(flow.dpop_proof(), Some(None));
    let nonce_asked = [("DPoP-Nonce".to_string(), "n-1".to_string())];
    flow.handle_response(400, &nonce_asked, br#"{"error":"use_dpop_nonce"}"#);
    let again = send(&mut flow);
    assert_eq!(again.body, first.body, "the same token request, once more");
    assert_eq!(flow.dpop_proof(), Some(Some("n-1")));
    // A second nonce request is an answer, not a loop.
    flow.handle_response(400, &nonce_asked, br#"{"error":"use_dpop_nonce"}"#);
    assert!(failed(&mut flow).contains("use_dpop_nonce"));
    let (mut flow, url) = authorization_url(&mut auth, "DPoP", prm(json!({})), meta);
    flow.handle_callback(&callback(&url, ""));
    send(&mut flow);
    answer(
        &mut flow,
        200,
        &json!({"access_token": "AT", "token_type": "DPoP"}),
    );
    assert!(matches!(flow.step(), Step::Done(t) if t.dpop));
    // Metadata that requires bound tokens, with an AS that cannot take ES256 proofs: refused.
    let mut auth = Authorizer::new(SERVER, config());
    let mut flow = auth.begin(401, Some("Bearer"), 0, &ENTROPY).unwrap();
    answer_metadata(
        &mut flow,
        prm(json!({"dpop_bound_access_tokens_required": true})),
        as_meta(json!({"dpop_signing_alg_values_supported": ["EdDSA"]})),
    );
    assert!(failed(&mut flow).contains("does not list ES256"));
    // The proof's signing input (RFC 9449 §4.2): header with the public JWK, htu without the
    // query, ath = SHA-256 of the token, the nonce.
    let key = dpop::PublicKey {
        x: "X".into(),
        y: "Y".into(),
    };
    let input = dpop::proof_input(
        &key,
        "POST",
        "https://mcp.example.com/mcp?a=1#f",
        1_800_000_000,
        "j1",
        Some("AT"),
        Some("n-2"),
    );
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (h, c) = input.split_once('.').unwrap();
    let header: Value = serde_json::from_slice(&b64.decode(h).unwrap()).unwrap();
    let claims: Value = serde_json::from_slice(&b64.decode(c).unwrap()).unwrap();
    assert_eq!(
        header,
        json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": {"kty": "EC", "crv": "P-256", "x": "X", "y": "Y"}})
    );
    assert_eq!(
        claims,
        json!({"jti": "j1", "htm": "POST", "htu": "https://mcp.example.com/mcp", "iat": 1_800_000_000u64,
            "ath": b64.encode(Sha256::digest(b"AT")), "nonce": "n-2"})
    );
    // Nonce requests: a 400 use_dpop_nonce (token endpoint) or a 401 DPoP challenge (resource).
    let h401 = [
        (
            "WWW-Authenticate".to_string(),
            r#"DPoP error="use_dpop_nonce""#.to_string(),
        ),
        ("dpop-nonce".to_string(), "n-3".to_string()),
    ];
    assert_eq!(dpop::nonce_asked(401, &h401, b"").as_deref(), Some("n-3"));
    assert_eq!(dpop::nonce_asked(400, &h401, b"{}"), None);
    assert_eq!(dpop::nonce_asked(401, &h401[..1], b""), None);
}

#[test]
fn client_credentials_when_the_server_offers_no_user_sign_in() {
    let meta = as_meta(json!({
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "registration_endpoint": null,
    }));
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            client_id: Some("machine".into()),
            client_secret: Some("secret".into()),
            ..config()
        },
    );
    let mut flow = auth
        .begin(401, Some("Bearer scope=\"mcp:read\""), 0, &ENTROPY)
        .unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta.clone());
    // No redirect: the token request at once, with the client's credentials, resource and scope.
    let r = send(&mut flow);
    assert!(r.url.ends_with("/token"));
    let f = form(&r);
    assert!(f.contains(&("grant_type".into(), "client_credentials".into())));
    assert!(f.contains(&("resource".into(), SERVER.into())));
    assert!(f.contains(&("scope".into(), "mcp:read".into())));
    assert!(r
        .header("Authorization")
        .is_some_and(|h| h.starts_with("Basic ")));
    // Without a secret there is no way in: refused in one line.
    let mut auth = Authorizer::new(SERVER, config());
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    let meta = as_meta(json!({"grant_types_supported": ["client_credentials"]}));
    answer_metadata(&mut flow, prm(json!({})), meta);
    let m = match flow.step() {
        Step::Send(r) if r.url.ends_with("/register") => {
            answer(&mut flow, 201, &json!({"client_id": "public"}));
            failed(&mut flow)
        }
        _ => panic!(),
    };
    assert!(m.contains("neither a secret"), "{m}");
}

#[test]
fn private_key_jwt_client_assertion_signed_by_the_host() {
    let meta = as_meta(json!({
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        "registration_endpoint": null,
    }));
    let keyed = AuthConfig {
        client_id: Some("machine".into()),
        client_key: true,
        ..config()
    };
    let mut auth = Authorizer::new(SERVER, keyed.clone());
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta.clone());
    // Before the token request, the flow asks the host to sign (the key never enters the core).
    assert!(matches!(flow.step(), Step::Sign));
    let input = flow.signing_input(1_800_000_000);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (h, c) = input.split_once('.').unwrap();
    let header: Value = serde_json::from_slice(&b64.decode(h).unwrap()).unwrap();
    let claims: Value = serde_json::from_slice(&b64.decode(c).unwrap()).unwrap();
    assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
    assert_eq!(claims["iss"], "machine");
    assert_eq!(claims["sub"], "machine");
    assert_eq!(claims["aud"], ISSUER);
    assert_eq!(claims["iat"], 1_800_000_000u64);
    assert_eq!(claims["exp"], 1_800_000_300u64);
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
    flow.handle_signature(&[9u8; 64]);
    let r = send(&mut flow);
    let f = form(&r);
    assert!(f.contains(&("grant_type".into(), "client_credentials".into())));
    assert!(f.contains(&(
        "client_assertion_type".into(),
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into()
    )));
    let signed = format!("{input}.{}", b64.encode([9u8; 64]));
    assert!(f.contains(&("client_assertion".into(), signed)));
    assert_eq!(r.header("Authorization"), None);
    // Another flow has another jti.
    let mut other = Authorizer::new(SERVER, keyed.clone())
        .begin(401, None, 0, &[8; ENTROPY_BYTES])
        .unwrap();
    answer_metadata(&mut other, prm(json!({})), meta.clone());
    assert!(matches!(other.step(), Step::Sign));
    let other_claims = other.signing_input(1_800_000_000);
    assert_ne!(other_claims, input);
    // A signature that is not ES256's 64 bytes (a DER one, a wrong key type) is refused in one line.
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta);
    assert!(matches!(flow.step(), Step::Sign));
    flow.signing_input(1_800_000_000);
    flow.handle_signature(&[1u8; 70]);
    let m = failed(&mut flow);
    assert!(m.contains("70-byte signature") && !m.contains('\n'), "{m}");
    // Where the server does not list private_key_jwt, the key is not used (no secret: refused).
    let mut auth = Authorizer::new(SERVER, keyed);
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    let meta = as_meta(json!({"grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"], "registration_endpoint": null}));
    answer_metadata(&mut flow, prm(json!({})), meta);
    assert!(failed(&mut flow).contains("neither a secret or key"));
}

#[test]
fn enterprise_managed_token_exchange_then_jwt_bearer() {
    let meta = as_meta(json!({
        "grant_types_supported": [megane_builder_client::mcp::auth::JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "registration_endpoint": null,
    }));
    let idp = EnterpriseIdp {
        token_endpoint: "https://idp.example.com/token".into(),
        id_token: "eyJ.id.token".into(),
        client_id: Some("idp-client".into()),
        client_secret: None,
    };
    let keyed = AuthConfig {
        client_id: Some("mcp-client".into()),
        client_secret: Some("mcp-secret".into()),
        enterprise: Some(idp.clone()),
        ..config()
    };
    let mut auth = Authorizer::new(SERVER, keyed.clone());
    let mut flow = auth
        .begin(401, Some("Bearer scope=\"mcp:read\""), 0, &ENTROPY)
        .unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta.clone());
    // First the identity provider: ID token → ID-JAG for this authorization server and resource.
    let r = send(&mut flow);
    assert_eq!(r.url, "https://idp.example.com/token");
    let f = form(&r);
    for (k, v) in [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        ("audience", ISSUER),
        ("resource", SERVER),
        ("subject_token", "eyJ.id.token"),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        ("client_id", "idp-client"),
        ("scope", "mcp:read"),
    ] {
        assert!(f.contains(&(k.into(), v.into())), "{k} in {f:?}");
    }
    assert_eq!(
        r.header("Authorization"),
        None,
        "the MCP client's secret never goes to the IdP"
    );
    answer(
        &mut flow,
        200,
        &json!({"access_token": "eyJ.jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
    );
    // Then this authorization server: jwt-bearer with the ID-JAG and the client's own credentials.
    let r = send(&mut flow);
    assert_eq!(r.url, format!("{ISSUER}/token"));
    let f = form(&r);
    assert!(f.contains(&(
        "grant_type".into(),
        "urn:ietf:params:oauth:grant-type:jwt-bearer".into()
    )));
    assert!(f.contains(&("assertion".into(), "eyJ.jag".into())));
    assert!(f.contains(&("resource".into(), SERVER.into())));
    assert!(r
        .header("Authorization")
        .is_some_and(|h| h.starts_with("Basic ")));
    answer(
        &mut flow,
        200,
        &json!({"access_token": "AT", "token_type": "Bearer"}),
    );
    assert!(matches!(flow.step(), Step::Done(t) if t.access_token == "AT"));
    // An answer that is not an ID-JAG is refused in one line, without the ID token in it.
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta.clone());
    send(&mut flow);
    answer(
        &mut flow,
        400,
        &json!({"error": "invalid_grant", "error_description": "bad eyJ.id.token"}),
    );
    let m = failed(&mut flow);
    assert!(
        m.contains("no identity assertion grant") && m.contains("invalid_grant"),
        "{m}"
    );
    assert!(!m.contains("eyJ.id.token"), "{m}");
    // An identity provider over plain http (not loopback) never gets the ID token.
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            enterprise: Some(EnterpriseIdp {
                token_endpoint: "http://idp.example.com/token".into(),
                ..idp
            }),
            ..keyed
        },
    );
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta);
    assert!(failed(&mut flow).contains("not https"));
}

#[test]
fn workload_identity_assertion_without_user_sign_in() {
    let meta = as_meta(json!({
        "grant_types_supported": [megane_builder_client::mcp::auth::JWT_BEARER],
        "registration_endpoint": null,
    }));
    let mut auth = Authorizer::new(
        SERVER,
        AuthConfig {
            client_id: Some("workload".into()),
            assertion: Some("eyJ.workload.jwt".into()),
            ..config()
        },
    );
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    answer_metadata(&mut flow, prm(json!({})), meta);
    let r = send(&mut flow);
    let f = form(&r);
    assert!(f.contains(&(
        "grant_type".into(),
        "urn:ietf:params:oauth:grant-type:jwt-bearer".into()
    )));
    assert!(f.contains(&("assertion".into(), "eyJ.workload.jwt".into())));
    // Refused: surfaced once, without the assertion (a secret) in the message.
    answer(
        &mut flow,
        400,
        &json!({"error": "invalid_grant", "error_description": "eyJ.workload.jwt is expired"}),
    );
    let m = failed(&mut flow);
    assert!(
        m.contains("invalid_grant") && !m.contains("eyJ.workload.jwt"),
        "{m}"
    );
}

#[test]
fn a_metadata_fetch_that_breaks_is_tried_twice_then_skipped() {
    let mut auth = Authorizer::new(SERVER, config());
    let mut flow = auth.begin(401, None, 0, &ENTROPY).unwrap();
    let first = send(&mut flow).url;
    flow.handle_network_error("other side closed");
    assert_eq!(send(&mut flow).url, first);
    flow.handle_network_error("other side closed");
    assert_eq!(
        send(&mut flow).url,
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    );
    answer(&mut flow, 200, &prm(json!({})));
    for _ in 0..4 {
        send(&mut flow);
        flow.handle_network_error("connection refused");
    }
    // Both AS locations failed twice each: one line that says why.
    let m = failed(&mut flow);
    assert!(
        m.contains("publishes no metadata") && m.contains("connection refused"),
        "{m}"
    );
}

#[test]
fn a_token_request_that_gets_no_answer_is_sent_once_more_then_refused() {
    let mut auth = Authorizer::new(SERVER, config());
    let (mut flow, url) =
        authorization_url(&mut auth, "Bearer", prm(json!({})), as_meta(json!({})));
    flow.handle_callback(&callback(&url, ""));
    let first = send(&mut flow);
    flow.handle_network_error("other side closed");
    let again = send(&mut flow);
    assert_eq!(again.url, first.url);
    assert_eq!(again.body, first.body);
    flow.handle_network_error("other side closed");
    let m = failed(&mut flow);
    assert!(
        m.contains("could not be reached (other side closed)"),
        "{m}"
    );
}

// ----- the sign-in and retry policy of a connection (`mcp::signin`) ----------------------------

mod signin {
    use super::*;
    use megane_builder_client::mcp::auth::Registration;
    use megane_builder_client::mcp::signin::{
        assertion_input, callback_answered, flow_proof, AfterFailure, SignIn, Tries,
    };
    use megane_builder_client::mcp::{Client, Config, Event, ExchangeId};

    /// A legacy-era client of [`SERVER`] with `token`.
    fn client(token: Option<&str>) -> (Client, Config) {
        let mut settings = Config::new(SERVER);
        settings.protocol = megane_builder_client::mcp::ProtocolChoice::Legacy;
        settings.token = token.map(str::to_string);
        (Client::new(settings.clone()).unwrap(), settings)
    }

    /// The request the client sends next.
    fn sent(client: &mut Client) -> (ExchangeId, HttpRequest) {
        loop {
            match client.poll_event() {
                Some(Event::SendRequest { exchange, request }) => return (exchange, request),
                Some(_) => {}
                None => panic!("nothing sent"),
            }
        }
    }

    /// Connects and answers the handshake with `status` and `headers`; the connect's failure.
    fn refused(client: &mut Client, status: u16, headers: &[(&str, &str)]) -> McpError {
        client.connect(0);
        let (exchange, _) = sent(client);
        let head: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        client.handle_head(exchange, status, &head, 0);
        client.handle_end(exchange, 0);
        loop {
            match client.poll_event() {
                Some(Event::Failed { error, .. }) => return error,
                Some(_) => {}
                None => panic!("the connect did not fail"),
            }
        }
    }

    fn entropy() -> Result<[u8; ENTROPY_BYTES], McpError> {
        Ok(ENTROPY)
    }

    fn no_entropy() -> Result<[u8; ENTROPY_BYTES], McpError> {
        panic!("no flow starts here, so no randomness is asked for")
    }

    /// Answers every step of a flow as a well-behaved authorization server and a user who agrees
    /// at once would, to its tokens.
    fn run_flow(flow: &mut Flow) -> Tokens {
        loop {
            match flow.step() {
                Step::Send(r) if r.url.contains("oauth-protected-resource") => {
                    answer(flow, 200, &prm(json!({})))
                }
                Step::Send(r) if r.url.contains("/.well-known/") => {
                    answer(flow, 200, &as_meta(json!({})))
                }
                Step::Send(r) if r.url.ends_with("/register") => {
                    answer(flow, 201, &json!({"client_id": "dyn-client"}))
                }
                Step::Send(r) if r.url.ends_with("/token") => answer(
                    flow,
                    200,
                    &json!({"access_token": "AT", "token_type": "Bearer"}),
                ),
                Step::Redirect(url) => flow.handle_callback(&callback(&url, "")),
                Step::Done(tokens) => return *tokens,
                other => panic!("unexpected step {other:?}"),
            }
        }
    }

    #[test]
    fn one_sign_in_at_a_time_the_others_wait_and_a_refused_handshake_gets_a_fresh_client() {
        let (mut c, mut settings) = client(None);
        let mut signin = SignIn::new();
        signin.set_authorizer(Authorizer::new(SERVER, config()), &mut c, &mut settings);
        let error = refused(&mut c, 401, &[("WWW-Authenticate", "Bearer")]);
        assert!(matches!(
            error,
            McpError::Unauthorized { token_given: false }
        ));
        let mut first = Tries::default();
        let AfterFailure::SignIn(mut flow) = signin
            .after_failure(&mut first, &mut c, &error, entropy)
            .unwrap()
        else {
            panic!("the first refused operation signs in")
        };
        assert!(signin.is_running());
        assert_eq!(
            c.peek_auth_challenge(),
            None,
            "the challenge went to the flow"
        );
        // Another operation refused while the sign-in runs waits for it and then runs again.
        let mut second = Tries::default();
        assert!(matches!(
            signin.after_failure(&mut second, &mut c, &error, no_entropy),
            Ok(AfterFailure::WaitThenRetry)
        ));
        // One that has used its sign-ins waits too, then reports its refusal.
        assert!(matches!(
            signin.after_failure(&mut second, &mut c, &error, no_entropy),
            Ok(AfterFailure::WaitThenFail)
        ));
        let tokens = run_flow(&mut flow);
        let signed = signin
            .finish(Ok(tokens), &mut first, &mut c, &settings)
            .unwrap();
        assert!(!signin.is_running());
        assert!(
            signed.new_client,
            "the handshake was refused: a fresh client"
        );
        let stored: Tokens = serde_json::from_str(signed.tokens_json.as_deref().unwrap()).unwrap();
        assert_eq!(stored.access_token, "AT");
        assert_eq!(
            signin.authorizer().and_then(Authorizer::access_token),
            Some("AT")
        );
        c.connect(0);
        let (_, request) = sent(&mut c);
        assert_eq!(request.header("Authorization"), Some("Bearer AT"));
    }

    #[test]
    fn an_operation_signs_in_at_most_twice_and_a_failed_sign_in_ends_it() {
        let (mut c, mut settings) = client(None);
        let mut signin = SignIn::new();
        signin.set_authorizer(Authorizer::new(SERVER, config()), &mut c, &mut settings);
        let mut tries = Tries::default();
        for round in 0..MAX_FLOWS_PER_OPERATION {
            let error = refused(&mut c, 401, &[("WWW-Authenticate", "Bearer")]);
            let Ok(AfterFailure::SignIn(mut flow)) =
                signin.after_failure(&mut tries, &mut c, &error, entropy)
            else {
                panic!("sign-in {round}")
            };
            let tokens = run_flow(&mut flow);
            signin
                .finish(Ok(tokens), &mut tries, &mut c, &settings)
                .unwrap();
        }
        // The server still refuses the token it just issued: no third sign-in window.
        let error = refused(&mut c, 401, &[("WWW-Authenticate", "Bearer")]);
        let refusal = signin
            .after_failure(&mut tries, &mut c, &error, entropy)
            .unwrap_err();
        assert!(
            refusal.to_string().contains("still refuses the token"),
            "{refusal}"
        );
        assert!(!signin.is_running());
        // A sign-in that fails ends the operation with its error, and the next may sign in.
        let mut tries = Tries::default();
        let Ok(AfterFailure::SignIn(_)) = signin.after_failure(&mut tries, &mut c, &error, entropy)
        else {
            panic!()
        };
        let closed = McpError::Authorization {
            message: "the sign-in window was closed or gave no answer".into(),
        };
        assert_eq!(
            signin.finish(Err(closed.clone()), &mut tries, &mut c, &settings),
            Err(closed)
        );
        assert!(!signin.is_running());
    }

    #[test]
    fn without_hooks_or_for_another_error_the_refusal_is_reported() {
        let (mut c, _) = client(None);
        let error = refused(&mut c, 401, &[("WWW-Authenticate", "Bearer")]);
        let mut tries = Tries::default();
        assert!(matches!(
            SignIn::new().after_failure(&mut tries, &mut c, &error, no_entropy),
            Ok(AfterFailure::Fail)
        ));
        let (mut c, mut settings) = client(None);
        let mut signin = SignIn::new();
        signin.set_authorizer(Authorizer::new(SERVER, config()), &mut c, &mut settings);
        for error in [
            McpError::Timeout { seconds: 60 },
            McpError::server("boom"),
            McpError::OriginNotAllowed {
                origin: None,
                server_message: String::new(),
            },
        ] {
            assert!(matches!(
                signin.after_failure(&mut tries, &mut c, &error, no_entropy),
                Ok(AfterFailure::Fail)
            ));
        }
        // No randomness: the operation ends with that refusal, and nothing is left running.
        let error = refused(&mut c, 401, &[]);
        let refusal = signin
            .after_failure(&mut tries, &mut c, &error, || {
                Err(McpError::Authorization {
                    message: "no crypto".into(),
                })
            })
            .unwrap_err();
        assert_eq!(refusal.to_string(), "Sign-in failed: no crypto.");
        assert!(!signin.is_running());
    }

    #[test]
    fn a_dpop_nonce_request_is_answered_once_with_the_servers_nonce() {
        let (mut c, mut settings) = client(Some("bound"));
        c.set_token_dpop(true);
        let mut signin = SignIn::new();
        signin.set_authorizer(Authorizer::new(SERVER, config()), &mut c, &mut settings);
        c.connect(0);
        let (exchange, request) = sent(&mut c);
        let proof = signin
            .proof_for(&request)
            .expect("a DPoP-bound request has a proof");
        assert_eq!(
            (proof.method.as_str(), proof.url.as_str()),
            ("POST", SERVER)
        );
        assert_eq!(
            (proof.access_token.as_deref(), proof.nonce.as_deref()),
            (Some("bound"), None)
        );
        let head = [
            (
                "WWW-Authenticate".to_string(),
                r#"DPoP error="use_dpop_nonce""#.to_string(),
            ),
            ("DPoP-Nonce".to_string(), "n-1".to_string()),
        ];
        signin.observe_answer(&head);
        c.handle_head(exchange, 401, &head, 0);
        c.handle_end(exchange, 0);
        let error = loop {
            if let Some(Event::Failed { error, .. }) = c.poll_event() {
                break error;
            }
        };
        let mut tries = Tries::default();
        assert!(matches!(
            signin.after_failure(&mut tries, &mut c, &error, no_entropy),
            Ok(AfterFailure::Retry)
        ));
        // The client may connect again, and its next proof carries the nonce.
        c.connect(0);
        let (exchange, again) = sent(&mut c);
        assert_eq!(again.header("Authorization"), Some("DPoP bound"));
        assert_eq!(
            signin.proof_for(&again).and_then(|p| p.nonce),
            Some("n-1".to_string())
        );
        // The same refusal again is not a loop: this time the operation signs in.
        c.handle_head(exchange, 401, &head, 0);
        c.handle_end(exchange, 0);
        let error = loop {
            if let Some(Event::Failed { error, .. }) = c.poll_event() {
                break error;
            }
        };
        assert!(matches!(
            signin.after_failure(&mut tries, &mut c, &error, entropy),
            Ok(AfterFailure::SignIn(_))
        ));
        // A bearer request carries no proof.
        let (mut plain, _) = client(Some("bearer"));
        plain.connect(0);
        let (_, request) = sent(&mut plain);
        assert_eq!(signin.proof_for(&request), None);
    }

    #[test]
    fn stored_tokens_are_sent_from_the_first_request_unless_bound_to_another_key() {
        let tokens = |dpop: bool| Tokens {
            access_token: "stored".into(),
            refresh_token: None,
            scopes: Vec::new(),
            resource: SERVER.into(),
            token_endpoint: format!("{ISSUER}/token"),
            client: Registration {
                issuer: ISSUER.into(),
                client_id: "c".into(),
                client_secret: None,
                auth_method: "none".into(),
            },
            dpop,
        };
        for (dpop, host_token, sent_token) in [
            (false, None, Some("Bearer stored")),
            (true, None, None),
            (false, Some("own"), Some("Bearer own")),
        ] {
            let (mut c, mut settings) = client(host_token);
            let mut auth = Authorizer::new(SERVER, config());
            auth.restore(tokens(dpop));
            let mut signin = SignIn::new();
            signin.set_authorizer(auth, &mut c, &mut settings);
            c.connect(0);
            let (_, request) = sent(&mut c);
            assert_eq!(request.header("Authorization"), sent_token, "dpop {dpop}");
        }
    }

    #[test]
    fn the_flows_proofs_assertions_and_callbacks_as_the_drivers_see_them() {
        let mut auth = Authorizer::new(SERVER, config());
        let meta = as_meta(json!({"dpop_signing_alg_values_supported": ["ES256"]}));
        let (mut flow, url) = authorization_url(&mut auth, "DPoP", prm(json!({})), meta);
        let closed = callback_answered(&mut flow, None).unwrap_err();
        assert_eq!(
            closed.to_string(),
            "Sign-in failed: the sign-in window was closed or gave no answer."
        );
        callback_answered(&mut flow, Some(&callback(&url, ""))).unwrap();
        let token_request = send(&mut flow);
        let proof = flow_proof(&flow, &token_request).expect("a DPoP token request");
        assert_eq!(
            (proof.url.as_str(), proof.access_token, proof.nonce),
            (format!("{ISSUER}/token").as_str(), None, None)
        );
        let no_key = assertion_input(&mut flow, 0, false).unwrap_err();
        assert!(
            no_key.to_string().contains("no client key given"),
            "{no_key}"
        );
    }
}
