//! The thin `fetch` transport (wasm32 only): drives [`Client`] with the global `fetch`, one
//! `AbortController` per request and a streamed body reader, so the same build runs in a Window, a
//! Worker and Node ≥ 18.
//!
//! Everything protocol-related lives in the sans-I/O core; this file only moves bytes and time:
//! - `fetch`, `setTimeout` and `clearTimeout` are looked up on `js_sys::global()` (never `window()`);
//! - time comes from `performance.now()` (monotonic), else `Date.now()` — never `std::time::Instant`,
//!   which panics on wasm32;
//! - response bodies are read chunk by chunk from `response.body.getReader()` and fed to the core as
//!   they arrive; an aborted exchange stops reading and aborts its controller;
//! - a call's `AbortSignal` cancels it ([`Client::cancel`]);
//! - the sign-in: the policy is [`SignIn`]'s (sans-I/O, tested natively); here are its requests
//!   over `fetch`, the host's hooks (`redirect`, storage), and WebCrypto (the DPoP key, ES256
//!   signatures, `crypto.getRandomValues`).
//!
//! The JavaScript API (`connect`, `ToolServer`) wraps [`FetchClient`] in `crate::wasm`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use base64::Engine as _;
use js_sys::{Function, Promise, Reflect, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    AbortController, AbortSignal, Headers, ReadableStreamDefaultReader, RequestInit, Response,
};

use super::auth::dpop::PublicKey;
use super::auth::{Authorizer, Flow, Step, Tokens, ENTROPY_BYTES, MAX_AUTH_BODY_BYTES};
use super::client::{CallOptions, Client, Config, Event, ExchangeId, OpId, OpResult, ServerInfo};
use super::elicit::{Action, ElicitId, Form};
use super::errors::McpError;
use super::headers::{header_value, HttpRequest};
use super::signin::{
    assertion_input, callback_answered, flow_proof, AfterFailure, ProofRequest, SignIn, Tries,
};
use crate::wire::jsonrpc::RawJson;

/// Progress callback: `(fraction, message)`.
pub type ProgressFn = Box<dyn FnMut(Option<f64>, Option<String>)>;

/// Elicitation hook: shows the form and later answers with [`FetchClient::answer_elicitation`].
pub type ElicitFn = Box<dyn FnMut(ElicitId, Form)>;

struct Timer {
    due: u64,
    handle: JsValue,
}

struct Inner {
    client: Client,
    /// The settings the client was made with (a failed handshake gets a new client after sign-in).
    config: Config,
    /// The sign-in and retry policy (the authorizer, when the host gave sign-in hooks).
    signin: SignIn,
    /// The host's sign-in hooks, when it gave them.
    hooks: Option<Hooks>,
    /// While a sign-in runs: the resolvers of the operations waiting for it.
    sign_in_waiters: Vec<Function>,
    controllers: HashMap<ExchangeId, AbortController>,
    outcomes: HashMap<OpId, Result<OpResult, McpError>>,
    waiters: HashMap<OpId, Function>,
    progress: HashMap<OpId, ProgressFn>,
    notices: Vec<String>,
    on_tools_changed: Option<Box<dyn FnMut()>>,
    on_elicitation: Option<ElicitFn>,
    timer: Option<Timer>,
    /// The connection's DPoP key (RFC 9449; made when a server first wants DPoP): a
    /// non-extractable WebCrypto P-256 private key and its public coordinates.
    dpop_key: Option<(JsValue, PublicKey)>,
}

/// A connection to one MCP server over `fetch`. Cheap to clone (shared state).
#[derive(Clone)]
pub struct FetchClient {
    inner: Rc<RefCell<Inner>>,
}

impl std::fmt::Debug for FetchClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.inner.try_borrow() {
            Ok(i) => f
                .debug_struct("FetchClient")
                .field("client", &i.client)
                .finish(),
            Err(_) => f.write_str("FetchClient { <busy> }"),
        }
    }
}

/// Milliseconds from `performance.now()`, else `Date.now()`.
pub fn now_ms() -> u64 {
    let global = js_sys::global();
    if let Ok(perf) = Reflect::get(&global, &JsValue::from_str("performance")) {
        if let Ok(now) = Reflect::get(&perf, &JsValue::from_str("now")) {
            if let Some(f) = now.dyn_ref::<Function>() {
                if let Some(ms) = f.call0(&perf).ok().and_then(|v| v.as_f64()) {
                    return ms.max(0.0) as u64;
                }
            }
        }
    }
    js_sys::Date::now().max(0.0) as u64
}

