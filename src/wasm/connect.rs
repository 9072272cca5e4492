//! `connect(url, options) → ToolServer`: a remote tool server over MCP Streamable HTTP (contract
//! §6, §8, §9), shaped like Megane's `ToolConnection` seam (serverName, serverVersion, toolbox,
//! call, close) so Builder can swap it in. The protocol lives in [`crate::mcp`]; this file only
//! converts options and outcomes.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::interop::{
    elicit_action_from_js, elicitation_to_js, failure, from_js_or_default, json_from_js_or_default,
    set, string_array, to_js,
};
use super::toolbox::listed_toolbox_to_js;
use crate::contract::discovery::{parse_tool_list_with, refuse_call, SentSchemas, Toolbox};
use crate::contract::result::{
    failure_kind, interpret_call_bytes, interpret_call_prescanned, interpret_plain_bytes,
    Interpreted, PlainResult, ResultLimits,
};
use crate::contract::seam::builder_failure;
use crate::mcp::auth::{AuthConfig, Authorizer, EnterpriseIdp, Tokens};
use crate::mcp::client::{CallOptions, Config, ServerInfo};
use crate::mcp::errors::McpError;
use crate::mcp::fetch::{AuthHooks, FetchClient};
use crate::mcp::version::ProtocolChoice;
use crate::wire::text::one_line;

/// `clientInfo` override.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClientInfo {
    name: Option<String>,
    version: Option<String>,
}

/// Options of `connect`. The token is used for requests and never stored elsewhere.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ConnectOptions {
    token: Option<String>,
    protocol: Option<String>,
    client_info: Option<ClientInfo>,
    max_result_bytes: Option<u64>,
    server_id: Option<String>,
}

struct Shared {
    client: FetchClient,
    info: ServerInfo,
    url: String,
    server_id: String,
    toolbox: Toolbox,
    toolbox_js: JsValue,
    notices: Vec<String>,
    /// The byte cap of the transport, applied again to the result on the same bytes path as
    /// `interpretCall` (one cap, one check).
    limits: ResultLimits,
}

/// A connected tool server (remote). Also see `offlineTools()` for the in-page one.
#[wasm_bindgen(js_name = ToolServer)]
pub struct ToolServerHandle {
    shared: Rc<RefCell<Shared>>,
}

