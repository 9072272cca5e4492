//! The sans-I/O core as the client under test of `@modelcontextprotocol/conformance` (client
//! scenarios). `tests/peers/run_conformance_suite.sh` runs the suite, which starts a mock server per scenario
//! and runs `tests/peers/conformance_client.sh <url>`, which runs this test with the URL in
//! `MCP_CONFORMANCE_URL` (the scenario name is in `MCP_CONFORMANCE_SCENARIO`, its context in
//! `MCP_CONFORMANCE_CONTEXT`, the protocol mode in `MBC_CONFORMANCE_PROTOCOL`). The suite's checks decide
//! the outcome; this test only fails when the client cannot finish its script. The driver carries one
//! exchange at a time (blocking sockets), so it cannot answer an elicitation while the call's stream is
//! open: that scenario is run with the package in Node (`tests/node/conformance-client.mjs`).
#![cfg(not(target_arch = "wasm32"))]

#[path = "mcp_live_support.rs"]
mod support;

use megane_builder_client::mcp::auth::{
    AuthConfig, Authorizer, EnterpriseIdp, Step, Tokens, ENTROPY_BYTES,
};
use megane_builder_client::mcp::signin::{AfterFailure, SignIn, Tries};
use megane_builder_client::mcp::{
    CallOptions, Client, Config, Event, McpError, OpId, OpResult, ProtocolChoice,
};
use serde_json::json;
use support::*;

/// The host's `redirect` hook in a test: the user agrees at once, so the authorization server
/// redirects straight back; follow that redirect as a browser would and hand back where it
/// points (the callback URL), without loading it.
fn redirect(authorization_url: &str) -> Result<String, String> {
    let (status, headers, _) =
        raw("GET", authorization_url, &[], b"").map_err(|e| e.to_string())?;
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("location"))
        .map(|(_, v)| v.clone())
        .ok_or_else(|| {
            format!("the authorization endpoint answered HTTP {status} without a redirect")
        })
}

/// Drives one authorization flow over blocking sockets (the sans-I/O `Flow` decides everything).
fn drive(flow: &mut megane_builder_client::mcp::auth::Flow) -> Result<Tokens, McpError> {
    loop {
        match flow.step() {
            Step::Send(req) => match raw(req.method.as_str(), &req.url, &req.headers, &req.body) {
                Ok((status, headers, body)) => flow.handle_response(status, &headers, &body),
                Err(e) => flow.handle_network_error(&e.to_string()),
            },
            Step::Redirect(url) => match redirect(&url) {
                Ok(callback) => flow.handle_callback(&callback),
                Err(e) => return Err(McpError::Authorization { message: e }),
            },
            // This driver holds no key (the ES256 client assertion is signed in the Node driver).
            Step::Sign => {
                flow.signing_input(0);
                flow.handle_signature(&[]);
            }
            Step::Done(tokens) => return Ok(*tokens),
            Step::Failed(e) => return Err(e),
        }
    }
}

