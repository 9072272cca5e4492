//! §6/§9: untrusted text (server titles, keys, messages, link parts) becomes one line on every
//! path that shows it: labels, hidden-tool reasons, notices, form errors, argument problems,
//! result errors, launch-link errors. One sanitiser (`wire::text`) decides; these tests feed
//! the same hostile strings to every path.
#![cfg(not(target_arch = "wasm32"))]

use megane_builder_client::contract::discovery::parse_tool_list;
use megane_builder_client::contract::launch::parse_launch_fragment;
use megane_builder_client::contract::marker::{Apply, Category, DocumentUse, Marker};
use megane_builder_client::contract::result::{interpret_call_value, interpret_unmarked_value};
use megane_builder_client::contract::validate::validate_arguments;
use megane_builder_client::contract::values::build_arguments;
use megane_builder_client::contract::values::FormContext;
use serde_json::{json, Value};

/// Strings a hostile server sends where one line is expected.
const HOSTILE: &[&str] = &[
    "Count\nx",
    "Count\r\nx",
    "\nCount",
    "Count\rx",
    "Count\u{2028}x",
    "Count\u{0b}x\u{0c}y",
    "Count\u{1b}[2J\u{7}x",
    "Count\u{202e}x",
    "Count\tx",
];

/// One line: no line break, no control character, no bidi override, and bounded.
fn assert_one_line(text: &str, what: &str) {
    assert!(
        !text.chars().any(|c| c.is_control()
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{85}' | '\u{202a}'..='\u{202e}'
            )),
        "{what}: not one line: {text:?}"
    );
    assert!(text.chars().count() <= 1000, "{what}: too long");
}

fn marker_json() -> Value {
    json!({"contract": 1, "category": "bulk", "apply": "new_document", "document": "none", "stochastic": false})
}

fn tools_list(hostile: &str) -> Value {
    json!({"tools": [
        // A title with a newline, as a tool title and as a property title.
        {"name": "count_tool", "title": hostile,
         "inputSchema": {"type": "object", "properties": {
             "count": {"type": "integer", "minimum": 1, "title": hostile},
             "mode": {"type": "string", "enum": ["a", hostile]}
         }, "required": ["count"]},
         "_meta": {"io.github.megane-labs/builder": marker_json()}},
        // A name with a newline and no title: the label falls back to the name.
        {"name": hostile, "inputSchema": {"type": "object"},
         "_meta": {"io.github.megane-labs/builder": marker_json()}},
        // Hostile marker values and property keys in reasons and form errors.
        {"name": "apply_tool", "inputSchema": {"type": "object"},
         "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": hostile}}},
        {"name": "document_tool", "inputSchema": {"type": "object"},
         "_meta": {"io.github.megane-labs/builder": {"contract": 1, "apply": "insert", "document": hostile}}},
        {"name": "key_tool", "inputSchema": {"type": "object", "properties": {hostile: {"type": "madeup"}}},
         "_meta": {"io.github.megane-labs/builder": marker_json()}},
        {"name": "widget_tool", "inputSchema": {"type": "object", "properties": {
             "w": {"type": "integer", "x-megane-widget": hostile},
             hostile: {"type": "integer", "x-megane-widget": "atom", "x-megane-of": hostile}}},
         "_meta": {"io.github.megane-labs/builder": marker_json()}},
        {"name": "plain", "title": hostile, "inputSchema": {"type": "object"}}
    ]})
}

#[test]
fn a_title_with_a_newline_gives_a_one_line_argument_error() {
    let toolbox = parse_tool_list(&tools_list("Count\nx"), None).unwrap();
    let button = toolbox
        .buttons
        .iter()
        .find(|b| b.name == "count_tool")
        .unwrap();
    let form = button.form.as_ref().unwrap();
    assert_eq!(form.fields[0].label, "Count");
    let problems = validate_arguments(&button.input_schema, Some(form), &json!({"count": 0}));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].message, "Count must be at least 1.");
}

