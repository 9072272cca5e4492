//! Untrusted text (from a server, a user, a link) made safe to show: the one place that decides how
//! such text becomes one line (§6 errors, labels, names in messages) or a block of plain text (§4.1
//! help, a tool's own error message as Megane Builder shows it), and how long it may be. Every
//! error, label, excerpt and block in the crate goes through here.
//!
//! Text is always rendered as text, never as HTML (§9); these functions only decide its shape.

use std::borrow::Cow;

/// Longest line (in characters, the `…` included) kept from untrusted text by [`one_line`].
pub const MAX_LINE_CHARS: usize = 300;

/// Longest block (in characters, the `…` included) kept by [`plain_text`] and [`message_block`].
pub const MAX_BLOCK_CHARS: usize = 2000;

/// Most lines (the last one's `…` included) kept of a tool's message by [`message_block`].
pub const MAX_MESSAGE_LINES: usize = 20;

/// Whether `c` ends a line: `\n`, `\r`, vertical tab, form feed, NEL, and the Unicode line and
/// paragraph separators.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whether `c` is dropped from shown text: bidirectional overrides and isolates (they can make a
/// message read differently from what it says) and the zero-width no-break space.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// Untrusted text with nothing a reader cannot see: every control character (line breaks and tabs
/// included) and invisible direction control dropped, then trimmed. For text that is read as one
/// token before it is shown (a URL, §9), where a hidden character could make it read differently
/// (`"\u{19}https://user:pw@host"` is a URL to a browser, which drops them, but not to a splitter).
pub fn without_hidden(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() || is_invisible(c);
    if !text.contains(hidden) {
        return Cow::Borrowed(text.trim());
    }
    Cow::Owned(
        text.chars()
            .filter(|c| !hidden(*c))
            .collect::<String>()
            .trim()
            .to_string(),
    )
}

/// §6: untrusted text as one line of at most [`MAX_LINE_CHARS`] characters: its first line that
/// has anything to show (the rest of a message, a traceback or an HTML page, is detail), other
/// control characters turned into spaces, invisible direction controls dropped, runs of
/// whitespace collapsed to one space, trimmed; cut with `…` when longer. Empty text gives `""`.
pub fn one_line(text: &str) -> String {
    one_line_max(text, MAX_LINE_CHARS)
}

/// [`one_line`] borrowing `text` when it is left as it is (the common case: nothing copied).
pub fn one_line_ref(text: &str) -> Cow<'_, str> {
    one_line_max_ref(text, MAX_LINE_CHARS)
}

/// [`one_line`] with its own limit, for short excerpts inside a longer message (a name, a URL):
/// the result has at most `max_chars` characters, the `…` included (`max_chars` ≥ 1).
pub fn one_line_max(text: &str, max_chars: usize) -> String {
    one_line_max_ref(text, max_chars).into_owned()
}

/// [`one_line_max`] borrowing `text` when it is left as it is (the common case: nothing copied).
pub fn one_line_max_ref(text: &str, max_chars: usize) -> Cow<'_, str> {
    let max_chars = max_chars.max(1);
    if is_plain_line(text, max_chars) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(one_line_built(text, max_chars))
}

