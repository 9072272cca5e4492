//! Reading one HTTP response body: JSON or SSE messages with a byte cap, or a bounded error text.

use super::headers::BodyKind;
use megane_structure_scan::{CallStream, Streamed};

use super::jsonrpc::{parse_owned, parse_text, Incoming, Prescanned};
use super::sse::{data_text, DataTap, SseDecoder, SseEvent};
use crate::contract::structure::SPLICE_MARK;

/// How much of a non-message body (an error page) is kept for the error message.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// More bytes than the cap.
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// The bytes are not JSON-RPC.
    Malformed(String),
}

/// Incremental reader of one response body.
#[derive(Debug)]
pub enum BodyReader {
    /// `application/json`: buffered, parsed at the end.
    Json {
        /// Bytes so far.
        buf: Vec<u8>,
        /// Cap on the total.
        limit: u64,
        /// A `tools/call` answer's Structure, read as the bytes come ([`BodyReader::scan_structure`]).
        scan: Option<Box<Scanning>>,
    },
    /// `text/event-stream`: messages come out as events complete.
    Sse {
        /// The decoder.
        decoder: SseDecoder,
        /// Bytes so far.
        received: u64,
        /// Cap on the total.
        limit: u64,
        /// Each event's data read by the Structure scan as it comes ([`BodyReader::scan_structure`]).
        scan: Option<Box<SseScanning>>,
    },
    /// Anything else: the first [`MAX_ERROR_BODY`] bytes are kept, the rest is counted and dropped.
    Text {
        /// Kept bytes.
        buf: Vec<u8>,
    },
}

impl BodyReader {
    /// A reader for messages of `kind` (JSON or SSE) capped at `limit` bytes; other kinds read as text.
    pub fn messages(kind: BodyKind, limit: u64) -> Self {
        match kind {
            BodyKind::Json => BodyReader::Json {
                buf: Vec::new(),
                limit,
                scan: None,
            },
            BodyKind::EventStream => BodyReader::Sse {
                decoder: SseDecoder::new(usize::try_from(limit).unwrap_or(usize::MAX)),
                received: 0,
                limit,
                scan: None,
            },
            BodyKind::Other => BodyReader::text(),
        }
    }

    /// Makes room for a JSON body of `len` bytes announced by `Content-Length` (at most the cap),
    /// so a large result is held in one block of its size rather than grown by doubling.
    pub fn reserve(&mut self, len: u64) {
        if let BodyReader::Json { buf, limit, .. } = self {
            if let Ok(extra) = usize::try_from(len.min(*limit)) {
                buf.reserve_exact(extra.saturating_sub(buf.len()));
            }
        }
    }

    /// Reads a `tools/call` answer's §5.1 Structure while the body comes in (issue 10): each
    /// piece goes to `megane-structure-scan`'s resumable [`CallStream`], so at the end only the
    /// small rest of the body (the envelope, the Structure's text replaced by the contract core's
    /// placeholder) is parsed, and the Structure travels with the result as a [`Prescanned`].
    /// The whole body is still kept, for the exact reader when the scan declines or the fast
    /// read refuses, as the pieces it came in (no block of the body's size, no growth by
    /// doubling: pieces of a few KiB are reused from call to call, where a 30 MB block left a
    /// hole the next call's columns did not fit). An SSE body: each event's data is fed to its own
    /// scan as the decoder meets it and kept in pieces by the tap, not by the decoder
    /// ([`DataTap`]), and the event that carries the answer is read as a JSON body is; the
    /// event's data is the whole body kept for the exact reader.
    pub fn scan_structure(&mut self) {
        match self {
            BodyReader::Json { scan, buf, .. } => {
                *buf = Vec::new();
                *scan = Some(Box::default());
            }
            BodyReader::Sse { scan, .. } => *scan = Some(Box::default()),
            BodyReader::Text { .. } => {}
        }
    }

    /// A reader that keeps a bounded text.
    pub fn text() -> Self {
        BodyReader::Text { buf: Vec::new() }
    }