#[test]
fn every_discovery_and_form_text_is_one_line() {
    for hostile in HOSTILE {
        let toolbox = parse_tool_list(&tools_list(hostile), None).unwrap();
        let what = format!("{hostile:?}");
        for b in &toolbox.buttons {
            assert_one_line(&b.label, &what);
            assert_one_line(&b.tooltip, &what);
            if let Some(reason) = &b.disabled_reason {
                assert_one_line(reason, &what);
            }
            if let Some(form) = &b.form {
                for f in &form.fields {
                    assert_one_line(&f.label, &what);
                }
            }
        }
        for t in toolbox
            .unsupported_contract
            .iter()
            .chain(&toolbox.unknown_apply)
            .chain(&toolbox.malformed)
        {
            assert_one_line(&t.label, &what);
            assert_one_line(&t.reason, &what);
        }
        for t in &toolbox.plain_tools {
            assert_one_line(&t.label, &what);
        }
        for n in &toolbox.notices {
            assert_one_line(n, &what);
        }
        assert!(!toolbox.unknown_apply.is_empty() && !toolbox.malformed.is_empty());
    }
}

#[test]
fn every_argument_problem_is_one_line() {
    for hostile in HOSTILE {
        let toolbox = parse_tool_list(&tools_list(hostile), None).unwrap();
        let button = toolbox
            .buttons
            .iter()
            .find(|b| b.name == "count_tool")
            .unwrap();
        let form = button.form.as_ref().unwrap();
        let bad = json!({"count": "many", "mode": 3, *hostile: 1});
        let mut schema = button.input_schema.clone();
        schema["additionalProperties"] = json!(false);
        schema["required"] = json!(["count", hostile]);
        let problems = validate_arguments(&schema, Some(form), &bad);
        assert!(problems.len() >= 3, "{problems:?}");
        for p in &problems {
            assert_one_line(&p.message, hostile);
        }
        let problems = validate_arguments(&schema, Some(form), &json!({}));
        for p in &problems {
            assert_one_line(&p.message, hostile);
        }
        // build_arguments reports through the same problems.
        if let Err(problems) = build_arguments(
            &button.marker,
            form,
            &button.input_schema,
            &json!({"count": 0}),
            &FormContext::default(),
        ) {
            for p in &problems {
                assert_one_line(&p.message, hostile);
            }
        }
    }
}

fn marker() -> Marker {
    Marker {
        contract: 1,
        category: Category::Bulk,
        apply: Apply::NewDocument,
        document: DocumentUse::None,
        stochastic: false,
        expected_seconds: None,
    }
}

#[test]
fn result_errors_show_the_first_line_only() {
    let traceback =
        "Packing failed: no room\nTraceback (most recent call last):\n  File \"x.py\", line 3";
    let tool_error = json!({"isError": true, "content": [{"type": "text", "text": traceback}]});
    let err = interpret_call_value("t", &marker(), &tool_error).unwrap_err();
    assert_eq!(err, "Packing failed: no room");
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": traceback}});
    let err = interpret_call_value("t", &marker(), &rpc).unwrap_err();
    assert_eq!(err, "The server failed: Packing failed: no room");
    let unmarked = interpret_unmarked_value(&tool_error).unwrap_err();
    assert_eq!(unmarked, "Packing failed: no room");
    for hostile in HOSTILE {
        let mut bad = json!({"structuredContent": {"contract": 1, "structure": {
            "elements": [8], "positions": [[0.0, 0.0, 0.0]], "cell": null, "bonds": [],
            "scalars": {*hostile: "x"}}}, "content": []});
        let err = interpret_call_value("t", &marker(), &bad).unwrap_err();
        assert_one_line(&err, hostile);
        bad["structuredContent"]["structure"]["scalars"] = json!({});
        bad["structuredContent"]["structure"]["chains"] = json!([hostile]);
        bad["structuredContent"]["structure"][*hostile] = json!(1);
        if let Err(err) = interpret_call_value("t", &marker(), &bad) {
            assert_one_line(&err, hostile);
        }
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": hostile}});
        assert_one_line(
            &interpret_call_value("t", &marker(), &rpc).unwrap_err(),
            hostile,
        );
        let tool_error = json!({"isError": true, "content": [{"type": "text", "text": hostile}]});
        assert_one_line(
            &interpret_call_value("t", &marker(), &tool_error).unwrap_err(),
            hostile,
        );
    }
}

#[test]
fn launch_link_errors_are_one_line() {
    for raw in [
        "ftp%3A%2F%2Fa%0Ab",
        "ftp%3A%2F%2Fa%E2%80%A8b",
        "javascript%3Aalert(1)%0D%0Ax",
    ] {
        let err = parse_launch_fragment(&format!("#tools={raw}")).unwrap_err();
        assert_one_line(&err, raw);
    }
}