/// [`one_line_max`] built character by character (what the plain-line shortcut must agree with).
fn one_line_built(text: &str, max_chars: usize) -> String {
    let line = text
        .split(is_line_break)
        .find(|l| {
            l.chars()
                .any(|c| !c.is_whitespace() && !c.is_control() && !is_invisible(c))
        })
        .unwrap_or("");
    let mut out = String::new();
    let mut count = 0;
    let mut pending_space = false;
    for c in line.chars().filter(|c| !is_invisible(*c)) {
        if c.is_whitespace() || c.is_control() {
            pending_space = count > 0;
            continue;
        }
        let needed = usize::from(pending_space) + 1;
        if count + needed > max_chars {
            // Cut: keep room for the ellipsis.
            while count + 1 > max_chars {
                out.pop();
                count -= 1;
            }
            if out.ends_with(' ') {
                out.pop();
            }
            out.push('…');
            return out;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// Whether `text` is safe to show as one line: no line break, no other control character and no
/// invisible direction control (what [`one_line`] removes). Quoted excerpts inside a message may
/// keep their inner spacing, so this does not require collapsed whitespace.
pub fn is_one_line(text: &str) -> bool {
    !text
        .chars()
        .any(|c| is_line_break(c) || c.is_control() || is_invisible(c))
}

/// Longest excerpt (in characters, the `…` included) of a server-given name, key or value quoted
/// inside a longer message.
pub const EXCERPT_CHARS: usize = 40;

/// [`one_line_max`] at [`EXCERPT_CHARS`]: a name, key or value quoted inside a longer message.
pub fn excerpt(text: &str) -> String {
    one_line_max(text, EXCERPT_CHARS)
}

/// Whether [`one_line_max`] leaves `text` as it is: no line break, control character, invisible
/// direction control or white space other than single spaces between words, nothing to trim, at
/// most `max_chars` characters (the common case: a label, a name, a tooltip; checked without
/// building anything).
fn is_plain_line(text: &str, max_chars: usize) -> bool {
    let bytes = text.as_bytes();
    if bytes.first() == Some(&b' ') || bytes.last() == Some(&b' ') {
        return false;
    }
    // Plain loops: this runs on every label and tooltip of a tools/list, and iterator adapters
    // are not inlined at the package's size-first opt-level. ASCII bytes are judged as bytes.
    let (mut i, mut count, mut previous_space) = (0, 0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if !matches!(b, b' '..=b'~') || (b == b' ' && previous_space) {
                return false;
            }
            previous_space = b == b' ';
            i += 1;
        } else {
            let Some(c) = text[i..].chars().next() else {
                return false;
            };
            if c.is_whitespace() || c.is_control() || is_invisible(c) || is_line_break(c) {
                return false;
            }
            previous_space = false;
            i += c.len_utf8();
        }
        count += 1;
        if count > max_chars {
            return false;
        }
    }
    true
}

/// Whether [`plain_text`] has nothing to drop or map in `text`: every character is a line feed
/// or neither a control character, an invisible direction control nor another line break.
fn is_plain_block(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Eight printable ASCII bytes at a time (most help text is only these): no byte at or
        // above 0x80, none below 0x20 (the line feed included: judged byte by byte below), no
        // 0x7F. Exact for such words: no carry or borrow crosses a byte.
        if let Some(word) = bytes.get(i..i + 8) {
            let mut eight = [0; 8];
            eight.copy_from_slice(word);
            let w = u64::from_le_bytes(eight);
            const ONES: u64 = 0x0101_0101_0101_0101;
            const HIGH: u64 = ONES * 0x80;
            if (w | w.wrapping_sub(ONES * 0x20) | w.wrapping_add(ONES)) & HIGH == 0 {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        if b < 0x80 {
            if !matches!(b, b'\n' | b' '..=b'~') {
                return false;
            }
            i += 1;
        } else {
            let Some(c) = text[i..].chars().next() else {
                return false;
            };
            if c.is_control() || is_invisible(c) || is_line_break(c) {
                return false;
            }
            i += c.len_utf8();
        }
    }
    true
}

/// §4.1: untrusted help text (a `description`) as a plain block ([`plain_block`] without a line
/// limit, at most [`MAX_BLOCK_CHARS`] characters).
pub fn plain_text(text: &str) -> String {
    plain_text_ref(text).into_owned()
}

/// [`plain_text`] borrowing `text` when only the trim applies (most help text: nothing copied).
pub fn plain_text_ref(text: &str) -> Cow<'_, str> {
    let clean = is_plain_block(text);
    if clean && (text.len() <= MAX_BLOCK_CHARS || text.chars().nth(MAX_BLOCK_CHARS).is_none()) {
        return Cow::Borrowed(text.trim());
    }
    Cow::Owned(plain_block(text, usize::MAX, MAX_BLOCK_CHARS))
}

/// §6: a tool's own error message (the first text item of an `isError` result) as Megane Builder
/// shows it: the whole block, not only its first line (a pydantic validation error names the
/// field and the reason on the lines after its header), as a [`plain_block`] of at most
/// [`MAX_MESSAGE_LINES`] lines and [`MAX_BLOCK_CHARS`] characters.
pub fn message_block(text: &str) -> String {
    plain_block(text, MAX_MESSAGE_LINES, MAX_BLOCK_CHARS)
}

/// Untrusted text as a block of plain text: every line break (`\r\n`, `\r`, vertical tab, form
/// feed, NEL, U+2028, U+2029) becomes `\n`, a tab a space; other control characters and invisible
/// direction controls are removed; the whole is trimmed (each line keeps its own indentation).
/// Then at most `max_lines` lines and `max_chars` characters (both ≥ 1) are kept; a cut ends the
/// last line kept with `…` (counted).
pub fn plain_block(text: &str, max_lines: usize, max_chars: usize) -> String {
    let (max_lines, max_chars) = (max_lines.max(1), max_chars.max(1));
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_line_break(c) {
            clean.push('\n');
        } else if c == '\t' {
            clean.push(' ');
        } else if !(c.is_control() || is_invisible(c)) {
            clean.push(c);
        }
    }
    let mut block = clean.trim();
    let mut cut = false;
    if let Some((at, _)) = block.match_indices('\n').nth(max_lines - 1) {
        block = block[..at].trim_end();
        cut = true;
    }
    let mut out: String = match block.char_indices().nth(max_chars - usize::from(cut)) {
        Some(_) => {
            cut = true;
            block.chars().take(max_chars - 1).collect::<String>()
        }
        None => block.to_string(),
    };
    if cut {
        out.truncate(out.trim_end().len());
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_with_content_collapsed_and_trimmed() {
        assert_eq!(one_line("Count\nx"), "Count");
        assert_eq!(one_line("\n\n  a \t b  \r\nsecond"), "a b");
        assert_eq!(
            one_line("Traceback (most recent call last):\n  File"),
            "Traceback (most recent call last):"
        );
        assert_eq!(one_line("a\u{2028}b"), "a");
        assert_eq!(one_line("a\rb"), "a");
        assert_eq!(one_line("x\u{0}y\u{1b}[31mz"), "x y [31mz");
        assert_eq!(one_line("ab\u{202E}cd"), "abcd");
        assert_eq!(one_line(""), "");
        assert_eq!(one_line("\n \u{202E}\n"), "");
    }

    #[test]
    fn length_is_capped_with_the_ellipsis_counted() {
        let long = "é".repeat(1000);
        let line = one_line(&long);
        assert_eq!(line.chars().count(), MAX_LINE_CHARS);
        assert!(line.ends_with('…'));
        assert_eq!(one_line_max("abcdef", 4), "abc…");
        assert_eq!(one_line_max("abcd", 4), "abcd");
        assert_eq!(one_line_max("ab cdef", 4), "ab…");
        assert_eq!(one_line_max("abc", 1), "…");
    }

    #[test]
    fn is_one_line_agrees_with_one_line() {
        for text in ["a b", "x  \"y\"", "é…"] {
            assert!(is_one_line(text), "{text:?}");
        }
        for text in ["a\nb", "a\u{0}b", "a\u{2028}b", "a\u{202E}b", "a\tb"] {
            assert!(!is_one_line(text), "{text:?}");
            assert!(is_one_line(&one_line(text)), "{text:?}");
        }
    }

    #[test]
    fn the_shortcuts_agree_with_the_texts_built_character_by_character() {
        let samples = [
            "",
            "Liquid box",
            "Densité 1.0 g/cm³ — café",
            "Emoji \u{1F9EA} tube. Rest",
            "two  spaces",
            " lead",
            "trail ",
            "nbsp\u{A0}here",
            "ideographic\u{3000}space",
            "nel\u{85}x",
            "ls\u{2028}x",
            "bidi\u{202E}x",
            "bom\u{FEFF}x",
            "tab\tx",
            "line\nbreak",
            "cr\rx",
            "c1\u{9B}x",
            "ünïcödé ünïcödé ünïcödé",
            "\u{1D54F}\u{1D54F}\u{1D54F}\u{1D54F}",
            // Eight bytes and more: the word-at-a-time scan of printable ASCII.
            "printable ASCII ~ only, no break at all",
            "abcdefgh\u{7F}ijklmnop",
            "abcdefg\u{7F}",
            "abcdefghijklm\u{0}nop",
            "abcdefghijklmno\u{1F}",
            "abcdefgh\nijklmnop\r\nqrstuvwx",
            "~~~~~~~~ !!!!!!!\u{1F}",
            "abcdefghé\u{202E}ijklmnop",
            "abcdefg\u{80}hijklmn",
        ];
        for text in samples {
            for max in [1, 2, 3, 5, 12, 40, MAX_LINE_CHARS] {
                assert_eq!(
                    one_line_max(text, max),
                    one_line_built(text, max),
                    "{text:?} {max}"
                );
            }
            assert_eq!(
                plain_text(text),
                plain_block(text, usize::MAX, MAX_BLOCK_CHARS),
                "{text:?}"
            );
        }
    }

    #[test]
    fn plain_text_keeps_lines_and_drops_controls() {
        assert_eq!(plain_text(" a\r\nb\u{7}c\u{202E} "), "a\nbc");
        assert_eq!(plain_text("a\tb\rc\u{2028}d"), "a b\nc\nd");
        let long = plain_text(&"x".repeat(3000));
        assert_eq!(long.chars().count(), MAX_BLOCK_CHARS);
        assert!(long.ends_with("x…"));
    }

    #[test]
    fn a_message_block_keeps_its_lines_and_is_bounded() {
        let pydantic = "1 validation error for calculate_phArguments\nph\n  Input should be a valid number [type=float_parsing]\n";
        assert_eq!(message_block(pydantic), pydantic.trim_end());
        let many: String = (1..=30).map(|k| format!("line {k}\n")).collect();
        let shown = message_block(&many);
        assert_eq!(shown.lines().count(), MAX_MESSAGE_LINES);
        assert!(shown.ends_with("line 20…"), "{shown}");
        let wide = message_block(&"é".repeat(5000));
        assert_eq!(wide.chars().count(), MAX_BLOCK_CHARS);
        assert!(wide.ends_with('…'));
        // Exactly at the limits: nothing cut.
        let twenty: String = (1..=20).map(|k| format!("{k}\n")).collect();
        assert_eq!(message_block(&twenty), twenty.trim_end());
        assert_eq!(message_block(&"y".repeat(2000)), "y".repeat(2000));
        assert_eq!(
            message_block("  \u{202E}evil\u{1b}[31m\r\n\u{0}next  \n\n"),
            "evil[31m\nnext"
        );
        assert_eq!(message_block(" \n\t\u{FEFF} "), "");
    }
}
