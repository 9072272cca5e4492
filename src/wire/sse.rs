//! Incremental `text/event-stream` (Server-Sent Events) decoder.
//!
//! Feed it response bytes in whatever chunks the network delivers; it returns every event completed so
//! far. It follows the WHATWG event-stream parsing rules, with two deliberate choices for MCP:
//!
//! - a final event that is not followed by a blank line is still dispatched by [`SseDecoder::finish`]
//!   (the WHATWG rules drop it; an MCP server that closes its stream right after the last `data:` line
//!   has still sent a complete JSON-RPC message);
//! - one event may not grow past a byte cap: past it the decoder returns [`SseError::EventTooLarge`]
//!   instead of buffering without bound.
//!
//! Why hand-written: the SSE crates on crates.io (`eventsource-stream` 0.2.3, `sse-stream` 0.3.0) wrap a
//! `futures` `Stream` or an `http-body` body, which a sans-I/O core cannot use, and neither caps the size
//! of one event. The format is small enough that a push decoder is shorter than the glue around them.
//!
//! Line ends may be LF, CRLF or a lone CR; a CR at the end of one chunk followed by an LF at the start of
//! the next is one line end. Lines are kept as bytes until they are complete, so a UTF-8 character split
//! across chunks is decoded correctly; invalid UTF-8 is replaced with U+FFFD, as the standard says.
//!
//! A [`DataTap`] ([`SseDecoder::feed_tapped`]) is handed the bytes of the current event's `data` as
//! they arrive, before the line or the event is complete (issue 10: a `tools/call` answer's
//! Structure is read while it streams in): the values of the event's `data` lines with `\n` between
//! them. The tap then holds the data (the decoder does not gather it a second time, and the event's
//! [`SseEvent::data`] is empty); [`data_text`] makes it the text the decoder would have made.

