//! Secrets hidden in untrusted text before it is shown: a server that echoes the bearer token (or
//! an authorization server that echoes a client secret) must not put it in a message. The MCP
//! client and the authorization flow make every error that carries a server's text through
//! [`Secrets::line`], which hides the secrets they hold and then makes the one line
//! ([`super::text::one_line`]); nothing else calls [`redact`].

use super::text::one_line;

/// Tokens shorter than this many characters are hidden only where they stand alone ([`redact`]).
pub const SHORT_TOKEN_CHARS: usize = 8;

/// Hides `token` in `text` (a server that echoes it must not leak it) as `<token>`: every
/// occurrence when the token has at least [`SHORT_TOKEN_CHARS`] characters; for a shorter token
/// only occurrences not inside a word (no letter or digit either side), so a one-letter token does
/// not mangle every word of a message while an echoed `Bearer ab` is still hidden.
pub fn redact(text: &str, token: Option<&str>) -> String {
    let t = match token {
        Some(t) if !t.is_empty() => t,
        _ => return text.to_string(),
    };
    if t.chars().count() >= SHORT_TOKEN_CHARS {
        return text.replace(t, "<token>");
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(t) {
        let before = text[..at].chars().next_back();
        let after = text[at + t.len()..].chars().next();
        let in_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        if in_word(before) || in_word(after) {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str("<token>");
        last = at + t.len();
    }
    out.push_str(&text[last..]);
    out
}

/// The secrets a maker of errors holds (a bearer token; a flow's client secret, assertion,
/// refresh token, PKCE verifier …), borrowed for the making of one message.
#[derive(Clone, Copy)]
pub struct Secrets<'a>(pub &'a [Option<&'a str>]);

impl Secrets<'_> {
    /// `text` with every secret hidden ([`redact`]), not yet made one line.
    pub fn hide(&self, text: &str) -> String {
        self.0
            .iter()
            .fold(text.to_string(), |shown, secret| redact(&shown, *secret))
    }

    /// Untrusted `text` as one line without the secrets: hidden first, then cut to one line, so a
    /// cut never leaves the start of a secret behind.
    pub fn line(&self, text: &str) -> String {
        one_line(&self.hide(text))
    }
}

impl std::fmt::Debug for Secrets<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets(<{} redacted>)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_leaves_no_part_of_a_secret() {
        let token = "s3cr3t-T0ken-value-0123456789";
        let text = format!("{} {token} after", "x".repeat(280));
        let line = Secrets(&[Some(token)]).line(&text);
        assert!(!line.contains("s3cr3t"), "{line}");
        assert!(line.ends_with("<token> after"), "{line}");
        let long = format!("{} {token}", "y".repeat(295));
        let line = Secrets(&[None, Some(token)]).line(&long);
        assert!(!line.contains("s3cr"), "{line}");
    }
}