fn js_text(e: &JsValue) -> String {
    if let Some(s) = e.as_string() {
        return s;
    }
    let name = Reflect::get(e, &JsValue::from_str("name"))
        .ok()
        .and_then(|v| v.as_string());
    let message = Reflect::get(e, &JsValue::from_str("message"))
        .ok()
        .and_then(|v| v.as_string());
    match (name, message) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        (None, Some(m)) => m,
        (Some(n), None) => n,
        (None, None) => "unknown error".to_string(),
    }
}

fn global_fn(name: &str) -> Option<Function> {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .ok()?
        .dyn_into::<Function>()
        .ok()
}

fn pump(inner: &Rc<RefCell<Inner>>) {
    loop {
        let event = inner.borrow_mut().client.poll_event();
        let Some(event) = event else { break };
        match event {
            Event::SendRequest { exchange, request } => start_fetch(inner, exchange, request),
            Event::AbortExchange { exchange } => {
                let controller = inner.borrow_mut().controllers.remove(&exchange);
                if let Some(c) = controller {
                    c.abort();
                }
            }
            Event::Progress {
                op,
                fraction,
                message,
            } => {
                let callback = inner.borrow_mut().progress.remove(&op);
                if let Some(mut cb) = callback {
                    cb(fraction, message);
                    // Not for an op the callback settled (a cancel): that would keep it for ever.
                    let mut i = inner.borrow_mut();
                    if !i.outcomes.contains_key(&op) {
                        i.progress.entry(op).or_insert(cb);
                    }
                }
            }
            Event::Response { op, result } => settle(inner, op, Ok(result)),
            Event::Failed { op, error } => settle(inner, op, Err(error)),
            Event::Notice(n) => inner.borrow_mut().notices.push(n),
            Event::Elicitation { id, form } => {
                let callback = inner.borrow_mut().on_elicitation.take();
                match callback {
                    Some(mut cb) => {
                        cb(id, form);
                        inner.borrow_mut().on_elicitation.get_or_insert(cb);
                    }
                    None => {
                        inner
                            .borrow_mut()
                            .client
                            .answer_elicitation(id, Action::Decline, now_ms())
                    }
                }
            }
            Event::ToolsChanged => {
                let callback = inner.borrow_mut().on_tools_changed.take();
                if let Some(mut cb) = callback {
                    cb();
                    inner.borrow_mut().on_tools_changed.get_or_insert(cb);
                }
            }
        }
    }
    schedule_timer(inner);
}

fn settle(inner: &Rc<RefCell<Inner>>, op: OpId, outcome: Result<OpResult, McpError>) {
    let resolve = {
        let mut i = inner.borrow_mut();
        i.progress.remove(&op);
        i.outcomes.insert(op, outcome);
        i.waiters.remove(&op)
    };
    if let Some(r) = resolve {
        let _ = r.call0(&JsValue::NULL);
    }
}

/// Keeps one `setTimeout` for the core's next deadline. A later deadline keeps the pending timer (it
/// fires early, finds nothing due, and the next one is set), so closures are not churned on progress.
fn schedule_timer(inner: &Rc<RefCell<Inner>>) {
    let next = inner.borrow().client.poll_timeout();
    let Some(due) = next else {
        // Nothing pending: drop the timer (under Node a pending timer keeps the process alive).
        let old = inner.borrow_mut().timer.take();
        if let (Some(old), Some(clear)) = (old, global_fn("clearTimeout")) {
            let _ = clear.call1(&JsValue::NULL, &old.handle);
        }
        return;
    };
    if inner.borrow().timer.as_ref().is_some_and(|t| t.due <= due) {
        return;
    }
    let (Some(set), Some(clear)) = (global_fn("setTimeout"), global_fn("clearTimeout")) else {
        return;
    };
    if let Some(old) = inner.borrow_mut().timer.take() {
        let _ = clear.call1(&JsValue::NULL, &old.handle);
    }
    let weak: Weak<RefCell<Inner>> = Rc::downgrade(inner);
    let callback = Closure::once_into_js(move || {
        if let Some(inner) = weak.upgrade() {
            inner.borrow_mut().timer = None;
            let now = now_ms();
            inner.borrow_mut().client.handle_timeout(now);
            pump(&inner);
        }
    });
    let delay = due.saturating_sub(now_ms()) as f64;
    if let Ok(handle) = set.call2(&JsValue::NULL, &callback, &JsValue::from_f64(delay)) {
        inner.borrow_mut().timer = Some(Timer { due, handle });
    }
}

