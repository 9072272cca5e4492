//! The fetch transport under Node (wasm-bindgen-test's default runner), against the Python SDK peer.
//! Run with `tests/peers/run_wasm_node_tests.sh`, which starts the peer and passes its URL at compile
//! time in `MCP_PEER_URL`.
#![cfg(target_arch = "wasm32")]

use megane_builder_client::mcp::fetch::FetchClient;
use megane_builder_client::mcp::{CallOptions, Config, McpError, ProtocolChoice};
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen_test::*;

const PEER_URL: Option<&str> = option_env!("MCP_PEER_URL");
const TOKEN: &str = "live-token-5d1e";

fn recorded(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn tools_list() -> Value {
    recorded(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/megane-recorded/tools-list.json"
    )))
}

fn polymer() -> Value {
    recorded(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/megane-recorded/call-polymer_chain.json"
    )))
}

fn liquid_box() -> Value {
    recorded(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/megane-recorded/call-liquid_box.json"
    )))
}

/// The peer's log of the cancellations it saw (`GET /peer/cancellations`, read with the global fetch).
async fn peer_cancellations() -> Vec<Value> {
    use wasm_bindgen::JsCast;
    let url = PEER_URL.unwrap().replace("/mcp", "/peer/cancellations");
    let global = js_sys::global();
    let fetch: js_sys::Function = js_sys::Reflect::get(&global, &"fetch".into())
        .unwrap()
        .unchecked_into();
    let resp: web_sys::Response = wasm_bindgen_futures::JsFuture::from(
        fetch
            .call1(&global, &url.into())
            .unwrap()
            .unchecked_into::<js_sys::Promise>(),
    )
    .await
    .unwrap()
    .unchecked_into();
    let text = wasm_bindgen_futures::JsFuture::from(resp.text().unwrap())
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&text.as_string().unwrap()).unwrap();
    v["cancellations"].as_array().unwrap().clone()
}

async fn sleep_ms(ms: i32) {
    use wasm_bindgen::JsCast;
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let set: js_sys::Function = js_sys::Reflect::get(&global, &"setTimeout".into())
            .unwrap()
            .unchecked_into();
        let _ = set.call2(&global, &resolve, &ms.into());
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

fn client() -> FetchClient {
    let url = PEER_URL.expect("MCP_PEER_URL: run tests/peers/run_wasm_node_tests.sh");
    let mut cfg = Config::new(url);
    cfg.token = Some(TOKEN.into());
    cfg.protocol = ProtocolChoice::Legacy; // the transport against the legacy peer
    FetchClient::new(cfg).unwrap()
}

fn normalised(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        if o.get("isError") == Some(&Value::Bool(false)) {
            o.remove("isError");
        }
        if o.get("resultType").and_then(Value::as_str) == Some("complete") {
            o.remove("resultType");
        }
    }
    v
}

#[wasm_bindgen_test]
async fn connect_list_call_with_progress_and_close() {
    let c = client();
    let info = c.connect().await.unwrap();
    assert_eq!(info.display_name(), "builder-test-peer");
    let tools = c.list_tools().await.unwrap();
    assert_eq!(Value::Array(tools), tools_list()["tools"]);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    let rec = polymer();
    let result = c
        .call_tool(
            "polymer_chain",
            rec["arguments"].clone(),
            CallOptions::default(),
            Some(Box::new(move |f, m| sink.borrow_mut().push((f, m)))),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        normalised(result.to_value()),
        normalised(rec["result"].clone())
    );
    let fractions: Vec<Option<f64>> = seen.borrow().iter().map(|(f, _)| *f).collect();
    assert_eq!(
        fractions,
        (0..=5).map(|i| Some(i as f64 / 5.0)).collect::<Vec<_>>()
    );
    c.close().await.unwrap();
}