use std::fmt;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the event had one (absent means `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id seen on the stream so far (`id:` persists across events).
    pub id: Option<String>,
    /// The `retry:` value in milliseconds, if this event carried a valid one.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// The event type, `message` when the event had no `event:` field (or an empty one).
    pub fn event_type(&self) -> &str {
        match self.event.as_deref() {
            Some(t) if !t.is_empty() => t,
            _ => "message",
        }
    }

    /// Whether the event carries a JSON-RPC message (MCP Streamable HTTP): a `message` event with
    /// data. Priming events and other event types carry none.
    pub fn carries_message(&self) -> bool {
        self.is_message() && !self.data.trim().is_empty()
    }

    /// Whether the event is of type `message` (the type of events that carry JSON-RPC messages).
    pub fn is_message(&self) -> bool {
        self.event_type() == "message"
    }
}

/// Why the decoder stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// One event (all its lines, including field names) grew past the cap, in bytes.
    EventTooLarge {
        /// The cap that was exceeded.
        limit: usize,
    },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::EventTooLarge { limit } => {
                write!(
                    f,
                    "one server-sent event is larger than the limit of {limit} bytes"
                )
            }
        }
    }
}

impl std::error::Error for SseError {}

/// Is handed each event's `data` while it arrives, and keeps it ([`SseDecoder::feed_tapped`]).
pub trait DataTap {
    /// The next bytes of the current event's data: the value of each `data` line (after `data`,
    /// its `:` and one optional space), with `\n` before every line but the first. Across all
    /// calls of one event, [`data_text`] of them is the data the untapped decoder gives.
    fn data(&mut self, bytes: &[u8]);
    /// The current event ended; `dispatched`: it was appended to the output (it had data; its
    /// [`SseEvent::data`] is empty, the tap has it).
    fn end_event(&mut self, dispatched: bool);
}

/// An event's data as text from its bytes (as a [`DataTap`] was handed them): invalid UTF-8
/// replaced with U+FFFD, as the decoder does line by line (the same text: a line end is ASCII,
/// so no byte sequence spans two lines).
pub fn data_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The tap of the untapped [`SseDecoder::feed`]: handed nothing, since the decoder keeps the data.
struct NoTap;

impl DataTap for NoTap {
    fn data(&mut self, _: &[u8]) {}
    fn end_event(&mut self, _: bool) {}
}

/// A [`DataTap`] that records what it is handed per dispatched event (tests and the `sse` fuzz
/// target).
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct TapRecorder {
    current: Vec<u8>,
    /// Per dispatched event: the bytes handed.
    pub events: Vec<Vec<u8>>,
    /// Events ended without being dispatched.
    pub undispatched: usize,
}

impl DataTap for TapRecorder {
    fn data(&mut self, bytes: &[u8]) {
        self.current.extend_from_slice(bytes);
    }
    fn end_event(&mut self, dispatched: bool) {
        let data = std::mem::take(&mut self.current);
        if dispatched {
            self.events.push(data);
        } else {
            assert!(data.is_empty(), "data handed for an event without data");
            self.undispatched += 1;
        }
    }
}

impl TapRecorder {
    /// Whether `tapped`, the events the tapped decoder gave, are `plain`, those of the same
    /// stream decoded without a tap, with their data (empty in `tapped`) in the tap.
    pub fn check(&self, tapped: &[SseEvent], plain: &[SseEvent]) -> Result<(), String> {
        if tapped.len() != plain.len() || tapped.len() != self.events.len() {
            return Err(format!(
                "{} events tapped, {} plain, {} in the tap",
                tapped.len(),
                plain.len(),
                self.events.len()
            ));
        }
        for (k, ((t, p), data)) in tapped.iter().zip(plain).zip(&self.events).enumerate() {
            let text = data_text(data.clone());
            let with_data = SseEvent {
                data: text,
                ..t.clone()
            };
            if !t.data.is_empty() || &with_data != p {
                return Err(format!("event {k}: tapped {t:?} {data:?}, plain {p:?}"));
            }
        }
        if !self.current.is_empty() {
            return Err("bytes handed after the last event".to_string());
        }
        Ok(())
    }
}

/// What the line being read is, for a [`DataTap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineTap {
    /// Too few bytes yet to tell (a `data` line's value start needs up to 6).
    Undecided,
    /// A `data` line whose value starts at this byte of the line.
    Data(usize),
    /// Any other line.
    Other,
}

/// Push decoder for `text/event-stream` bodies. See the module documentation.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// Bytes of the line being read (without its line end).
    line: Vec<u8>,
    /// The previous byte was a CR: an LF right after it belongs to the same line end.
    after_cr: bool,
    /// Still at the very start of the stream (a UTF-8 BOM is skipped there).
    at_start: bool,
    /// Bytes of the partial BOM seen at the start.
    bom_seen: usize,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    /// The last valid `retry:` value, kept even when its event carried no data (a priming event).
    reconnection_ms: Option<u64>,
    retry: Option<u64>,
    /// Bytes of the current event so far (complete lines plus the partial line).
    event_bytes: usize,
    failed: bool,
    /// Whether the line being read is a `data` line, for a [`DataTap`].
    line_tap: LineTap,
    /// Fed with a [`DataTap`], which keeps the data: it is not gathered here.
    tapped: bool,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One complete line (without its line end): in place in the chunk being fed, or gathered
/// across chunks.
enum Line<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Line<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Line::Borrowed(b) => b,
            Line::Owned(v) => v,
        }
    }
}

/// Where the value of a `data` field line starts (after `data`, its `:` and one optional space),
/// `None` when the line is another field. Agrees with the general field split in `end_line`: the
/// field name is everything before the first `:`.
fn data_value_start(line: &[u8]) -> Option<usize> {
    match line.strip_prefix(b"data")? {
        [] => Some(4),
        [b':', b' ', ..] => Some(6),
        [b':', ..] => Some(5),
        _ => None,
    }
}