/// §8: connects to a Streamable HTTP tool server: handshake (`protocol: "auto"` by default: a
/// 2026-07-28 probe, then the legacy handshake; or `"legacy"`, `"modern"`), every `tools/list` page, the toolbox. Resolves to a `ToolServer`, or
/// to `{ok: false, error}` with a message the user can act on (wrong token, origin not allowed,
/// server not running, `http:` to a non-loopback host…).
#[wasm_bindgen(js_name = connect, unchecked_return_type = "Promise<ToolServer | Failure>")]
pub fn connect(
    url: String,
    #[wasm_bindgen(unchecked_param_type = "ConnectOptions | null | undefined")] options: JsValue,
) -> Promise {
    let on_tools_changed = js_sys::Reflect::get(&options, &JsValue::from_str("onToolsChanged"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let on_elicitation = js_sys::Reflect::get(&options, &JsValue::from_str("onElicitation"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let parsed: Result<ConnectOptions, JsError> =
        from_js_or_default(strip_functions(&options), "options");
    let auth = auth_hooks(&options, &url);
    future_to_promise(async move {
        let options = match parsed {
            Ok(o) => o,
            Err(e) => return Err(e.into()),
        };
        let auth = match auth {
            Ok(a) => a,
            Err(message) => return Ok(failure(&message)),
        };
        Ok(connect_inner(url, options, on_tools_changed, on_elicitation, auth).await)
    })
}

fn js_string(object: &JsValue, key: &str) -> Option<String> {
    js_sys::Reflect::get(object, &JsValue::from_str(key))
        .ok()
        .and_then(|v| v.as_string())
        .filter(|s| !s.is_empty())
}

/// `options.auth` → the core's sign-in configuration and the host's hooks (`redirect`, `tokens`
/// storage); `Ok(None)` without `auth`. Tokens already in the storage are read when connecting.
fn auth_hooks(
    options: &JsValue,
    url: &str,
) -> Result<Option<(AuthHooks, Option<JsValue>)>, String> {
    let auth =
        js_sys::Reflect::get(options, &JsValue::from_str("auth")).unwrap_or(JsValue::UNDEFINED);
    if auth.is_undefined() || auth.is_null() {
        return Ok(None);
    }
    let redirect = js_sys::Reflect::get(&auth, &JsValue::from_str("redirect"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or("auth.redirect must be a function that opens the sign-in page and resolves to the callback URL.")?;
    let metadata = js_sys::Reflect::get(&auth, &JsValue::from_str("clientMetadata"))
        .ok()
        .filter(JsValue::is_object)
        .map(|m| {
            serde_wasm_bindgen::from_value::<Value>(m)
                .map_err(|e| format!("auth.clientMetadata: {}", one_line(&e.to_string())))
        })
        .transpose()?
        .and_then(|v| v.as_object().cloned());
    let redirect_uri = js_string(&auth, "redirectUri")
        .or_else(|| {
            metadata.as_ref().and_then(|m| m.get("redirect_uris")?.get(0)?.as_str().map(str::to_string))
        })
        .ok_or("auth.redirectUri (or auth.clientMetadata.redirect_uris) is needed: the page the sign-in comes back to.")?;
    // A WebCrypto private key (ECDSA P-256) the client's assertions are signed with.
    let client_key = js_sys::Reflect::get(&auth, &JsValue::from_str("clientKey"))
        .ok()
        .filter(JsValue::is_object);
    let config = AuthConfig {
        redirect_uri,
        client_id: js_string(&auth, "clientId"),
        client_secret: js_string(&auth, "clientSecret"),
        client_issuer: js_string(&auth, "clientIssuer"),
        client_metadata_url: js_string(&auth, "clientMetadataUrl"),
        assertion: js_string(&auth, "assertion"),
        client_metadata: metadata,
        client_key: client_key.is_some(),
        enterprise: enterprise_idp(&auth),
    };
    let storage = js_sys::Reflect::get(&auth, &JsValue::from_str("tokens"))
        .ok()
        .filter(JsValue::is_object);
    let hooks = AuthHooks {
        authorizer: Authorizer::new(url.trim(), config),
        redirect,
        storage: storage.clone(),
        client_key,
    };
    Ok(Some((hooks, storage)))
}

/// `auth.enterprise` `{tokenEndpoint, idToken, clientId?, clientSecret?}` → the identity provider
/// of enterprise-managed authorization (SEP-990); `None` without both required fields.
fn enterprise_idp(auth: &JsValue) -> Option<EnterpriseIdp> {
    let e = js_sys::Reflect::get(auth, &JsValue::from_str("enterprise"))
        .ok()
        .filter(JsValue::is_object)?;
    Some(EnterpriseIdp {
        token_endpoint: js_string(&e, "tokenEndpoint")?,
        id_token: js_string(&e, "idToken")?,
        client_id: js_string(&e, "clientId"),
        client_secret: js_string(&e, "clientSecret"),
    })
}

/// Tokens the host's storage holds for `url` (anything unreadable is ignored: a new sign-in).
async fn stored_tokens(storage: &JsValue, url: &str) -> Option<Tokens> {
    let get = js_sys::Reflect::get(storage, &JsValue::from_str("get"))
        .ok()?
        .dyn_into::<Function>()
        .ok()?;
    let value = get.call1(storage, &JsValue::from_str(url)).ok()?;
    let value = wasm_bindgen_futures::JsFuture::from(Promise::resolve(&value))
        .await
        .ok()?;
    serde_json::from_str(&value.as_string()?).ok()
}

/// `serde-wasm-bindgen` cannot read functions: a copy of the options without them.
fn strip_functions(options: &JsValue) -> JsValue {
    if !options.is_object() {
        return options.clone();
    }
    let copy = Object::new();
    for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
        if let Ok(value) = js_sys::Reflect::get(options, &key) {
            // `auth` holds functions and the host's storage: read by `auth_hooks`.
            if !value.is_function() && key.as_string().as_deref() != Some("auth") {
                let _ = js_sys::Reflect::set(&copy, &key, &value);
            }
        }
    }
    copy.into()
}

async fn connect_inner(
    url: String,
    options: ConnectOptions,
    on_tools_changed: Option<Function>,
    on_elicitation: Option<Function>,
    auth: Option<(AuthHooks, Option<JsValue>)>,
) -> JsValue {
    let mut config = Config::new(url.clone());
    config.elicitation = on_elicitation.is_some();
    config.token = options.token.filter(|t| !t.is_empty());
    if let Some(choice) = options.protocol.as_deref() {
        match ProtocolChoice::parse(choice) {
            Some(p) => config.protocol = p,
            None => {
                return failure(&format!(
                    "Unknown protocol option {choice:?}: use \"legacy\", \"modern\" or \"auto\"."
                ))
            }
        }
    }
    if let Some(info) = options.client_info {
        if let Some(name) = info.name {
            config.client_name = name;
        }
        if let Some(version) = info.version {
            config.client_version = version;
        }
    }
    if let Some(max) = options.max_result_bytes {
        config.max_response_bytes = max;
    }
    let limits = ResultLimits {
        max_bytes: usize::try_from(config.max_response_bytes).unwrap_or(usize::MAX),
    };
    let client = match FetchClient::new(config) {
        Ok(c) => c,
        Err(e) => return failure(&e.to_string()),
    };
    if let Some(hook) = on_elicitation {
        client.set_on_elicitation(Some(elicitation_hook(client.clone(), hook)));
    }
    if let Some((mut hooks, storage)) = auth {
        if let Some(tokens) = match &storage {
            Some(s) => stored_tokens(s, &url).await,
            None => None,
        } {
            hooks.authorizer.restore(tokens);
        }
        client.set_auth(hooks);
    }
    let info = match client.connect().await {
        Ok(info) => info,
        Err(e) => return failure(&e.to_string()),
    };
    let server_id = options.server_id.unwrap_or_else(|| url.clone());
    let (toolbox, toolbox_js) = match list_toolbox(&client, &server_id).await {
        Ok(t) => t,
        Err(e) => return failure(&e),
    };
    let mut notices = client.take_notices();
    notices.extend(toolbox.notices.iter().cloned());
    let shared = Rc::new(RefCell::new(Shared {
        client: client.clone(),
        info,
        url,
        server_id,
        toolbox,
        toolbox_js,
        notices,
        limits,
    }));
    if let Some(callback) = on_tools_changed {
        let weak = Rc::downgrade(&shared);
        client.set_on_tools_changed(Some(Box::new(move || {
            let Some(shared) = weak.upgrade() else { return };
            let callback = callback.clone();
            wasm_bindgen_futures::spawn_local(async move {
                if refresh(&shared).await.is_ok() {
                    let toolbox = shared.borrow().toolbox_js.clone();
                    let _ = callback.call1(&JsValue::NULL, &toolbox);
                }
            });
        })));
    }
    ToolServerHandle { shared }.into()
}

/// The host's `onElicitation(form) → Promise<{action, content?}>` as the transport's hook; a hook that
/// throws or rejects declines.
fn elicitation_hook(client: FetchClient, hook: Function) -> crate::mcp::fetch::ElicitFn {
    // The hook lives inside the client it answers: `FetchClient::close` drops it, breaking the cycle.
    Box::new(move |id, form| {
        let client = client.clone();
        let answer = hook.call1(&JsValue::NULL, &elicitation_to_js(&form));
        wasm_bindgen_futures::spawn_local(async move {
            let action = match answer {
                Ok(value) => {
                    let resolved =
                        wasm_bindgen_futures::JsFuture::from(Promise::resolve(&value)).await;
                    resolved
                        .map(|v| elicit_action_from_js(&v))
                        .unwrap_or(crate::mcp::elicit::Action::Decline)
                }
                Err(_) => crate::mcp::elicit::Action::Decline,
            };
            client.answer_elicitation(id, action);
        });
    })
}

/// Every page of tools/list → the toolbox (its buttons' forms left out: the calls need names and
/// markers) and the page's toolbox object, whose forms and schemas cross once per distinct one
/// ([`listed_toolbox_to_js`], as parseToolList's).
async fn list_toolbox(client: &FetchClient, server_id: &str) -> Result<(Toolbox, JsValue), String> {
    let tools = client.list_tools().await.map_err(|e| e.to_string())?;
    let (mut toolbox, entries) =
        parse_tool_list_with(&Value::Array(tools), Some(server_id), &mut SentSchemas)
            .map_err(|e| format!("The server's tool list is unusable: {e}"))?;
    let toolbox_js = listed_toolbox_to_js(&mut toolbox, &entries)
        .map_err(|_| "The tool list could not be converted for the page.".to_string())?;
    Ok((toolbox, toolbox_js))
}

async fn refresh(shared: &Rc<RefCell<Shared>>) -> Result<JsValue, String> {
    let (client, server_id) = {
        let s = shared.borrow();
        (s.client.clone(), s.server_id.clone())
    };
    let (toolbox, toolbox_js) = list_toolbox(&client, &server_id).await?;
    let mut s = shared.borrow_mut();
    s.notices.extend(client.take_notices());
    s.toolbox = toolbox;
    s.toolbox_js = toolbox_js.clone();
    Ok(toolbox_js)
}

/// Options of `ToolServer.call`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct CallJsOptions {
    timeout_ms: Option<f64>,
}

#[wasm_bindgen(js_class = ToolServer)]
impl ToolServerHandle {
    /// Always true: lets a host tell a ToolServer from `{ok: false, error}`.
    #[wasm_bindgen(getter, unchecked_return_type = "Success")]
    pub fn ok(&self) -> bool {
        true
    }
    /// `serverInfo.name`, else the URL's host with its port. Plain text.
    #[wasm_bindgen(getter, js_name = serverName)]
    pub fn server_name(&self) -> String {
        self.shared.borrow().info.display_name().to_string()
    }
    /// `serverInfo.version`, or null when the server gives none.
    #[wasm_bindgen(getter, js_name = serverVersion, unchecked_return_type = "string | null")]
    pub fn server_version(&self) -> JsValue {
        match self.shared.borrow().info.version() {
            Some(version) => JsValue::from_str(version),
            None => JsValue::NULL,
        }
    }
    /// The negotiated protocol version.
    #[wasm_bindgen(getter, js_name = protocolVersion)]
    pub fn protocol_version(&self) -> String {
        self.shared.borrow().info.protocol_version.clone()
    }
    /// The URL connected to.
    #[wasm_bindgen(getter)]
    pub fn url(&self) -> String {
        self.shared.borrow().url.clone()
    }
    /// The server's `instructions` (untrusted text).
    #[wasm_bindgen(getter)]
    pub fn instructions(&self) -> Option<String> {
        self.shared.borrow().info.instructions.clone()
    }
    /// §3: the toolbox (as `parseToolList` returns it).
    #[wasm_bindgen(getter, unchecked_return_type = "Toolbox")]
    pub fn toolbox(&self) -> JsValue {
        self.shared.borrow().toolbox_js.clone()
    }
    /// What happened on the way (protocol fallbacks, re-initialisation, discovery notices).
    #[wasm_bindgen(getter, unchecked_return_type = "string[]")]
    pub fn notices(&self) -> js_sys::Array {
        let mut s = self.shared.borrow_mut();
        let fresh = s.client.take_notices();
        s.notices.extend(fresh);
        string_array(&s.notices)
    }

    /// §6: calls a tool. `onProgress(fraction|null, message|null)`; aborting `signal` cancels (the
    /// server is told, the fetch is aborted, a late result is discarded); the timeout is the
    /// contract's unless `timeoutMs` is given. Resolves to the contract core's interpretation
    /// (`{ok: true, result, summary, warnings}`) or `{ok: false, error, cancelled?, timedOut?}`.
    #[wasm_bindgen(unchecked_return_type = "Promise<CallOutcome>")]
    pub fn call(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
        #[wasm_bindgen(unchecked_param_type = "CallOptions | null | undefined")] options: JsValue,
    ) -> Promise {
        self.call_as(name, args, options, OutcomeShape::Core)
    }

    /// Lists the tools again (all pages) and returns the new toolbox.
    #[wasm_bindgen(js_name = refreshTools, unchecked_return_type = "Promise<Toolbox | Failure>")]
    pub fn refresh_tools(&self) -> Promise {
        let shared = self.shared.clone();
        future_to_promise(async move { Ok(refresh(&shared).await.unwrap_or_else(|e| failure(&e))) })
    }

    /// Closes the connection (DELETE of a legacy session; 405 is fine).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn close(&self) -> Promise {
        let client = self.shared.borrow().client.clone();
        future_to_promise(async move {
            let _ = client.close().await;
            Ok(JsValue::UNDEFINED)
        })
    }
}

impl ToolServerHandle {
    /// [`ToolServerHandle::call`], its outcome shaped for the core API or for Megane Builder's
    /// seam (`megane.rs`: `{ok: true, result, summary}` or `{ok: false, error}` in Builder's
    /// words, nothing more).
    pub(super) fn call_as(
        &self,
        name: String,
        args: JsValue,
        options: JsValue,
        shape: OutcomeShape,
    ) -> Promise {
        let shared = self.shared.clone();
        let get = |key: &str| {
            js_sys::Reflect::get(&options, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
        };
        let on_progress = get("onProgress").dyn_into::<Function>().ok();
        let signal = get("signal").dyn_into::<web_sys::AbortSignal>().ok();
        let parsed: Result<CallJsOptions, JsError> =
            from_js_or_default(strip_functions(&options), "options");
        let arguments: Result<Value, JsError> = json_from_js_or_default(args, "args");
        future_to_promise(async move {
            let options = parsed.map_err(JsValue::from)?;
            let arguments = arguments.map_err(JsValue::from)?;
            // §6: a tool this server does not list is refused here, as offline, without a request.
            if let Some(error) = refuse_call(shared.borrow().toolbox.names(), &name) {
                return Ok(failure(&error));
            }
            let (client, button, output_schema, limits) = {
                let s = shared.borrow();
                (
                    s.client.clone(),
                    s.toolbox.buttons.iter().find(|b| b.name == name).cloned(),
                    s.toolbox
                        .plain_tools
                        .iter()
                        .find(|t| t.name == name)
                        .and_then(|t| t.output_schema.clone()),
                    s.limits,
                )
            };
            let progress = on_progress.map(|f| {
                Box::new(move |fraction: Option<f64>, message: Option<String>| {
                    let fraction = fraction.map(JsValue::from_f64).unwrap_or(JsValue::NULL);
                    let message = message
                        .map(|m| JsValue::from_str(&m))
                        .unwrap_or(JsValue::NULL);
                    let _ = f.call2(&JsValue::NULL, &fraction, &message);
                }) as crate::mcp::fetch::ProgressFn
            });
            let call_options = CallOptions {
                expected_seconds: button.as_ref().and_then(|b| b.marker.expected_seconds),
                timeout_ms: options
                    .timeout_ms
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map(|t| t as u64),
                // A Builder tool's Structure is read while the answer comes in.
                scan_structure: button.is_some(),
            };
            let outcome = client
                .call_tool(&name, arguments, call_options, progress, signal)
                .await;
            Ok(match (outcome, button) {
                (Ok(raw), Some(button)) => {
                    let body = raw.get().as_bytes();
                    let outcome = match raw.take_prescanned() {
                        // Read while the body streamed in: only the rest is parsed now.
                        Some(prescanned) => interpret_call_prescanned(
                            &button.name,
                            &button.marker,
                            body,
                            prescanned,
                            &limits,
                        ),
                        None => interpret_call_bytes(&button.name, &button.marker, body, &limits),
                    };
                    if shape == OutcomeShape::Builder {
                        return builder_outcome(outcome, body, Some(&button.name))
                            .map_err(JsValue::from);
                    }
                    let refused =
                        outcome.is_err() && crate::contract::result::is_refusal_bytes(body);
                    super::results::interpreted_outcome(&button.name, outcome, refused)
                }
                (Ok(_), None) if shape == OutcomeShape::Builder => {
                    failure(&format!("{name} is not a Builder tool of this server."))
                }
                (Err(error), _) if shape == OutcomeShape::Builder => {
                    failure(&error.call_error_line())
                }
                (Ok(raw), None) => {
                    let body = raw.get().as_bytes();
                    let outcome =
                        interpret_plain_bytes(&name, output_schema.as_ref(), body, &limits);
                    let refused =
                        outcome.is_err() && crate::contract::result::is_refusal_bytes(body);
                    plain_outcome(outcome, refused)
                }
                (Err(error), _) => error_outcome(&error),
            })
        })
    }

    /// The current toolbox with its buttons' forms (for the `megane` entry's listing; the
    /// toolbox kept for calls holds none, see [`list_toolbox`]).
    pub(super) fn toolbox_value(&self) -> Toolbox {
        let mut toolbox = self.shared.borrow().toolbox.clone();
        crate::contract::discovery::restore_forms(&mut toolbox);
        toolbox
    }
}

/// Who a call's outcome is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OutcomeShape {
    /// The core API's `CallOutcome` (`types.d.ts`).
    Core,
    /// Megane Builder's `CallOutcome` (`megane.d.ts`).
    Builder,
}

/// A tool without the Builder marker: `{ok, raw, summary}` (no contract interpretation; its
/// `structuredContent` checked against its `outputSchema`), or the one-line failure.
fn plain_outcome(outcome: Result<PlainResult, String>, refused: bool) -> JsValue {
    match outcome {
        Ok(plain) => {
            let object = Object::new();
            set(&object, "ok", true);
            set(&object, "summary", plain.summary);
            set(&object, "raw", to_js(&plain.raw).unwrap_or(JsValue::NULL));
            object.into()
        }
        Err(error) => super::results::refusal(failure(&error), refused),
    }
}

/// A failed call's outcome: `{ok: false, error}` with `cancelled`, `timedOut`, or a JSON-RPC
/// error's `code` (and `refused` for -32602) beside the line.
pub(super) fn error_outcome(error: &McpError) -> JsValue {
    let outcome = failure(&error.call_error_line());
    match error {
        McpError::Cancelled => set(outcome.unchecked_ref(), "cancelled", true),
        McpError::Timeout { .. } => set(outcome.unchecked_ref(), "timedOut", true),
        McpError::Rpc { code, .. } => {
            set(outcome.unchecked_ref(), "code", *code as f64);
            if error.refuses_arguments() {
                set(outcome.unchecked_ref(), "refused", true);
            }
        }
        _ => {}
    }
    outcome
}

/// Builder's `CallOutcome` for an interpreted response `body`: `{ok: true, result, summary}`
/// (`summary` null when blank) or `{ok: false, error}`, the error in Builder's words
/// ([`builder_failure`]: a tool error's whole message, `The tool returned an invalid result: …`,
/// `The server failed: …`). `tool` is the tool's name when known (for the SDK's prefix).
pub(super) fn builder_outcome(
    outcome: Result<Interpreted, String>,
    body: &[u8],
    tool: Option<&str>,
) -> Result<JsValue, JsError> {
    match outcome {
        Ok(interpreted) => {
            let object = js_sys::Object::new();
            set(&object, "ok", true);
            set(&object, "result", to_js(&interpreted.result)?);
            let summary = if interpreted.summary.trim().is_empty() {
                JsValue::NULL
            } else {
                JsValue::from_str(&interpreted.summary)
            };
            set(&object, "summary", summary);
            Ok(object.into())
        }
        Err(line) => Ok(failure(&builder_failure(failure_kind(body, tool), &line))),
    }
}