#[wasm_bindgen_test]
async fn abort_signal_cancels_and_the_server_sees_it() {
    // liquid_box here, polymer_chain in the timeout test: the peer's log tells the two apart.
    let c = client();
    c.connect().await.unwrap();
    let controller = web_sys::AbortController::new().unwrap();
    let signal = controller.signal();
    let rec = liquid_box();
    let result = c
        .call_tool(
            "liquid_box",
            rec["arguments"].clone(),
            CallOptions::default(),
            Some(Box::new(move |_, _| controller.abort())),
            Some(signal),
        )
        .await;
    assert_eq!(result.unwrap_err(), McpError::Cancelled);
    // The notification went out on its own request; a ping after it proves the session is fine.
    c.ping().await.unwrap();
    // The cancellation and the ping travel on separate requests: give the server a moment.
    let mut seen = Vec::new();
    for _ in 0..40 {
        seen = peer_cancellations().await;
        if seen.iter().any(|e| e["tool"] == "liquid_box") {
            break;
        }
        sleep_ms(50).await;
    }
    assert!(seen.iter().any(|e| e["tool"] == "liquid_box"), "{seen:?}");
}

#[wasm_bindgen_test]
async fn timeout_is_reported_as_a_timeout() {
    let c = client();
    c.connect().await.unwrap();
    let rec = polymer();
    let result = c
        .call_tool(
            "polymer_chain",
            rec["arguments"].clone(),
            CallOptions {
                expected_seconds: None,
                timeout_ms: Some(200),
                scan_structure: false,
            },
            None,
            None,
        )
        .await;
    assert_eq!(result.unwrap_err(), McpError::Timeout { seconds: 1 });
}

#[wasm_bindgen_test]
async fn wrong_token_and_no_server() {
    let url = PEER_URL.unwrap();
    let mut cfg = Config::new(url);
    cfg.token = Some("wrong".into());
    let c = FetchClient::new(cfg).unwrap();
    assert_eq!(
        c.connect().await.unwrap_err(),
        McpError::Unauthorized { token_given: true }
    );
    let c = FetchClient::new(Config::new("http://127.0.0.1:9/mcp")).unwrap();
    let e = c.connect().await.unwrap_err().to_string();
    assert!(
        e.starts_with("Could not reach http://127.0.0.1:9/mcp: is the server running?"),
        "{e}"
    );
}

#[wasm_bindgen_test]
async fn a_redirect_is_refused_with_the_target_host_named() {
    // The peer answers /redirect/mcp with 307 to the same peer as `localhost`.
    let url = PEER_URL.unwrap();
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/mcp");
    let mut cfg = Config::new(url.replace("/mcp", "/redirect/mcp"));
    cfg.token = Some(TOKEN.into());
    let c = FetchClient::new(cfg).unwrap();
    let e = c.connect().await.unwrap_err();
    assert_eq!(
        e,
        McpError::Redirected {
            target_host: Some(format!("localhost:{port}"))
        }
    );
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "The server redirected the request to localhost:{port}, and redirects are refused"
        )) && !text.contains('\n'),
        "{text}"
    );
}

#[wasm_bindgen_test]
async fn notification_stream_delivers_tools_changed() {
    let c = client();
    let info = c.connect().await.unwrap();
    assert!(info.tools_list_changed);
    let changed = Rc::new(RefCell::new(0));
    let sink = changed.clone();
    c.set_on_tools_changed(Some(Box::new(move || *sink.borrow_mut() += 1)));
    let stream = c.listen();
    // The peer announces a change after every call it finishes.
    let rec = liquid_box();
    c.call_tool(
        "liquid_box",
        rec["arguments"].clone(),
        CallOptions::default(),
        None,
        None,
    )
    .await
    .unwrap();
    for _ in 0..100 {
        if *changed.borrow() > 0 {
            break;
        }
        sleep_ms(50).await;
    }
    assert!(
        *changed.borrow() > 0,
        "no tools/list_changed on the notification stream"
    );
    c.cancel(stream);
    c.close().await.unwrap();
}