/// The first line-end byte (`\n` or `\r`) of `bytes` at or after `from`. Eight bytes per step:
/// `memchr` on wasm32 without SIMD reads a 32-bit word per step, and a 30 MB `data` line (a
/// 500 000-atom answer, issue 10) is searched whole; in V8 over 31.5 MB, 11.1 ms with
/// `memchr2` and 4.7 ms with this. (`memchr`'s SIMD search needs the `simd128` target feature,
/// which would raise the package's browser floor.)
#[inline]
fn line_end(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero where the word's byte equals the one looked for; the lowest flagged
    // byte is exact (a borrow only flags bytes above a zero byte).
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let found =
            zero_byte(x ^ (ONES * u64::from(b'\n'))) | zero_byte(x ^ (ONES * u64::from(b'\r')));
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = bytes.get(i..)?;
    rest.iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|k| i + k)
}

impl SseDecoder {
    /// A decoder that refuses any single event larger than `max_event_bytes` (counted as raw bytes of its
    /// lines, including field names, excluding line ends).
    pub fn new(max_event_bytes: usize) -> Self {
        SseDecoder {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            bom_seen: 0,
            data: String::new(),
            has_data: false,
            event: None,
            last_id: None,
            reconnection_ms: None,
            retry: None,
            event_bytes: 0,
            failed: false,
            line_tap: LineTap::Undecided,
            tapped: false,
        }
    }