    /// Feeds one chunk; returns the messages it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Incoming>, BodyError> {
        match self {
            BodyReader::Json { buf, limit, scan } => {
                if (buf.len() + chunk.len()) as u64 > *limit {
                    *buf = Vec::new();
                    *scan = None;
                    return Err(BodyError::TooLarge { limit: *limit });
                }
                match scan {
                    Some(scanning) => scanning.push(chunk, *limit)?,
                    None => buf.extend_from_slice(chunk),
                }
                Ok(Vec::new())
            }
            BodyReader::Sse {
                decoder,
                received,
                limit,
                scan,
            } => {
                *received = received.saturating_add(chunk.len() as u64);
                if *received > *limit {
                    *scan = None;
                    return Err(BodyError::TooLarge { limit: *limit });
                }
                let mut events = Vec::new();
                let fed = match scan.as_deref_mut() {
                    Some(scanning) => decoder.feed_tapped(chunk, &mut events, scanning),
                    None => decoder.feed(chunk, &mut events),
                };
                fed.map_err(|_| BodyError::TooLarge { limit: *limit })?;
                events_to_messages(events, scan.as_deref_mut())
            }
            BodyReader::Text { buf } => {
                let room = MAX_ERROR_BODY.saturating_sub(buf.len());
                buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
                Ok(Vec::new())
            }
        }
    }

    /// Ends the body; returns the remaining messages.
    pub fn finish(&mut self) -> Result<Vec<Incoming>, BodyError> {
        match self {
            BodyReader::Json { buf, scan, .. } => {
                let pieces = scan.as_ref().map(|s| &s.pieces[..]).unwrap_or_default();
                if buf
                    .iter()
                    .chain(pieces.iter().flatten())
                    .all(u8::is_ascii_whitespace)
                {
                    return Ok(Vec::new());
                }
                if let Some(scanning) = scan.take() {
                    let Scanning { stream, pieces, .. } = *scanning;
                    match prescanned(stream, pieces, |pieces| pieces) {
                        Ok(messages) => return Ok(messages),
                        Err(pieces) => *buf = pieces.concat(),
                    }
                }
                // The buffer becomes the messages' text (a result is kept, not copied).
                parse_owned(std::mem::take(buf)).map_err(BodyError::Malformed)
            }
            BodyReader::Sse {
                decoder,
                limit,
                scan,
                ..
            } => {
                let mut events = Vec::new();
                let finished = match scan.as_deref_mut() {
                    Some(scanning) => decoder.finish_tapped(&mut events, scanning),
                    None => decoder.finish(&mut events),
                };
                finished.map_err(|_| BodyError::TooLarge { limit: *limit })?;
                events_to_messages(events, scan.as_deref_mut())
            }
            BodyReader::Text { .. } => Ok(Vec::new()),
        }
    }

    /// The last SSE event id and `retry:` value seen, for resuming a broken stream.
    pub fn resume_point(&self) -> Option<(String, Option<u64>)> {
        match self {
            BodyReader::Sse { decoder, .. } => decoder
                .last_event_id()
                .filter(|id| !id.is_empty())
                .map(|id| (id.to_string(), decoder.reconnection_ms())),
            _ => None,
        }
    }

    /// The kept bytes (JSON buffer or error text), for error classification.
    pub fn kept_bytes(&self) -> &[u8] {
        match self {
            BodyReader::Json { buf, .. } | BodyReader::Text { buf } => buf,
            BodyReader::Sse { .. } => &[],
        }
    }
}

/// A JSON body read by the resumable Structure scan ([`BodyReader::scan_structure`]).
#[derive(Debug, Default)]
pub struct Scanning {
    stream: CallStream,
    /// The body as it came, for the exact reader.
    pieces: Vec<Vec<u8>>,
    /// Bytes so far.
    len: u64,
}

impl Scanning {
    fn push(&mut self, chunk: &[u8], limit: u64) -> Result<(), BodyError> {
        self.len = self.len.saturating_add(chunk.len() as u64);
        if self.len > limit {
            *self = Scanning::default();
            return Err(BodyError::TooLarge { limit });
        }
        self.pieces.push(chunk.to_vec());
        self.stream.feed(chunk);
        Ok(())
    }
}

/// The Structure scan of an SSE body's events (a [`DataTap`], which keeps their data): one
/// [`CallStream`] per event, fed the event's data as it arrives, and the data kept as it came, in
/// blocks of [`PIECE`] bytes or more (no block of the data's size, no growth by doubling), both
/// handed over when the event is dispatched.
#[derive(Debug, Default)]
pub struct SseScanning {
    /// The scan of the current event's data.
    current: CallStream,
    /// The current event's data.
    pieces: Vec<Vec<u8>>,
    /// The scans and data of the events dispatched since the last [`events_to_messages`], in
    /// order.
    done: Vec<(CallStream, Vec<Vec<u8>>)>,
}

/// The smallest block an SSE event's data is kept in.
const PIECE: usize = 64 * 1024;

impl DataTap for SseScanning {
    fn data(&mut self, bytes: &[u8]) {
        self.current.feed(bytes);
        match self.pieces.last_mut() {
            Some(last) if last.capacity() - last.len() >= bytes.len() => {
                last.extend_from_slice(bytes)
            }
            _ => {
                let mut piece = Vec::with_capacity(bytes.len().max(PIECE));
                piece.extend_from_slice(bytes);
                self.pieces.push(piece);
            }
        }
    }