/// Runs the operation `start` makes; when it fails, does what the core's sign-in policy says
/// (`mcp::signin`: sign in on a 401 or a 403 `insufficient_scope`, at most twice per operation) and
/// runs it again. One operation at a time here, so there is never a sign-in to wait for.
fn run_authorized(
    l: &mut Live,
    signin: &mut SignIn,
    config: &Config,
    start: &dyn Fn(&mut Client, u64) -> OpId,
) -> Event {
    let mut tries = Tries::default();
    loop {
        let now = l.now();
        let op = start(&mut l.c, now);
        let outcome = l.run(op, &mut |_, _, _| {});
        let Event::Failed { error, .. } = &outcome else {
            return outcome;
        };
        let entropy = || {
            let mut entropy = [0u8; ENTROPY_BYTES];
            getrandom::fill(&mut entropy).expect("getrandom");
            Ok(entropy)
        };
        let next = match signin.after_failure(&mut tries, &mut l.c, error, entropy) {
            Ok(next) => next,
            Err(error) => return Event::Failed { op, error },
        };
        match next {
            AfterFailure::Fail => return outcome,
            AfterFailure::Retry => continue,
            AfterFailure::WaitThenRetry | AfterFailure::WaitThenFail => {
                unreachable!("one operation at a time: no other sign-in runs")
            }
            AfterFailure::SignIn(mut flow) => {
                let tokens = drive(&mut flow);
                if let Ok(tokens) = &tokens {
                    eprintln!("signed in: {tokens:?}");
                }
                match signin.finish(tokens, &mut tries, &mut l.c, config) {
                    Ok(signed) if signed.new_client => {
                        // The new client numbers its operations afresh: forget the old one's outcomes.
                        l.events.clear();
                        l.queue.clear();
                    }
                    Ok(_) => {}
                    Err(error) => {
                        eprintln!("sign-in: {error}");
                        return Event::Failed { op, error };
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "run by tests/peers/run_conformance_suite.sh"]
fn conformance_client() {
    let url = std::env::var("MCP_CONFORMANCE_URL").expect("MCP_CONFORMANCE_URL");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario} at {url}");
    let mut config = Config::new(url);
    // The protocol mode of the leg (tests/peers/run_conformance_suite.sh), default legacy.
    if let Some(p) = std::env::var("MBC_CONFORMANCE_PROTOCOL")
        .ok()
        .and_then(|p| ProtocolChoice::parse(&p))
    {
        config.protocol = p;
    }
    // The host's sign-in settings: a pre-registered client when the scenario gives one, a client
    // ID metadata document URL, and dynamic registration otherwise.
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let auth = Authorizer::new(
        &config.url,
        AuthConfig {
            redirect_uri: "http://localhost:3000/callback".into(),
            client_id: context["client_id"].as_str().map(str::to_string),
            client_secret: context["client_secret"].as_str().map(str::to_string),
            client_issuer: context["issuer"].as_str().map(str::to_string),
            assertion: context["valid_jwt"].as_str().map(str::to_string),
            client_key: false,
            enterprise: context["idp_id_token"].as_str().map(|t| EnterpriseIdp {
                token_endpoint: context["idp_token_endpoint"].as_str().unwrap_or("").into(),
                id_token: t.into(),
                client_id: context["idp_client_id"].as_str().map(str::to_string),
                client_secret: None,
            }),
            client_metadata_url: Some("https://conformance-test.local/client-metadata.json".into()),
            client_metadata: json!({"client_name": "megane-builder-client-conformance"})
                .as_object()
                .cloned(),
        },
    );
    let mut l = Live::new(config.clone());
    let mut signin = SignIn::new();
    signin.set_authorizer(auth, &mut l.c, &mut config);
    let outcome = run_authorized(&mut l, &mut signin, &config, &|c, now| c.connect(now));
    let Event::Response {
        result: OpResult::Connected(info),
        ..
    } = outcome
    else {
        // A refused sign-in is the host's script ending as it should (the scenario checks it).
        if let Event::Failed {
            error: McpError::Authorization { .. },
            ..
        } = &outcome
        {
            eprintln!("connect: {outcome:?}");
            println!("mbc-conformance-driver: finished");
            return;
        }
        panic!("connect: {outcome:?}");
    };
    eprintln!(
        "connected: {} {}",
        info.display_name(),
        info.protocol_version
    );
    let outcome = run_authorized(&mut l, &mut signin, &config, &|c, now| c.list_tools(now));
    let Event::Response {
        result: OpResult::Tools(tools),
        ..
    } = outcome
    else {
        // A refused sign-in is the host's script ending as it should (the scenario checks it).
        if let Event::Failed {
            error: McpError::Authorization { .. },
            ..
        } = &outcome
        {
            eprintln!("tools/list: {outcome:?}");
            println!("mbc-conformance-driver: finished");
            return;
        }
        panic!("tools/list: {outcome:?}");
    };
    // What a host would call: the context's tool calls, the schema echo of its scenario, else every
    // tool with the arguments a user would type for the suite's `add_numbers`.
    let plan: Vec<(String, serde_json::Value)> =
        if let Some(calls) = context["toolCalls"].as_array() {
            calls
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or_default().to_string(),
                        c["arguments"].clone(),
                    )
                })
                .collect()
        } else if scenario == "json-schema-2020-12-preservation" {
            let focal = tools.iter().find(|t| t["name"] != "json_schema_echo");
            focal
                .map(|f| {
                    vec![(
                        "json_schema_echo".to_string(),
                        json!({"schema": f["inputSchema"]}),
                    )]
                })
                .unwrap_or_default()
        } else {
            tools
                .iter()
                .map(|tool| {
                    let name = tool["name"].as_str().unwrap_or_default().to_string();
                    let args = match name.as_str() {
                        "add_numbers" => json!({"a": 2, "b": 3}),
                        _ => json!({}),
                    };
                    (name, args)
                })
                .collect()
        };
    for (name, args) in plan {
        let call =
            |c: &mut Client, now| c.call_tool(&name, args.clone(), &CallOptions::default(), now);
        match run_authorized(&mut l, &mut signin, &config, &call) {
            megane_builder_client::mcp::Event::Response { result, .. } => {
                eprintln!("{name}: {result:?}")
            }
            other => eprintln!("{name}: {other:?}"),
        }
    }
    let op = l.c.close(l.now());
    l.run(op, &mut |_, _, _| {});
    // The gate (tests/peers/conformance_gate.mjs) looks for this line: the host finished its script.
    println!("mbc-conformance-driver: finished");
}