    /// The last `id:` value seen (for a `Last-Event-ID` on reconnection).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the server asked for with `retry:`, in milliseconds (set as soon as the
    /// field is read, even in an event without data, as the standard says).
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// Decodes one chunk and appends every event it completes to `out`.
    ///
    /// After an error the decoder stays failed and returns the same error for every later call.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.tapped = false;
        self.feed_chunk(chunk, out, &mut NoTap)
    }

    /// [`SseDecoder::feed`], handing the current event's data to `tap` as it arrives, which keeps
    /// it (see [`DataTap`]); feed every chunk of a stream, and [`SseDecoder::finish_tapped`], with
    /// the same tap.
    pub fn feed_tapped(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<SseEvent>,
        tap: &mut dyn DataTap,
    ) -> Result<(), SseError> {
        self.tapped = true;
        self.feed_chunk(chunk, out, tap)
    }

    fn feed_chunk(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<SseEvent>,
        tap: &mut dyn DataTap,
    ) -> Result<(), SseError> {
        if self.failed {
            return Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        let mut rest = chunk;
        while self.at_start && !rest.is_empty() {
            if rest[0] == BOM[self.bom_seen] {
                self.bom_seen += 1;
                rest = &rest[1..];
                if self.bom_seen == BOM.len() {
                    self.at_start = false;
                }
            } else {
                // Not a BOM after all: the bytes taken so far are ordinary line bytes.
                self.at_start = false;
                let taken = BOM[..self.bom_seen].to_vec();
                self.bom_seen = 0;
                self.push_bytes(&taken, out, tap)?;
            }
        }
        self.push_bytes(rest, out, tap)
    }

    fn push_bytes(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<SseEvent>,
        tap: &mut dyn DataTap,
    ) -> Result<(), SseError> {
        let mut start = 0;
        while let Some(i) = line_end(bytes, start) {
            let b = bytes[i];
            // Bytes before the line end belong to the current line.
            let part = &bytes[start..i];
            start = i + 1;
            if !part.is_empty() {
                self.after_cr = false;
                self.count(part.len())?;
            }
            if b == b'\n' && self.after_cr {
                // Second half of a CRLF (possibly split across chunks).
                self.after_cr = false;
                continue;
            }
            self.after_cr = b == b'\r';
            let part = self.tap_line(part, true, tap);
            if self.line.is_empty() {
                // The whole line is in this chunk: read in place, not copied into `line` first.
                self.end_line(Line::Borrowed(part), out, tap);
            } else {
                self.line.extend_from_slice(part);
                let line = std::mem::take(&mut self.line);
                self.end_line(Line::Owned(line), out, tap);
            }
        }
        if start < bytes.len() {
            self.after_cr = false;
            let part = &bytes[start..];
            self.count(part.len())?;
            let part = self.tap_line(part, false, tap);
            self.line.extend_from_slice(part);
        }
        Ok(())
    }

    /// Hands the data in `part`, the next bytes of the line being read (after those in `line`),
    /// to `tap`; `complete`: the line ends after `part`. Called before `part` joins `line`.
    /// Returns what of `part` the decoder keeps: all of it, or without a tap's data.
    fn tap_line<'p>(&mut self, part: &'p [u8], complete: bool, tap: &mut dyn DataTap) -> &'p [u8] {
        let before = self.line.len();
        if self.line_tap == LineTap::Undecided {
            // The line's first (up to) 6 bytes decide, as `data_value_start` reads them.
            let mut head = [0u8; 6];
            let old = before.min(6);
            head[..old].copy_from_slice(&self.line[..old]);
            let new = (6 - old).min(part.len());
            head[old..old + new].copy_from_slice(&part[..new]);
            let head = &head[..old + new];
            let decided = if complete || head.len() == 6 {
                Some(data_value_start(head))
            } else if b"data".iter().zip(head).all(|(a, b)| a == b) {
                None
            } else {
                Some(None)
            };
            match decided {
                None => return part,
                Some(None) => self.line_tap = LineTap::Other,
                Some(Some(start)) => {
                    self.line_tap = LineTap::Data(start);
                    if self.has_data {
                        tap.data(b"\n");
                    }
                }
            }
        }
        let kept = match self.line_tap {
            LineTap::Data(start) => {
                let from = start.saturating_sub(before).min(part.len());
                if from < part.len() {
                    tap.data(&part[from..]);
                }
                // A tap keeps the value: the line keeps its field name only.
                if self.tapped {
                    &part[..from]
                } else {
                    part
                }
            }
            _ => part,
        };
        if complete {
            self.line_tap = LineTap::Undecided;
        }
        kept
    }

    /// Counts `len` more bytes of the current event against the cap.
    fn count(&mut self, len: usize) -> Result<(), SseError> {
        self.event_bytes = self.event_bytes.saturating_add(len);
        if self.event_bytes > self.max_event_bytes {
            self.failed = true;
            self.line = Vec::new();
            self.data = String::new();
            return Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        Ok(())
    }

    /// Ends the stream: a pending line and a pending event (one without its blank line) are dispatched.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.tapped = false;
        self.end(out, &mut NoTap)
    }

    /// [`SseDecoder::finish`] with the stream's [`DataTap`].
    pub fn finish_tapped(
        &mut self,
        out: &mut Vec<SseEvent>,
        tap: &mut dyn DataTap,
    ) -> Result<(), SseError> {
        self.tapped = true;
        self.end(out, tap)
    }

    fn end(&mut self, out: &mut Vec<SseEvent>, tap: &mut dyn DataTap) -> Result<(), SseError> {
        if self.failed {
            return Err(SseError::EventTooLarge {
                limit: self.max_event_bytes,
            });
        }
        if self.at_start && self.bom_seen > 0 {
            self.at_start = false;
            let taken = BOM[..self.bom_seen].to_vec();
            self.push_bytes(&taken, out, tap)?;
        }
        if !self.line.is_empty() {
            self.tap_line(&[], true, tap);
            let line = std::mem::take(&mut self.line);
            self.end_line(Line::Owned(line), out, tap);
        }
        self.dispatch(out, tap);
        self.after_cr = false;
        Ok(())
    }

    fn end_line(&mut self, line: Line<'_>, out: &mut Vec<SseEvent>, tap: &mut dyn DataTap) {
        self.at_start = false;
        if line.bytes().is_empty() {
            self.dispatch(out, tap);
            return;
        }
        let line = match line {
            // The first `data:` line of an event, gathered across chunks and valid UTF-8: its
            // buffer becomes the event's data (the field name dropped in place), so a 30 MB
            // message is not copied a second time.
            Line::Owned(bytes) if !self.has_data => match data_value_start(&bytes) {
                Some(start) => match String::from_utf8(bytes) {
                    Ok(mut text) => {
                        text.drain(..start);
                        self.data = text;
                        self.has_data = true;
                        return;
                    }
                    Err(e) => Line::Owned(e.into_bytes()),
                },
                None => Line::Owned(bytes),
            },
            line => line,
        };
        let text = String::from_utf8_lossy(line.bytes());
        if text.starts_with(':') {
            return; // comment
        }
        let (name, value) = match text.find(':') {
            Some(p) => {
                let v = &text[p + 1..];
                (&text[..p], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match name {
            // A tapped event's data is the tap's (the line has only its field name here).
            "data" if self.tapped => self.has_data = true,
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
                if self.retry.is_some() {
                    self.reconnection_ms = self.retry;
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>, tap: &mut dyn DataTap) {
        self.event_bytes = 0;
        let event = self.event.take();
        let retry = self.retry.take();
        tap.end_event(self.has_data);
        if !self.has_data {
            self.data.clear();
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new(1 << 20);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        out
    }

    #[test]
    fn line_end_finds_the_first_lf_or_cr_as_a_byte_search_does() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..4000 {
            let len = (next() % 40) as usize;
            // Mostly other bytes, with line ends and the bytes next to them (0x0B, 0x0C, 0x8A, 0x8D)
            // that a word-wise test could confuse.
            let bytes: Vec<u8> = (0..len)
                .map(|_| match next() % 16 {
                    0 => b'\n',
                    1 => b'\r',
                    2 => 0x0B,
                    3 => 0x8A,
                    4 => 0x8D,
                    5 => 0x0C,
                    6 => 0,
                    7 => 0xFF,
                    _ => b'a' + (next() % 26) as u8,
                })
                .collect();
            for from in 0..=len {
                let expected = bytes[from..]
                    .iter()
                    .position(|&b| b == b'\n' || b == b'\r')
                    .map(|k| from + k);
                assert_eq!(line_end(&bytes, from), expected, "{bytes:?} from {from}");
            }
        }
        assert_eq!(line_end(b"abc", 4), None);
    }

    #[test]
    fn cr_split_from_lf_is_one_line_end() {
        let ev = decode_all(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "a\nb");
    }

    #[test]
    fn lone_cr_ends_lines() {
        let ev = decode_all(&[b"event: x\rdata: 1\r\rdata: 2\r\r"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].event_type(), "x");
        assert_eq!(ev[1].event_type(), "message");
        assert_eq!(ev[1].data, "2");
    }

    #[test]
    fn comments_id_retry_and_final_frame() {
        let ev = decode_all(&[b": hi\nid: 7\nretry: 1500\ndata:x\n\ndata: last"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].id.as_deref(), Some("7"));
        assert_eq!(ev[0].retry, Some(1500));
        assert_eq!(ev[0].data, "x");
        assert_eq!(ev[1].id.as_deref(), Some("7"));
        assert_eq!(ev[1].retry, None);
        assert_eq!(ev[1].data, "last");
    }

    #[test]
    fn priming_event_sets_id_and_retry_without_dispatching() {
        let mut d = SseDecoder::new(1024);
        let mut out = Vec::new();
        d.feed(b"id: event-1\nretry: 500\ndata: \n\n", &mut out)
            .unwrap();
        d.finish(&mut out).unwrap();
        // `data: ` with an empty value still makes an (empty) event; MCP readers skip it.
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data, "");
        assert_eq!(d.last_event_id(), Some("event-1"));
        assert_eq!(d.reconnection_ms(), Some(500));
    }

    #[test]
    fn utf8_split_and_bom() {
        let bytes = "\u{feff}data: Å≈🙂\n\n".as_bytes();
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        let ev = decode_all(&chunks);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "Å≈🙂");
    }

    #[test]
    fn event_cap_is_an_error() {
        let mut d = SseDecoder::new(16);
        let mut out = Vec::new();
        assert!(d.feed(b"data: 0123456789", &mut out).is_ok());
        assert_eq!(
            d.feed(b"abcdef", &mut out),
            Err(SseError::EventTooLarge { limit: 16 })
        );
        assert!(d.finish(&mut out).is_err());
        // Many small events under the cap are fine.
        let mut d = SseDecoder::new(16);
        for _ in 0..1000 {
            d.feed(b"data: 0123456789\n\n", &mut out).unwrap();
        }
        assert_eq!(out.len(), 1000);
    }

    #[test]
    fn data_lines_read_in_place_or_gathered_agree_for_every_chunking() {
        // First data lines that are whole in a chunk (read in place) and ones gathered across
        // chunks (their buffer becomes the data): the same events for every chunk size.
        let stream: &[u8] = b"data:{\"a\":1}\n\ndata\n\ndatax: no\ndata: \xffz\n\n\
            data: one\r\ndata:two\r\n\r\nevent: e\ndata:  sp\rdata\n\ndata: \xc3\xa5 last";
        let expected = [
            ("message", "{\"a\":1}"),
            ("message", ""),
            ("message", "\u{fffd}z"),
            ("message", "one\ntwo"),
            ("e", " sp\n"),
            ("message", "\u{e5} last"),
        ];
        for size in 1..=stream.len() {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            let ev = decode_all(&chunks);
            let got: Vec<(&str, &str)> = ev.iter().map(|e| (e.event_type(), &*e.data)).collect();
            assert_eq!(got, expected, "chunk size {size}");
        }
        // The cap still counts a line read in place.
        let mut d = SseDecoder::new(8);
        let mut out = Vec::new();
        assert!(d.feed(b"data: 0123456789\n\n", &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn a_tap_sees_each_events_data_as_it_comes_for_every_chunking() {
        // BOM, CRLF/CR/LF, `data` without colon or space, comments and other fields between data
        // lines, a field named like `data` but longer, invalid UTF-8, a priming event, an event
        // without data, and a final event without its blank line.
        let stream: &[u8] = b"\xef\xbb\xbfdata:{\"a\":1}\n\ndata\n\ndatax: no\ndata: \xffz\n\n\
            : c\r\nid: 1\r\nretry: 5\r\ndata: \r\n\r\nevent: e\rid: 2\r\r\
            data: one\r\n: mid\r\ndata:two\r\nevent: x\r\ndata\r\ndata:  sp\r\r\
            dat\ndata: \xc3\xa5 last";
        let expected: [&[u8]; 6] = [
            b"{\"a\":1}",
            b"",
            b"\xffz",
            b"",
            b"one\ntwo\n\n sp",
            b"\xc3\xa5 last",
        ];
        let whole = decode_all(&[stream]);
        assert_eq!(whole.len(), expected.len());
        let mut lengths: Vec<Vec<usize>> = (1..=stream.len()).map(|n| vec![n]).collect();
        lengths.push(vec![3, 1, 4, 1, 5, 9, 2, 6]);
        for cut in 0..=stream.len() {
            lengths.push(vec![cut.max(1), stream.len()]);
        }
        for lens in lengths {
            let mut d = SseDecoder::new(1 << 20);
            let mut tap = TapRecorder::default();
            let mut out = Vec::new();
            let (mut at, mut k) = (0, 0);
            while at < stream.len() {
                let end = (at + lens[k % lens.len()]).min(stream.len());
                d.feed_tapped(&stream[at..end], &mut out, &mut tap).unwrap();
                (at, k) = (end, k + 1);
            }
            d.finish_tapped(&mut out, &mut tap).unwrap();
            let got: Vec<&[u8]> = tap.events.iter().map(|d| &d[..]).collect();
            assert_eq!(got, expected, "{lens:?}");
            // The events are the untapped decoder's, their data (U+FFFD for the bad byte) the tap's.
            assert_eq!(tap.check(&out, &whole), Ok(()), "{lens:?}");
            assert_eq!(tap.undispatched, 1, "{lens:?}"); // `event: e` without data
        }
    }
}
