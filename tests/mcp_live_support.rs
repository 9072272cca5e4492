//! A minimal blocking HTTP/1.1 transport over loopback sockets that drives the sans-I/O core, shared
//! by the live test files with `#[path]` (one connection per request, chunked bodies fed to the core
//! piece by piece as they arrive). Also compiled as a test crate of its own, with no tests.
#![cfg(not(target_arch = "wasm32"))]
#![allow(dead_code)]

use megane_builder_client::mcp::{
    Client, Config, Event, ExchangeId, HttpRequest, McpError, OpId, OpResult,
};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn host_port_path(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    match rest.split_once('/') {
        Some((hp, path)) => (hp.to_string(), format!("/{path}")),
        None => (rest.to_string(), "/".to_string()),
    }
}

pub fn send_head(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<TcpStream> {
    let (hp, path) = host_port_path(url);
    let mut s = TcpStream::connect(&hp)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {hp}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    Ok(s)
}

pub type Head = (u16, Vec<(String, String)>);
pub type Full = (u16, Vec<(String, String)>, Vec<u8>);

pub fn read_head(r: &mut BufReader<TcpStream>) -> std::io::Result<Head> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok((status, headers))
}

/// Reads the body, calling `each` with every piece as it arrives; `each` returns false to stop.
pub fn read_body(
    r: &mut BufReader<TcpStream>,
    headers: &[(String, String)],
    mut each: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        loop {
            let mut line = String::new();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            if size == 0 {
                return Ok(());
            }
            let mut buf = vec![0; size];
            r.read_exact(&mut buf)?;
            let mut crlf = [0; 2];
            r.read_exact(&mut crlf)?;
            if !each(&buf) {
                return Ok(());
            }
        }
    }
    let mut buf = [0u8; 4096];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 || !each(&buf[..n]) {
            return Ok(());
        }
    }
}

pub fn raw(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<Full> {
    let s = send_head(method, url, headers, body)?;
    let mut r = BufReader::new(s);
    let (status, h) = read_head(&mut r)?;
    let mut out = Vec::new();
    read_body(&mut r, &h, |c| {
        out.extend_from_slice(c);
        true
    })?;
    Ok((status, h, out))
}

/// Drives a `Client` over real sockets.
pub struct Live {
    pub c: Client,
    pub t0: Instant,
    pub origin: String,
    pub queue: VecDeque<(ExchangeId, HttpRequest)>,
    pub events: Vec<Event>,
    pub aborted: Vec<ExchangeId>,
}

impl Live {
    pub fn new(config: Config) -> Live {
        let origin = config.origin.clone().unwrap_or_default();
        Live {
            c: Client::new(config).unwrap(),
            t0: Instant::now(),
            origin,
            queue: VecDeque::new(),
            events: Vec::new(),
            aborted: Vec::new(),
        }
    }
    pub fn now(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }
    pub fn pump(&mut self, hook: &mut dyn FnMut(&mut Client, &Event, u64)) {
        while let Some(e) = self.c.poll_event() {
            match e {
                Event::SendRequest { exchange, request } => {
                    self.queue.push_back((exchange, request))
                }
                Event::AbortExchange { exchange } => self.aborted.push(exchange),
                other => {
                    let now = self.now();
                    hook(&mut self.c, &other, now);
                    self.events.push(other);
                }
            }
        }
    }
    pub fn outcome(&self, op: OpId) -> Option<Event> {
        self.events
            .iter()
            .find(|e| matches!(e, Event::Response { op: o, .. } | Event::Failed { op: o, .. } if *o == op))
            .cloned()
    }
    /// Runs exchanges until `op` has an outcome.
    pub fn run(&mut self, op: OpId, hook: &mut dyn FnMut(&mut Client, &Event, u64)) -> Event {
        loop {
            self.pump(hook);
            if let Some(o) = self.outcome(op) {
                return o;
            }
            let now = self.now();
            self.c.handle_timeout(now);
            self.pump(hook);
            if let Some(o) = self.outcome(op) {
                return o;
            }
            let Some((ex, req)) = self.queue.pop_front() else {
                // Nothing to send: wait for the core's next deadline (a resumption, a timeout).
                let due = self
                    .c
                    .poll_timeout()
                    .expect("the client is waiting for nothing");
                let wait = due.saturating_sub(self.now());
                std::thread::sleep(Duration::from_millis(wait));
                continue;
            };
            let mut headers = req.headers.clone();
            if !self.origin.is_empty() {
                headers.push(("Origin".into(), self.origin.clone()));
            }
            let stream = match send_head(req.method.as_str(), &req.url, &headers, &req.body) {
                Ok(s) => s,
                Err(e) => {
                    let now = self.now();
                    self.c.handle_network_error(ex, &e.to_string(), now);
                    continue;
                }
            };
            let mut r = BufReader::new(stream);
            let (status, h) = match read_head(&mut r) {
                Ok(x) => x,
                Err(e) => {
                    let now = self.now();
                    self.c.handle_network_error(ex, &e.to_string(), now);
                    continue;
                }
            };
            let now = self.now();
            self.c.handle_head(ex, status, &h, now);
            self.pump(hook);
            let t0 = self.t0;
            let mut stopped = self.aborted.contains(&ex);
            // A scanned answer's body is kept here, for the core's replay (`wants_replay`, after
            // a chunk or the end: fed again from the first, then the stream read on).
            let mut keep = self.c.keeps_chunks(ex);
            let mut kept: Vec<Vec<u8>> = Vec::new();
            if !stopped {
                let result = read_body(&mut r, &h, |chunk| {
                    if keep {
                        kept.push(chunk.to_vec());
                    }
                    let now = t0.elapsed().as_millis() as u64;
                    // A host's timer would have fired before this chunk arrived.
                    self.c.handle_timeout(now);
                    self.pump(hook);
                    if self.aborted.contains(&ex) {
                        return false;
                    }
                    self.c.handle_chunk(ex, chunk, now);
                    if keep && self.c.wants_replay(ex) {
                        keep = false;
                        for chunk in kept.drain(..) {
                            self.c.handle_chunk(ex, &chunk, now);
                        }
                    }
                    self.pump(hook);
                    !self.aborted.contains(&ex)
                });
                stopped = self.aborted.contains(&ex);
                if let Err(e) = result {
                    if !stopped {
                        let now = self.now();
                        self.c.handle_network_error(ex, &e.to_string(), now);
                        continue;
                    }
                }
            }
            if !stopped {
                let now = self.now();
                self.c.handle_end(ex, now);
                if self.c.wants_replay(ex) {
                    for chunk in kept.drain(..) {
                        self.c.handle_chunk(ex, &chunk, now);
                    }
                    self.c.handle_end(ex, now);
                }
            }
        }
    }
    pub fn run_ok(&mut self, op: OpId) -> OpResult {
        match self.run(op, &mut |_, _, _| {}) {
            Event::Response { result, .. } => result,
            other => panic!("{other:?}"),
        }
    }
    pub fn run_err(&mut self, op: OpId) -> McpError {
        match self.run(op, &mut |_, _, _| {}) {
            Event::Failed { error, .. } => error,
            other => panic!("{other:?}"),
        }
    }
}