    fn end_event(&mut self, dispatched: bool) {
        let stream = std::mem::take(&mut self.current);
        let pieces = std::mem::take(&mut self.pieces);
        if dispatched {
            self.done.push((stream, pieces));
        }
    }
}

/// The messages of a body whose Structure the scan read: the rest of the body parsed, the
/// Structure and the whole body (`body`, as `pieces` makes it) attached to the one answer. `Err`
/// with the body (then parsed whole as before) when the scan did not read a Structure, or the
/// rest is not one answer.
fn prescanned<B>(
    stream: CallStream,
    body: B,
    pieces: fn(B) -> Vec<Vec<u8>>,
) -> Result<Vec<Incoming>, B> {
    let Streamed::Read {
        structure,
        rest,
        range,
    } = stream.finish(SPLICE_MARK.as_bytes())
    else {
        return Err(body);
    };
    let Ok(mut messages) = parse_owned(rest) else {
        return Err(body);
    };
    let [Incoming::Response {
        outcome: Ok(raw), ..
    }] = messages.as_mut_slice()
    else {
        return Err(body);
    };
    *raw = raw.clone().with_prescanned(Prescanned {
        structure,
        structure_len: range.len(),
        body: pieces(body),
    });
    Ok(messages)
}

/// The messages of the events that carry one; with `scan` (the tap that kept the events' data),
/// a `message` event whose Structure its scan read is read as a scanned JSON body (its data is
/// the body), the others as before with their data made text as the decoder makes it.
fn events_to_messages(
    events: Vec<SseEvent>,
    scan: Option<&mut SseScanning>,
) -> Result<Vec<Incoming>, BodyError> {
    let mut tapped = scan.map(|s| std::mem::take(&mut s.done).into_iter());
    let mut out = Vec::new();
    for mut e in events {
        if let Some((stream, pieces)) = tapped.as_mut().and_then(Iterator::next) {
            let pieces = if e.is_message() {
                match prescanned(stream, pieces, |pieces| pieces) {
                    Ok(msgs) => {
                        out.extend(msgs);
                        continue;
                    }
                    Err(pieces) => pieces,
                }
            } else {
                pieces
            };
            e.data = data_text(pieces.concat());
        }
        if !e.carries_message() {
            continue;
        }
        let msgs = parse_text(e.data).map_err(|m| {
            BodyError::Malformed(format!("a server-sent event is not JSON-RPC: {m}"))
        })?;
        out.extend(msgs);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_of_announced_length_is_held_in_one_block() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        let mut reader = BodyReader::messages(BodyKind::Json, 1 << 20);
        reader.reserve(body.len() as u64);
        let before = reader.kept_bytes().as_ptr();
        for piece in body.chunks(7) {
            assert!(reader.push(piece).unwrap().is_empty());
        }
        assert_eq!(reader.kept_bytes().as_ptr(), before, "never moved");
        assert_eq!(reader.finish().unwrap().len(), 1);
        // An announced length above the cap reserves the cap at most, and only JSON reserves.
        let mut capped = BodyReader::messages(BodyKind::Json, 100);
        capped.reserve(u64::MAX);
        let BodyReader::Json { buf, .. } = &capped else {
            panic!()
        };
        assert!(buf.capacity() >= 100 && buf.capacity() < 1000);
        let mut text = BodyReader::text();
        text.reserve(1 << 30);
        assert!(text.kept_bytes().is_empty());
    }

    #[test]
    fn a_scanned_json_body_keeps_the_cap_and_reads_as_the_whole_body_when_declined() {
        let mut capped = BodyReader::messages(BodyKind::Json, 100);
        capped.scan_structure();
        assert!(capped.push(&[b' '; 60]).is_ok());
        assert_eq!(
            capped.push(&[b' '; 60]),
            Err(BodyError::TooLarge { limit: 100 })
        );
        // Declined by the scan (an escape in a name): the pieces are parsed as one body.
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["\u0041"]}}}}"#;
        let mut reader = BodyReader::messages(BodyKind::Json, 1 << 20);
        reader.scan_structure();
        for piece in body.chunks(5) {
            assert!(reader.push(piece).unwrap().is_empty());
        }
        let messages = reader.finish().unwrap();
        let [Incoming::Response {
            outcome: Ok(raw), ..
        }] = messages.as_slice()
        else {
            panic!("{messages:?}")
        };
        assert!(raw.take_prescanned().is_none());
        assert!(raw.get().contains("\\u0041"));
    }
}