fn active(inner: &Rc<RefCell<Inner>>, exchange: ExchangeId) -> bool {
    inner.borrow().controllers.contains_key(&exchange)
}

fn start_fetch(inner: &Rc<RefCell<Inner>>, exchange: ExchangeId, request: HttpRequest) {
    let controller = match AbortController::new() {
        Ok(c) => c,
        Err(e) => {
            inner
                .borrow_mut()
                .client
                .handle_network_error(exchange, &js_text(&e), now_ms());
            return;
        }
    };
    let signal = controller.signal();
    inner.borrow_mut().controllers.insert(exchange, controller);
    let inner = inner.clone();
    spawn_local(async move {
        let result = run_fetch(&inner, exchange, &request, &signal).await;
        let was_active = inner.borrow_mut().controllers.remove(&exchange).is_some();
        if let Err(detail) = result {
            if was_active {
                inner
                    .borrow_mut()
                    .client
                    .handle_network_error(exchange, &detail, now_ms());
            }
        }
        pump(&inner);
    });
}

/// Sends one request with `fetch` (the one place every request of this transport, MCP or
/// sign-in, is made). §9: redirects are never followed (a 307/308 would re-send the document and
/// the token wherever `Location` says, plain http: included): a 3xx, or a browser's
/// "opaqueredirect", is handed to the caller as the response.
async fn send(request: &HttpRequest, signal: Option<&AbortSignal>) -> Result<Response, String> {
    let init = RequestInit::new();
    init.set_method(request.method.as_str());
    let headers = Headers::new().map_err(|e| js_text(&e))?;
    for (k, v) in &request.headers {
        headers.append(k, v).map_err(|e| js_text(&e))?;
    }
    init.set_headers(&headers);
    if !request.body.is_empty() {
        init.set_body(&Uint8Array::from(request.body.as_slice()).into());
    }
    if let Some(signal) = signal {
        init.set_signal(Some(signal));
    }
    Reflect::set(
        &init,
        &JsValue::from_str("redirect"),
        &JsValue::from_str("manual"),
    )
    .map_err(|e| js_text(&e))?;
    let global = js_sys::global();
    let fetch = global_fn("fetch").ok_or_else(|| "this environment has no fetch()".to_string())?;
    let promise: Promise = fetch
        .call2(&global, &JsValue::from_str(&request.url), &init)
        .map_err(|e| js_text(&e))?
        .dyn_into()
        .map_err(|_| "fetch() did not return a promise".to_string())?;
    JsFuture::from(promise)
        .await
        .map_err(|e| js_text(&e))?
        .dyn_into()
        .map_err(|_| "fetch() did not resolve to a Response".to_string())
}

/// A response's header lines as (name, value) pairs, in the order `Headers` iterates them.
fn response_head(response: &Response) -> Vec<(String, String)> {
    let mut head = Vec::new();
    if let Ok(Some(entries)) = js_sys::try_iter(&response.headers()) {
        for entry in entries.flatten() {
            let pair: js_sys::Array = entry.unchecked_into();
            head.push((
                pair.get(0).as_string().unwrap_or_default(),
                pair.get(1).as_string().unwrap_or_default(),
            ));
        }
    }
    head
}

