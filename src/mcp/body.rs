//! Reading one HTTP response body: JSON or SSE messages with a byte cap, or a bounded error text.

use super::headers::BodyKind;
use megane_structure_scan::{CallStream, Streamed};

use crate::contract::structure::read::SPLICE_MARK;
use crate::wire::caps::MAX_ERROR_BODY;
use crate::wire::jsonrpc::{parse_owned, parse_text, Incoming, Prescanned};
use crate::wire::sse::{data_text, DataTap, SseDecoder, SseEvent};

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
    /// A scanned body ([`BodyReader::scan_structure`]) the reader cannot read on: a JSON body
    /// whose Structure the scan did not read (declined, absent, or the rest is not one answer),
    /// or an SSE event carrying a message whose data was not kept ([`KEEP`]) and whose Structure
    /// the scan did not read. The reader did not keep the body, so the driver must feed it
    /// again, from its first byte, to [`BodyReader::replay`] (`Client::wants_replay`).
    Replay,
}

impl From<BodyError> for super::errors::McpError {
    /// How a body that could not be read is reported.
    fn from(error: BodyError) -> Self {
        use super::errors::McpError;
        match error {
            BodyError::TooLarge { limit } => McpError::TooLarge { limit },
            BodyError::Malformed(m) => McpError::server(m),
            // `Client` replays instead; only a driver that does not reaches this.
            BodyError::Replay => McpError::server("the answer was not read"),
        }
    }
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
        /// Dispatched events still to pass over: a [`BodyReader::replay`] reader's, the events a
        /// scanned read of the same body already handed on.
        skip: usize,
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
                skip: 0,
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
    /// placeholder) is parsed, and the Structure travels with the result as a [`Prescanned`]
    /// (read by the exact reader with the Structure in place: no text of it is needed again).
    /// A JSON body is not kept: the scan holds only the bytes outside the Structure and the unit
    /// it is reading. When the scan does not read the Structure, [`BodyReader::finish`] answers
    /// [`BodyError::Replay`] and the driver, which kept the chunks, feeds the body again to a
    /// plain reader, so that body is read exactly as without the scan. An SSE body: each event's
    /// data is fed to its own scan as the decoder meets it, and kept by the tap, not by the
    /// decoder ([`DataTap`]), only while it is at most [`KEEP`] bytes (a progress notification);
    /// the event that carries the answer is read as a JSON body is. When a larger event carrying
    /// a message is dispatched and its scan did not read the Structure, [`BodyReader::push`] (or
    /// `finish`) answers [`BodyError::Replay`] and hands on nothing of that chunk: the driver,
    /// which kept the chunks, feeds them again to [`BodyReader::replay`], which passes over the
    /// events already handed on, and goes on with that reader.
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
                skip,
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
                events_to_messages(events, scan.as_deref_mut(), skip)
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
                if let Some(scanning) = scan.as_deref_mut() {
                    if scanning.blank {
                        return Ok(Vec::new());
                    }
                    let stream = std::mem::take(&mut scanning.stream);
                    return prescanned(stream).ok_or(BodyError::Replay);
                }
                if buf.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Vec::new());
                }
                // The buffer becomes the messages' text (a result is kept, not copied).
                parse_owned(std::mem::take(buf)).map_err(BodyError::Malformed)
            }
            BodyReader::Sse {
                decoder,
                limit,
                scan,
                skip,
                ..
            } => {
                let mut events = Vec::new();
                let finished = match scan.as_deref_mut() {
                    Some(scanning) => decoder.finish_tapped(&mut events, scanning),
                    None => decoder.finish(&mut events),
                };
                finished.map_err(|_| BodyError::TooLarge { limit: *limit })?;
                events_to_messages(events, scan.as_deref_mut(), skip)
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

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        match self {
            BodyReader::Json { buf, scan, .. } => scan.as_ref().map_or(buf.len() as u64, |s| s.len),
            BodyReader::Sse { received, .. } => *received,
            BodyReader::Text { buf } => buf.len() as u64,
        }
    }

    /// Whether the driver must keep this body's chunks, to feed them again when
    /// [`BodyReader::push`] or [`BodyReader::finish`] answers [`BodyError::Replay`]: a scanned
    /// body.
    pub fn replayable(&self) -> bool {
        matches!(
            self,
            BodyReader::Json { scan: Some(_), .. } | BodyReader::Sse { scan: Some(_), .. }
        )
    }

    /// The plain reader that reads this scanned body again after [`BodyError::Replay`], fed
    /// from its first byte: as a reader without the scan does (same cap, messages, errors and
    /// resume point), except that an SSE body's events this reader already handed on are passed
    /// over, so every event is handed on once and in order.
    pub fn replay(&self) -> BodyReader {
        match self {
            BodyReader::Sse { limit, scan, .. } => BodyReader::Sse {
                decoder: SseDecoder::new(usize::try_from(*limit).unwrap_or(usize::MAX)),
                received: 0,
                limit: *limit,
                scan: None,
                skip: scan.as_ref().map_or(0, |s| s.handed),
            },
            BodyReader::Json { limit, .. } => {
                let mut plain = BodyReader::messages(BodyKind::Json, *limit);
                plain.reserve(self.received());
                plain
            }
            BodyReader::Text { .. } => BodyReader::text(),
        }
    }

    /// The body's bytes this reader holds (kept bytes, or a scan's envelope and unit; not the
    /// Structure's columns), in bytes of capacity.
    pub fn held_bytes(&self) -> usize {
        match self {
            BodyReader::Json { buf, scan, .. } => {
                buf.capacity() + scan.as_ref().map_or(0, |s| s.stream.held_bytes())
            }
            BodyReader::Text { buf } => buf.capacity(),
            BodyReader::Sse { scan, .. } => scan.as_ref().map_or(0, |s| {
                s.current.held_bytes()
                    + s.kept.capacity()
                    + s.done
                        .iter()
                        .map(|(c, d)| c.held_bytes() + d.as_ref().map_or(0, Vec::capacity))
                        .sum::<usize>()
            }),
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

/// A JSON body read by the resumable Structure scan ([`BodyReader::scan_structure`]); the body
/// itself is not kept (the driver keeps it for [`BodyError::Replay`]).
#[derive(Debug)]
pub struct Scanning {
    stream: CallStream,
    /// Whether every byte so far is JSON white space (an empty answer).
    blank: bool,
    /// Bytes so far.
    len: u64,
}

impl Default for Scanning {
    fn default() -> Self {
        Scanning {
            stream: CallStream::default(),
            blank: true,
            len: 0,
        }
    }
}

impl Scanning {
    fn push(&mut self, chunk: &[u8], limit: u64) -> Result<(), BodyError> {
        self.len = self.len.saturating_add(chunk.len() as u64);
        if self.len > limit {
            *self = Scanning::default();
            return Err(BodyError::TooLarge { limit });
        }
        self.blank = self.blank && chunk.iter().all(u8::is_ascii_whitespace);
        self.stream.feed(chunk);
        Ok(())
    }
}

/// The Structure scan of an SSE body's events (a [`DataTap`]): one [`CallStream`] per event, fed
/// the event's data as it arrives, and the data kept only while it is at most [`KEEP`] bytes (a
/// progress notification, a small answer), so a large answer is never held beside its scan: if
/// its scan does not read it, the body is read again ([`BodyError::Replay`]).
#[derive(Debug, Default)]
pub struct SseScanning {
    /// The scan of the current event's data.
    current: CallStream,
    /// The current event's data, while it is at most [`KEEP`] bytes.
    kept: Vec<u8>,
    /// The current event's data outgrew [`KEEP`]: `kept` was dropped.
    outgrown: bool,
    /// The scans and data (`None`: outgrown) of the events dispatched since the last
    /// [`events_to_messages`], in order.
    done: Vec<(CallStream, Option<Vec<u8>>)>,
    /// Dispatched events whose messages were handed on (all of every chunk read to its end).
    handed: usize,
}

/// The most bytes of one SSE event's data the scan of an SSE body keeps.
pub const KEEP: usize = 64 * 1024;

impl DataTap for SseScanning {
    fn data(&mut self, bytes: &[u8]) {
        self.current.feed(bytes);
        if !self.outgrown {
            if self.kept.len() + bytes.len() <= KEEP {
                self.kept.extend_from_slice(bytes);
            } else {
                self.kept = Vec::new();
                self.outgrown = true;
            }
        }
    }

    fn end_event(&mut self, dispatched: bool) {
        let stream = std::mem::take(&mut self.current);
        let kept = std::mem::take(&mut self.kept);
        let outgrown = std::mem::take(&mut self.outgrown);
        if dispatched {
            self.done.push((stream, (!outgrown).then_some(kept)));
        }
    }
}

/// The messages of a body whose Structure the scan read: the rest of the body parsed, the
/// Structure attached to the one answer. `None` (the body is then read whole, as without the
/// scan) when the scan did not read a Structure, the rest is not one answer, or the placeholder
/// is not inside that answer's result exactly once as written (so the result's reader meets it
/// where the Structure stood, and only there).
fn prescanned(stream: CallStream) -> Option<Vec<Incoming>> {
    let Streamed::Read {
        structure,
        facts,
        rest,
        range,
    } = stream.finish(SPLICE_MARK.as_bytes())
    else {
        return None;
    };
    let mark = SPLICE_MARK.as_bytes();
    if rest.windows(mark.len()).filter(|w| *w == mark).count() != 1 {
        return None;
    }
    let mut messages = parse_owned(rest).ok()?;
    let [Incoming::Response {
        outcome: Ok(raw), ..
    }] = messages.as_mut_slice()
    else {
        return None;
    };
    let span = raw.span();
    if !(span.start <= range.start && range.start + mark.len() <= span.end) {
        return None;
    }
    *raw = raw.clone().with_prescanned(Prescanned {
        structure,
        facts,
        structure_len: range.len(),
    });
    Some(messages)
}

/// The messages of the events that carry one, past the first `skip` ones (counted down); with
/// `scan` (the tap that kept the events' data), a `message` event whose Structure its scan read
/// is read as a scanned JSON body (its data is the body), the others as before with their kept
/// data made text as the decoder makes it. [`BodyError::Replay`] (nothing handed on) when a
/// `message` event's scan did not read it and its data was not kept.
fn events_to_messages(
    events: Vec<SseEvent>,
    mut scan: Option<&mut SseScanning>,
    skip: &mut usize,
) -> Result<Vec<Incoming>, BodyError> {
    let count = events.len();
    let mut tapped = scan
        .as_deref_mut()
        .map(|s| std::mem::take(&mut s.done).into_iter());
    let mut out = Vec::new();
    for mut e in events {
        let tap = tapped.as_mut().and_then(Iterator::next);
        if *skip > 0 {
            *skip -= 1;
            continue;
        }
        if let Some((stream, kept)) = tap {
            if e.is_message() {
                if let Some(msgs) = prescanned(stream) {
                    out.extend(msgs);
                    continue;
                }
            }
            match kept {
                Some(data) => e.data = data_text(data),
                None if e.is_message() => return Err(BodyError::Replay),
                // Another type: it carries no message, its data is not needed.
                None => {}
            }
        }
        if !e.carries_message() {
            continue;
        }
        let msgs = parse_text(e.data).map_err(|m| {
            BodyError::Malformed(format!("a server-sent event is not JSON-RPC: {m}"))
        })?;
        out.extend(msgs);
    }
    if let Some(s) = scan {
        s.handed += count;
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
        // Declined by the scan (an escape in a name): the body was not kept, the driver replays
        // it to a plain reader.
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"structure":{"elements":[8],"positions":[0,0,0],"cell":null,"bonds":[],"residueNames":["\u0041"]}}}}"#;
        let mut reader = BodyReader::messages(BodyKind::Json, 1 << 20);
        reader.scan_structure();
        assert!(reader.replayable());
        for piece in body.chunks(5) {
            assert!(reader.push(piece).unwrap().is_empty());
        }
        assert_eq!(reader.received(), body.len() as u64);
        assert_eq!(reader.finish(), Err(BodyError::Replay));
        let mut reader = BodyReader::messages(BodyKind::Json, 1 << 20);
        assert!(!reader.replayable());
        for piece in body.chunks(5) {
            assert!(reader.push(piece).unwrap().is_empty());
        }
        let messages = reader.finish().unwrap();
        // A body the scan reads is not kept: the reader holds the envelope and one unit.
        let atoms = 2000;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"structuredContent":{{"contract":1,"structure":{{"elements":[{}],"positions":[{}],"cell":null,"bonds":[]}}}}}}}}"#,
            vec!["8"; atoms].join(","),
            vec!["1.25"; 3 * atoms].join(",")
        );
        let mut reader = BodyReader::messages(BodyKind::Json, 1 << 20);
        reader.scan_structure();
        let mut most = 0;
        for piece in body.as_bytes().chunks(1000) {
            assert!(reader.push(piece).unwrap().is_empty());
            most = most.max(reader.held_bytes());
        }
        assert!(most < 4 * 1024, "{most} of {} bytes held", body.len());
        let scanned = reader.finish().unwrap();
        assert!(the_result(&scanned).take_prescanned().is_some());
        // A white-space body is no message, scanned or not.
        let mut blank = BodyReader::messages(BodyKind::Json, 1 << 20);
        blank.scan_structure();
        blank.push(b" \r\n ").unwrap();
        assert_eq!(blank.finish(), Ok(Vec::new()));
        let raw = the_result(&messages);
        assert!(raw.take_prescanned().is_none());
        assert!(raw.get().contains("\\u0041"));
    }

    #[test]
    fn a_scanned_sse_event_holds_about_its_own_size() {
        // A progress notification fed in small chunks holds about its own size, not a block of
        // KEEP (twenty concurrent calls would otherwise each take one for their progress).
        let progress = br#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2,"message":"placing 5 molecules"}}"#;
        let mut reader = BodyReader::messages(BodyKind::EventStream, 1 << 24);
        reader.scan_structure();
        assert!(reader.replayable());
        let mut most = 0;
        for piece in progress.chunks(16) {
            assert!(reader.push(piece).unwrap().is_empty());
            most = most.max(reader.held_bytes());
        }
        assert!(most < 2 * progress.len() + 1024, "{most} bytes held");
        assert_eq!(reader.push(b"\n\n").unwrap().len(), 1);
        // A large answer event is not kept beside its scan: the reader holds at most KEEP of its
        // data (until it outgrows it) and the scan's envelope and unit, read or declined.
        for escape in ["", r#","residueNames":["\u0041"]"#] {
            let answer = big_answer(escape);
            assert!(answer.len() > 2 * KEEP);
            let mut most = 0;
            for piece in answer.as_bytes().chunks(1000) {
                assert!(reader.push(piece).unwrap().is_empty());
                most = most.max(reader.held_bytes());
            }
            assert!(most < 2 * KEEP + 8 * 1024, "{most} of {}", answer.len());
            // Read by the scan: one answer, prescanned; declined: read again by the driver.
            match reader.push(b"\n\n") {
                Ok(messages) => {
                    assert!(escape.is_empty());
                    assert!(the_result(&messages).take_prescanned().is_some());
                }
                Err(e) => {
                    assert!(!escape.is_empty());
                    assert_eq!(e, BodyError::Replay);
                }
            }
        }
    }

    /// A `tools/call` answer of 8 000 atoms (about 140 KB) as one SSE `data` line, with `extra`
    /// members after `bonds` (an escaped name: the scan declines).
    fn big_answer(extra: &str) -> String {
        let atoms = 8_000;
        format!(
            r#"data: {{"jsonrpc":"2.0","id":1,"result":{{"structuredContent":{{"contract":1,"structure":{{"elements":[{}],"positions":[{}],"cell":null,"bonds":[]{extra}}}}}}}}}"#,
            vec!["8"; atoms].join(","),
            vec!["1.25"; 3 * atoms].join(",")
        )
    }

    /// What a reader made of a body: its messages up to the first error, that error, the resume
    /// point, and how often the body was read again.
    type Read = (
        Vec<Incoming>,
        Option<BodyError>,
        Option<(String, Option<u64>)>,
        usize,
    );

    /// Reads `body` fed in pieces of `split` bytes as the drivers do (`fetch.rs`): with the
    /// scan, the chunks are kept, and on [`BodyError::Replay`] fed again from the first to the
    /// reader's [`BodyReader::replay`], which then reads on.
    fn driven(body: &[u8], split: usize, scan: bool) -> Read {
        let mut reader = BodyReader::messages(BodyKind::EventStream, 1 << 24);
        if scan {
            reader.scan_structure();
        }
        let mut kept: Vec<&[u8]> = Vec::new();
        let (mut out, mut replays) = (Vec::new(), 0);
        let mut keep = reader.replayable();
        let feed = |reader: &mut BodyReader, piece: Option<&[u8]>, out: &mut Vec<_>| {
            let got = match piece {
                Some(p) => reader.push(p),
                None => reader.finish(),
            };
            got.map(|m| out.extend(m))
        };
        for piece in body.chunks(split).map(Some).chain([None]) {
            if keep {
                kept.extend(piece);
            }
            let mut got = feed(&mut reader, piece, &mut out);
            if got == Err(BodyError::Replay) {
                assert!(keep, "a replay asked of a reader that is not replayable");
                replays += 1;
                reader = reader.replay();
                keep = reader.replayable();
                got = Ok(());
                for p in kept
                    .drain(..)
                    .map(Some)
                    .chain(piece.is_none().then_some(None))
                {
                    got = got.and_then(|()| feed(&mut reader, p, &mut out));
                }
            }
            if let Err(e) = got {
                return (out, Some(e), reader.resume_point(), replays);
            }
        }
        (out, None, reader.resume_point(), replays)
    }

    #[test]
    fn a_scanned_sse_body_whose_big_event_the_scan_declines_reads_as_without_the_scan() {
        let progress = |n: u32| {
            format!(
                "id: p{n}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":7,\"progress\":{n}}}}}\n\n"
            )
        };
        let declined = big_answer(r#","residueNames":["\u0041"]"#);
        let read = big_answer("");
        // A large event of another type (it carries no message: its data is not needed).
        let other = format!("event: log\ndata: {}\n\n", "x".repeat(2 * KEEP));
        let bodies: Vec<(String, usize)> = vec![
            // Progress before and after the declined answer, which ends with a blank line.
            (
                format!(
                    ": hi\nretry: 900\n{}{}{other}id: a\n{declined}\n\n{}{}",
                    progress(1),
                    progress(2),
                    progress(3),
                    progress(4)
                ),
                1,
            ),
            // The declined answer last, without its blank line (dispatched by `finish`).
            (
                format!("{}{}id: a\n{declined}", progress(1), progress(2)),
                1,
            ),
            // A malformed event after it: the same error line.
            (
                format!(
                    "{}id: a\n{declined}\n\ndata: {{no\n\n{}",
                    progress(1),
                    progress(2)
                ),
                1,
            ),
            // One answer the scan reads, then one it declines (a second answer, as sent).
            (
                format!("{}{read}\n\n{}{declined}\n\n", progress(1), progress(2)),
                1,
            ),
            // The scan reads it: no replay.
            (
                format!("{other}{}{read}\n\n{}", progress(1), progress(2)),
                0,
            ),
        ];
        for (body, replays) in &bodies {
            for split in [1, 7, 4096, body.len()] {
                let plain = driven(body.as_bytes(), split, false);
                let scanned = driven(body.as_bytes(), split, true);
                assert_eq!(plain.3, 0);
                assert_eq!(scanned.3, *replays, "split {split}");
                assert!(!plain.0.is_empty() || plain.1.is_some(), "split {split}");
                // The same messages in order (one whose Structure the scan read aside), error,
                // resume point.
                assert_eq!(scanned.0.len(), plain.0.len(), "split {split}");
                for (s, p) in scanned.0.iter().zip(&plain.0) {
                    let took = matches!(s, Incoming::Response { outcome: Ok(raw), .. }
                        if raw.take_prescanned().is_some());
                    assert!(
                        took || format!("{s:?}") == format!("{p:?}"),
                        "split {split}"
                    );
                }
                assert_eq!(scanned.1, plain.1, "split {split}");
                assert_eq!(scanned.2, plain.2, "split {split}");
            }
        }
    }

    /// The result of the one answer in `messages`.
    fn the_result(messages: &[Incoming]) -> &crate::wire::jsonrpc::RawJson {
        let [Incoming::Response {
            outcome: Ok(raw), ..
        }] = messages
        else {
            panic!("{messages:?}")
        };
        raw
    }
}
