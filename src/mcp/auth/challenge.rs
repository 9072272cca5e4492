//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1): the `Bearer`
//! challenge's `resource_metadata`, `scope` and `error` parameters.
//!
//! Hand-written: the auth-param grammar (tokens and quoted strings with `\` escapes) is a few
//! lines, and no small, well-kept crate parses it without pulling an HTTP stack.

/// What a `Bearer` challenge asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// RFC 9728 §5.1: the URL of the protected resource metadata.
    pub resource_metadata: Option<String>,
    /// RFC 6750 §3: the scopes the request needs (space-separated in the header).
    pub scope: Option<Vec<String>>,
    /// RFC 6750 §3.1: `invalid_token`, `insufficient_scope`, …; RFC 9449 §9: `use_dpop_nonce`.
    pub error: Option<String>,
    /// The challenge's scheme is `DPoP` (RFC 9449 §7.1): the server wants sender-constrained tokens.
    pub dpop: bool,
}

impl Challenge {
    /// Whether the challenge is a 403 `insufficient_scope` (a step-up request).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The first `Bearer` or `DPoP` challenge of a `WWW-Authenticate` value (other schemes are skipped); `None` when
/// there is none. Parameter names are case-insensitive; a malformed tail ends parsing with what
/// was read so far.
pub fn parse(header: &str) -> Option<Challenge> {
    let mut p = Parser {
        s: header.as_bytes(),
        i: 0,
    };
    let mut found: Option<Challenge> = None;
    let mut in_bearer = false;
    loop {
        p.skip(|c| c == b' ' || c == b'\t' || c == b',');
        let Some(word) = p.token() else { break };
        p.skip(|c| c == b' ' || c == b'\t');
        if p.peek() == Some(b'=') && !p.token68_rest() {
            p.i += 1;
            p.skip(|c| c == b' ' || c == b'\t');
            let value = if p.peek() == Some(b'"') {
                p.quoted()
            } else {
                p.token()
            };
            let Some(value) = value else { break };
            if in_bearer {
                let c = found.get_or_insert_with(Challenge::default);
                match word.to_ascii_lowercase().as_str() {
                    "resource_metadata" => c.resource_metadata = Some(value),
                    "scope" => {
                        c.scope = Some(value.split_ascii_whitespace().map(str::to_string).collect())
                    }
                    "error" => c.error = Some(value),
                    _ => {}
                }
            }
        } else {
            // A new scheme; a token68 (`Basic abc==`) after it is skipped.
            if found.is_some() && in_bearer {
                break;
            }
            let dpop = word.eq_ignore_ascii_case("dpop");
            in_bearer = word.eq_ignore_ascii_case("bearer") || dpop;
            if in_bearer {
                found.get_or_insert_with(Challenge::default).dpop = dpop;
            }
        }
    }
    found
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }
    fn token(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/:".contains(&c));
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }
    /// `=` followed by `=`, `,` or the end: the padding of a token68, not a parameter.
    fn token68_rest(&self) -> bool {
        matches!(self.s.get(self.i + 1), None | Some(b'=') | Some(b','))
    }
    fn quoted(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        None
    }
}