async fn run_fetch(
    inner: &Rc<RefCell<Inner>>,
    exchange: ExchangeId,
    request: &HttpRequest,
    signal: &AbortSignal,
) -> Result<(), String> {
    let proof = inner.borrow().signin.proof_for(request);
    let signed = with_proof(inner, request, proof)
        .await
        .map_err(|e| e.to_string())?;
    let response = send(signed.as_ref().unwrap_or(request), Some(signal)).await?;
    // A browser gives an "opaqueredirect" (status 0, `Location` hidden); Node gives the 3xx itself.
    let opaque = Reflect::get(&response, &JsValue::from_str("type"))
        .ok()
        .and_then(|t| t.as_string())
        .is_some_and(|t| t == "opaqueredirect");
    if opaque || matches!(response.status(), 301 | 302 | 303 | 307 | 308) {
        let location = response.headers().get("location").ok().flatten();
        inner
            .borrow_mut()
            .client
            .handle_redirect(exchange, location.as_deref());
        pump(inner);
        return Ok(());
    }
    let head = response_head(&response);
    inner.borrow_mut().signin.observe_answer(&head);
    inner
        .borrow_mut()
        .client
        .handle_head(exchange, response.status(), &head, now_ms());
    pump(inner);
    // A scanned answer's body is not kept by the core: its chunks stay here, as the JavaScript
    // arrays fetch made, in case the core asks for them again (`wants_replay`, after a chunk or
    // the end: fed again from the first, then the stream read on).
    let mut keep = inner.borrow().client.keeps_chunks(exchange);
    let mut kept: Vec<Uint8Array> = Vec::new();
    if let Some(body) = response.body() {
        let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
        loop {
            if !active(inner, exchange) {
                // Aborted: the controller already tore the stream down (a `reader.cancel()` here would
                // only add a rejected promise nobody handles).
                return Ok(());
            }
            let chunk = JsFuture::from(reader.read())
                .await
                .map_err(|e| js_text(&e))?;
            let done = Reflect::get(&chunk, &JsValue::from_str("done"))
                .map(|v| v.is_truthy())
                .unwrap_or(true);
            if done {
                break;
            }
            let value =
                Reflect::get(&chunk, &JsValue::from_str("value")).map_err(|e| js_text(&e))?;
            let array = Uint8Array::new(&value);
            let bytes = array.to_vec();
            if keep {
                kept.push(array);
            }
            inner
                .borrow_mut()
                .client
                .handle_chunk(exchange, &bytes, now_ms());
            if keep && replayed(inner, exchange, &mut kept) {
                keep = false;
            }
            pump(inner);
        }
    }
    if active(inner, exchange) {
        inner.borrow_mut().client.handle_end(exchange, now_ms());
        if replayed(inner, exchange, &mut kept) {
            inner.borrow_mut().client.handle_end(exchange, now_ms());
        }
    }
    Ok(())
}

/// When the core asks for it (`Client::wants_replay`), feeds the `kept` chunks of `exchange`'s
/// body again, from the first, and drops them; whether it did.
fn replayed(inner: &Rc<RefCell<Inner>>, exchange: ExchangeId, kept: &mut Vec<Uint8Array>) -> bool {
    if !inner.borrow().client.wants_replay(exchange) {
        return false;
    }
    for array in kept.drain(..) {
        let bytes = array.to_vec();
        inner
            .borrow_mut()
            .client
            .handle_chunk(exchange, &bytes, now_ms());
    }
    true
}

/// The host's sign-in hooks (`connect(url, {auth})`): the authorization core's state, the
/// `redirect(authorizationUrl) → Promise<callbackUrl>` hook, and the token storage the host passed
/// (none: tokens live only in this object's memory).
pub struct AuthHooks {
    /// Tokens, registrations and configuration (sans-I/O).
    pub authorizer: Authorizer,
    /// `redirect(authorizationUrl) → callbackUrl | Promise<callbackUrl>`.
    pub redirect: Function,
    /// `{get(key), set(key, value)}` (each may return a promise), keyed by the server URL; values
    /// are JSON text. Only when the host passed it.
    pub storage: Option<JsValue>,
    /// The client's ES256 private key (a WebCrypto `CryptoKey`, ECDSA P-256, usage `sign`) for
    /// `private_key_jwt` client assertions. Only when the host passed it; it never leaves WebCrypto.
    pub client_key: Option<JsValue>,
}

/// The host's hooks of [`AuthHooks`] (the authorizer goes to the [`SignIn`] policy).
#[derive(Clone)]
struct Hooks {
    redirect: Function,
    storage: Option<JsValue>,
    client_key: Option<JsValue>,
}

/// `crypto.subtle.sign(ECDSA P-256 / SHA-256)` of `input` with `key`: the 64-byte `r ‖ s`
/// signature a JWS ES256 carries (WebCrypto's own format). `what` names the signature in the
/// one-line refusal ("the client assertion", "a DPoP proof").
async fn sign_es256(key: &JsValue, input: &str, what: &str) -> Result<Vec<u8>, McpError> {
    let fail = |why: &str| McpError::Authorization {
        message: format!("{what} could not be signed ({why})"),
    };
    let subtle = subtle(what)?;
    let sign: Function = Reflect::get(&subtle, &JsValue::from_str("sign"))
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| fail("no crypto.subtle.sign"))?;
    let algorithm = js_sys::Object::new();
    let _ = Reflect::set(&algorithm, &"name".into(), &"ECDSA".into());
    let _ = Reflect::set(&algorithm, &"hash".into(), &"SHA-256".into());
    let data = Uint8Array::from(input.as_bytes());
    let signed = settled(sign.call3(&subtle, &algorithm, key, &data))
        .await
        .map_err(|_| fail("the key must be an ECDSA P-256 private key with the sign usage"))?;
    Ok(Uint8Array::new(&signed).to_vec())
}