#[test]
fn mcp_errors_use_the_same_sanitiser() {
    use megane_builder_client::mcp::errors::McpError;
    let error = McpError::server("KeyError: 'x'\nTraceback (most recent call last):\n  File");
    assert_eq!(error.to_string(), "The server failed: KeyError: 'x'");
    for hostile in HOSTILE {
        assert_one_line(&McpError::server(*hostile).call_error_line(), hostile);
    }
}

#[test]
fn an_echoed_token_is_hidden_without_mangling_words() {
    use megane_builder_client::wire::secrets::redact;
    let long = "s3cr3t-T0ken-value";
    assert_eq!(
        redact(&format!("bad token {long}; was x{long}y"), Some(long)),
        "bad token <token>; was x<token>y"
    );
    // A one-letter token (a bug once replaced every "a" of the message).
    assert_eq!(
        redact("The server failed: bad request", Some("a")),
        "The server failed: bad request"
    );
    assert_eq!(
        redact("Bearer a was refused (a)", Some("a")),
        "Bearer <token> was refused (<token>)"
    );
    assert_eq!(redact("abc abcd abc", Some("abc")), "<token> abcd <token>");
    assert_eq!(redact("no token here", None), "no token here");
    assert_eq!(redact("no token here", Some("")), "no token here");
}

/// Redaction where the client makes its errors and notices (issue 34): an echoed token is hidden
/// before the text is cut to one line, so a long message never shows the start of the token; and
/// the notice of a refused 2026-07-28 probe hides it too.
#[test]
fn the_client_hides_an_echoed_token_before_it_cuts_the_line() {
    use megane_builder_client::mcp::{Client, Config, Event, ExchangeId, ProtocolChoice};
    let token = "s3cr3t-T0ken-value-0123456789";
    let sent = |c: &mut Client| -> ExchangeId {
        loop {
            match c.poll_event() {
                Some(Event::SendRequest { exchange, .. }) => return exchange,
                Some(_) => {}
                None => panic!("nothing sent"),
            }
        }
    };
    let failed = |c: &mut Client| -> String {
        loop {
            match c.poll_event() {
                Some(Event::Failed { error, .. }) => return error.to_string(),
                Some(_) => {}
                None => panic!("no failure"),
            }
        }
    };
    let mut config = Config::new("http://127.0.0.1:9/mcp");
    config.token = Some(token.into());
    config.protocol = ProtocolChoice::Legacy;
    // A network failure whose detail echoes the token where a cut at 300 characters falls
    // inside it.
    let mut c = Client::new(config.clone()).unwrap();
    c.connect(0);
    let exchange = sent(&mut c);
    let detail = format!("{} {token} after", "x".repeat(280));
    c.handle_network_error(exchange, &detail, 0);
    let error = failed(&mut c);
    assert!(!error.contains("s3cr3t"), "{error}");
    assert!(error.contains("<token> after"), "{error}");
    // An HTTP error answer whose JSON-RPC message echoes it the same way.
    let mut c = Client::new(config.clone()).unwrap();
    c.connect(0);
    let exchange = sent(&mut c);
    let body = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32000, "message": format!("{} {token} after", "y".repeat(285))}});
    let head = [("Content-Type".to_string(), "application/json".to_string())];
    c.handle_head(exchange, 500, &head, 0);
    c.handle_chunk(exchange, body.to_string().as_bytes(), 0);
    c.handle_end(exchange, 0);
    let error = failed(&mut c);
    assert!(!error.contains("s3cr3t"), "{error}");
    // A refused 2026-07-28 probe (auto mode falls back with a notice that quotes the server).
    config.protocol = ProtocolChoice::Auto;
    let mut c = Client::new(config).unwrap();
    c.connect(0);
    let exchange = sent(&mut c);
    let body = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32601, "message": format!("no such method for {token}")}});
    c.handle_head(exchange, 200, &head, 0);
    c.handle_chunk(exchange, body.to_string().as_bytes(), 0);
    c.handle_end(exchange, 0);
    let mut notices = Vec::new();
    while let Some(event) = c.poll_event() {
        if let Event::Notice(n) = event {
            notices.push(n);
        }
    }
    assert_eq!(
        notices,
        ["The server did not accept the 2026-07-28 probe (no such method for <token>); using the initialize handshake."]
    );
}