/// `crypto.subtle` (Window, Worker, Node ≥ 20), or a one-line refusal naming `what`.
fn subtle(what: &str) -> Result<JsValue, McpError> {
    Reflect::get(&js_sys::global(), &JsValue::from_str("crypto"))
        .and_then(|c| Reflect::get(&c, &JsValue::from_str("subtle")))
        .ok()
        .filter(JsValue::is_object)
        .ok_or_else(|| McpError::Authorization {
            message: format!("this environment has no WebCrypto for {what}"),
        })
}

/// The connection's DPoP key, made on first use: `crypto.subtle.generateKey` ECDSA P-256, the
/// private key non-extractable (it never leaves WebCrypto), the public one exported as JWK.
async fn dpop_key(inner: &Rc<RefCell<Inner>>) -> Result<(JsValue, PublicKey), McpError> {
    if let Some(k) = inner.borrow().dpop_key.clone() {
        return Ok(k);
    }
    let fail = || McpError::Authorization {
        message: "the DPoP key could not be made (WebCrypto ECDSA P-256)".into(),
    };
    let subtle = subtle("DPoP proofs")?;
    let call = |name: &str| -> Result<Function, McpError> {
        Reflect::get(&subtle, &JsValue::from_str(name))
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(fail)
    };
    let algorithm = js_sys::Object::new();
    let _ = Reflect::set(&algorithm, &"name".into(), &"ECDSA".into());
    let _ = Reflect::set(&algorithm, &"namedCurve".into(), &"P-256".into());
    let usages = js_sys::Array::of1(&"sign".into());
    let pair = settled(call("generateKey")?.call3(&subtle, &algorithm, &JsValue::FALSE, &usages))
        .await
        .map_err(|_| fail())?;
    let private = Reflect::get(&pair, &"privateKey".into()).map_err(|_| fail())?;
    let public = Reflect::get(&pair, &"publicKey".into()).map_err(|_| fail())?;
    let jwk = settled(call("exportKey")?.call2(&subtle, &"jwk".into(), &public))
        .await
        .map_err(|_| fail())?;
    let coordinate = |name: &str| {
        Reflect::get(&jwk, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
            .ok_or_else(fail)
    };
    let key = (
        private,
        PublicKey {
            x: coordinate("x")?,
            y: coordinate("y")?,
        },
    );
    inner.borrow_mut().dpop_key = Some(key.clone());
    Ok(key)
}

/// A signed DPoP proof (RFC 9449 §4) for one request; the core says what it covers.
async fn dpop_proof(inner: &Rc<RefCell<Inner>>, proof: &ProofRequest) -> Result<String, McpError> {
    let (key, public) = dpop_key(inner).await?;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let jti = b64.encode(&random_entropy()?[..16]);
    let now = (js_sys::Date::now() / 1000.0) as u64;
    let input = proof.signing_input(&public, now, &jti);
    let signature = sign_es256(&key, &input, "a DPoP proof").await?;
    Ok(format!("{input}.{}", b64.encode(signature)))
}

/// `request` with its DPoP proof when the core says it needs one.
async fn with_proof(
    inner: &Rc<RefCell<Inner>>,
    request: &HttpRequest,
    proof: Option<ProofRequest>,
) -> Result<Option<HttpRequest>, McpError> {
    let Some(proof) = proof else {
        return Ok(None);
    };
    let mut signed = request.clone();
    signed
        .headers
        .push(("DPoP".into(), dpop_proof(inner, &proof).await?));
    Ok(Some(signed))
}

/// `crypto.getRandomValues`: the flow's PKCE verifier and `state` (Window, Worker, Node ≥ 19).
fn random_entropy() -> Result<[u8; ENTROPY_BYTES], McpError> {
    let fail = || McpError::Authorization {
        message: "this environment has no crypto.getRandomValues() for the sign-in".into(),
    };
    let crypto =
        Reflect::get(&js_sys::global(), &JsValue::from_str("crypto")).map_err(|_| fail())?;
    let get: Function = Reflect::get(&crypto, &JsValue::from_str("getRandomValues"))
        .map_err(|_| fail())?
        .dyn_into()
        .map_err(|_| fail())?;
    let bytes = Uint8Array::new_with_length(ENTROPY_BYTES as u32);
    get.call1(&crypto, &bytes).map_err(|_| fail())?;
    let mut out = [0u8; ENTROPY_BYTES];
    bytes.copy_to(&mut out);
    Ok(out)
}

/// A whole small answer (metadata, registration, token): status, headers, body. Redirects are
/// not followed (the core sees the 3xx as a refusal).
async fn fetch_all(request: &HttpRequest) -> Result<(u16, Vec<(String, String)>, Vec<u8>), String> {
    let response = send(request, None).await?;
    let head = response_head(&response);
    let too_large = header_value(&head, "content-length")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .is_some_and(|n| n > MAX_AUTH_BODY_BYTES);
    if too_large {
        return Ok((response.status(), head, vec![0; MAX_AUTH_BODY_BYTES + 1]));
    }
    let buffer = JsFuture::from(response.array_buffer().map_err(|e| js_text(&e))?)
        .await
        .map_err(|e| js_text(&e))?;
    Ok((response.status(), head, Uint8Array::new(&buffer).to_vec()))
}

/// Awaits a host hook's answer (a value or a promise).
async fn settled(value: Result<JsValue, JsValue>) -> Result<JsValue, JsValue> {
    JsFuture::from(Promise::resolve(&value?)).await
}

/// Drives one authorization flow: requests over `fetch`, the authorization URL to the host's
/// `redirect` hook. Everything it decides is the core's (`mcp::auth::Flow`, `mcp::signin`).
async fn drive_flow(
    inner: &Rc<RefCell<Inner>>,
    flow: &mut Flow,
    hooks: &Hooks,
) -> Result<Tokens, McpError> {
    loop {
        match flow.step() {
            Step::Send(request) => {
                let proof = flow_proof(flow, &request);
                let request = with_proof(inner, &request, proof).await?.unwrap_or(request);
                match fetch_all(&request).await {
                    Ok((status, headers, body)) => flow.handle_response(status, &headers, &body),
                    Err(detail) => flow.handle_network_error(&detail),
                }
            }
            Step::Sign => {
                let now = (js_sys::Date::now() / 1000.0) as u64;
                let input = assertion_input(flow, now, hooks.client_key.is_some())?;
                if let Some(key) = &hooks.client_key {
                    flow.handle_signature(&sign_es256(key, &input, "the client assertion").await?);
                }
            }
            Step::Redirect(url) => {
                let answer = settled(
                    hooks
                        .redirect
                        .call1(&JsValue::NULL, &JsValue::from_str(&url)),
                )
                .await;
                let callback = answer.ok().and_then(|v| {
                    v.as_string().or_else(|| {
                        // A URL object.
                        v.is_object()
                            .then(|| {
                                js_sys::JSON::stringify(&v)
                                    .ok()
                                    .and_then(|s| s.as_string())
                                    .map(|s| s.trim_matches('"').to_string())
                            })
                            .flatten()
                    })
                });
                callback_answered(flow, callback.as_deref())?;
            }
            Step::Done(tokens) => return Ok(*tokens),
            Step::Failed(e) => return Err(e),
        }
    }
}

impl FetchClient {
    /// A client for `config`; refuses an unusable or insecure URL before any request. When
    /// `config.origin` is empty, the page's `location.origin` is used (Window and Worker; none in Node).
    pub fn new(mut config: Config) -> Result<FetchClient, McpError> {
        if config.origin.is_none() {
            config.origin = Reflect::get(&js_sys::global(), &JsValue::from_str("location"))
                .ok()
                .filter(|l| l.is_object())
                .and_then(|l| Reflect::get(&l, &JsValue::from_str("origin")).ok())
                .and_then(|o| o.as_string())
                .filter(|o| o.starts_with("http"));
        }
        let client = Client::new(config.clone())?;
        Ok(FetchClient {
            inner: Rc::new(RefCell::new(Inner {
                client,
                config,
                signin: SignIn::new(),
                hooks: None,
                sign_in_waiters: Vec::new(),
                controllers: HashMap::new(),
                outcomes: HashMap::new(),
                waiters: HashMap::new(),
                progress: HashMap::new(),
                notices: Vec::new(),
                on_tools_changed: None,
                on_elicitation: None,
                timer: None,
                dpop_key: None,
            })),
        })
    }

    async fn wait(&self, op: OpId) -> Result<OpResult, McpError> {
        pump(&self.inner);
        if let Some(o) = self.inner.borrow_mut().outcomes.remove(&op) {
            return o;
        }
        let inner = self.inner.clone();
        let promise = Promise::new(&mut |resolve, _reject| {
            inner.borrow_mut().waiters.insert(op, resolve);
        });
        let _ = JsFuture::from(promise).await;
        self.inner
            .borrow_mut()
            .outcomes
            .remove(&op)
            .unwrap_or(Err(McpError::Closed))
    }

    /// Gives the host's sign-in hooks (before `connect`); tokens the authorizer already holds
    /// (restored from the host's storage) are used from the first request
    /// ([`SignIn::set_authorizer`]).
    pub fn set_auth(&self, hooks: AuthHooks) {
        let AuthHooks {
            authorizer,
            redirect,
            storage,
            client_key,
        } = hooks;
        let mut i = self.inner.borrow_mut();
        let Inner {
            client,
            config,
            signin,
            ..
        } = &mut *i;
        signin.set_authorizer(authorizer, client, config);
        i.hooks = Some(Hooks {
            redirect,
            storage,
            client_key,
        });
    }

    /// Waits until the running sign-in ends ([`AfterFailure::WaitThenRetry`]).
    async fn wait_for_sign_in(&self) {
        let inner = self.inner.clone();
        let promise = Promise::new(&mut |resolve, _reject| {
            let mut i = inner.borrow_mut();
            if i.signin.is_running() {
                i.sign_in_waiters.push(resolve);
            } else {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        let _ = JsFuture::from(promise).await;
    }

    /// Runs the sign-in `flow` ([`AfterFailure::SignIn`]), hands its outcome to the core, keeps
    /// the tokens in the host's storage, and wakes the operations that wait for it.
    async fn sign_in(&self, mut flow: Flow, tries: &mut Tries) -> Result<(), McpError> {
        let hooks = self.inner.borrow().hooks.clone();
        let outcome = match &hooks {
            Some(hooks) => drive_flow(&self.inner, &mut flow, hooks).await,
            None => Err(McpError::Authorization {
                message: "the sign-in was driven out of order".into(),
            }),
        };
        let signed = {
            let mut i = self.inner.borrow_mut();
            let Inner {
                client,
                config,
                signin,
                ..
            } = &mut *i;
            signin.finish(outcome, tries, client, config)
        };
        if let Ok(signed) = &signed {
            let storage = hooks.and_then(|h| h.storage);
            let key = self.inner.borrow().config.url.clone();
            if let (Some(storage), Some(json)) = (storage, &signed.tokens_json) {
                let set = Reflect::get(&storage, &JsValue::from_str("set"))
                    .ok()
                    .and_then(|f| f.dyn_into::<Function>().ok());
                if let Some(set) = set {
                    // A storage that fails does not undo the sign-in: the tokens stay in memory.
                    let stored =
                        set.call2(&storage, &JsValue::from_str(&key), &JsValue::from_str(json));
                    let _ = settled(stored).await;
                }
            }
        }
        let waiters = std::mem::take(&mut self.inner.borrow_mut().sign_in_waiters);
        for w in waiters {
            let _ = w.call0(&JsValue::NULL);
        }
        signed.map(|_| ())
    }

    /// Starts an operation with `start` and waits for it; when it fails, does what the core's
    /// sign-in policy says ([`SignIn::after_failure`]). `started` sees each operation id.
    async fn run(
        &self,
        start: &dyn Fn(&mut Client, u64) -> OpId,
        started: &dyn Fn(OpId),
    ) -> Result<OpResult, McpError> {
        let mut tries = Tries::default();
        loop {
            let op = start(&mut self.inner.borrow_mut().client, now_ms());
            started(op);
            let outcome = self.wait(op).await;
            let Err(error) = &outcome else {
                return outcome;
            };
            let next = {
                let mut i = self.inner.borrow_mut();
                let Inner { client, signin, .. } = &mut *i;
                signin.after_failure(&mut tries, client, error, random_entropy)?
            };
            match next {
                AfterFailure::Fail => return outcome,
                AfterFailure::Retry => {}
                AfterFailure::WaitThenRetry => self.wait_for_sign_in().await,
                AfterFailure::WaitThenFail => {
                    self.wait_for_sign_in().await;
                    return outcome;
                }
                AfterFailure::SignIn(flow) => self.sign_in(*flow, &mut tries).await?,
            }
        }
    }

    /// Runs the handshake.
    pub async fn connect(&self) -> Result<ServerInfo, McpError> {
        match self.run(&|c, now| c.connect(now), &|_| {}).await? {
            OpResult::Connected(info) => Ok(info),
            other => Err(McpError::server(format!("unexpected outcome {other:?}"))),
        }
    }

    /// Every tool of every `tools/list` page, raw.
    pub async fn list_tools(&self) -> Result<Vec<Value>, McpError> {
        match self.run(&|c, now| c.list_tools(now), &|_| {}).await? {
            OpResult::Tools(t) => Ok(t),
            other => Err(McpError::server(format!("unexpected outcome {other:?}"))),
        }
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), McpError> {
        self.run(&|c, now| c.ping(now), &|_| {}).await.map(|_| ())
    }

    /// Calls a tool; `on_progress` gets `(fraction, message)`; aborting `signal` cancels the call.
    /// The `CallToolResult` comes back as raw JSON text (read once, typed, by the contract core).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
        on_progress: Option<ProgressFn>,
        signal: Option<AbortSignal>,
    ) -> Result<RawJson, McpError> {
        if signal.as_ref().is_some_and(AbortSignal::aborted) {
            return Err(McpError::Cancelled);
        }
        // The operation id changes when the call is started again after a sign-in: the abort
        // listener and the progress callback follow the current one.
        let current = Rc::new(std::cell::Cell::new(None::<OpId>));
        let progress = on_progress.map(|p| Rc::new(RefCell::new(p)));
        let weak = Rc::downgrade(&self.inner);
        let current_for_abort = current.clone();
        let on_abort = Closure::<dyn FnMut()>::new(move || {
            if let (Some(inner), Some(op)) = (weak.upgrade(), current_for_abort.get()) {
                let now = now_ms();
                inner.borrow_mut().client.cancel(op, now);
                pump(&inner);
            }
        });
        if let Some(s) = &signal {
            let _ = s.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
        }
        let inner = self.inner.clone();
        let started = |op: OpId| {
            current.set(Some(op));
            if let Some(p) = &progress {
                let p = p.clone();
                let forward: ProgressFn = Box::new(move |f, m| (p.borrow_mut())(f, m));
                inner.borrow_mut().progress.insert(op, forward);
            }
        };
        let outcome = if signal.as_ref().is_some_and(AbortSignal::aborted) {
            Err(McpError::Cancelled)
        } else {
            self.run(
                &|c, now| c.call_tool(name, arguments.clone(), &options, now),
                &started,
            )
            .await
        };
        if let Some(s) = &signal {
            let _ =
                s.remove_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
        }
        drop(on_abort);
        match outcome? {
            OpResult::ToolResult(v) => Ok(v),
            other => Err(McpError::server(format!("unexpected outcome {other:?}"))),
        }
    }

    /// Closes the connection (DELETE for a legacy session).
    pub async fn close(&self) -> Result<(), McpError> {
        // The elicitation hook holds a handle to this client: drop it, so the two can be freed.
        self.inner.borrow_mut().on_elicitation = None;
        let op = self.inner.borrow_mut().client.close(now_ms());
        self.wait(op).await.map(|_| ())
    }

    /// What the server said about itself, once connected.
    pub fn server_info(&self) -> Option<ServerInfo> {
        self.inner.borrow().client.server_info().cloned()
    }

    /// Notices so far (fallbacks, re-initialisation), drained.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut self.inner.borrow_mut().notices)
    }

    /// Opens the notification stream (legacy era), so that `tools/list_changed` reaches the callback
    /// set with [`FetchClient::set_on_tools_changed`]. It holds one of the browser's few connections to
    /// the origin; stop it with [`FetchClient::cancel`].
    pub fn listen(&self) -> OpId {
        let op = self.inner.borrow_mut().client.listen(now_ms());
        pump(&self.inner);
        op
    }

    /// Cancels an operation started without awaiting it (the notification stream).
    pub fn cancel(&self, op: OpId) {
        self.inner.borrow_mut().client.cancel(op, now_ms());
        pump(&self.inner);
    }

    /// Called with each elicitation the server sends (set it before connecting, with
    /// `Config::elicitation`); the answer goes back through [`FetchClient::answer_elicitation`].
    pub fn set_on_elicitation(&self, callback: Option<ElicitFn>) {
        self.inner.borrow_mut().on_elicitation = callback;
    }

    /// The user's answer to an elicitation.
    pub fn answer_elicitation(&self, id: ElicitId, action: Action) {
        self.inner
            .borrow_mut()
            .client
            .answer_elicitation(id, action, now_ms());
        pump(&self.inner);
    }

    /// Called when the server says its tool list changed.
    pub fn set_on_tools_changed(&self, callback: Option<Box<dyn FnMut()>>) {
        self.inner.borrow_mut().on_tools_changed = callback;
    }
}
