//! An incremental Server-Sent Events parser (the WHATWG `text/event-stream` format): feed it
//! bytes as they arrive, in chunks split anywhere (even inside a UTF-8 sequence or between the
//! `\r` and `\n` of a line ending), and get back the complete events.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// The bytes of the line being read (no terminator).
    line: Vec<u8>,
    /// The previous byte was a `\r`: a `\n` right after it belongs to the same line ending.
    after_cr: bool,
    /// A line has been completed (until then, a leading byte-order mark is dropped).
    past_first_line: bool,
    event: Option<String>,
    data: String,
    /// At least one `data` field arrived for the pending event.
    has_data: bool,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds the next bytes; returns the events they completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    self.end_line(&mut out);
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        out
    }

    /// The stream ended: returns the event still pending, if any. (The standard discards an
    /// event the stream did not terminate with a blank line; some servers end with
    /// `data: [DONE]` and no blank line, so it is dispatched instead.)
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.end_line(&mut out);
        self.after_cr = false;
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let bytes = std::mem::take(&mut self.line);
        let mut line: &[u8] = &bytes;
        if !self.past_first_line {
            self.past_first_line = true;
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match name {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(value.into_owned()),
            // `id` and `retry` matter only to a reconnecting EventSource, which this is not.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return; // an event with no data is not dispatched
        }
        out.push(SseEvent {
            event: event.filter(|e| !e.is_empty()),
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = parser.feed(input);
        events.extend(parser.finish());
        events
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    #[test]
    fn parses_events_with_and_without_names() {
        let input = b"data: {\"a\":1}\n\nevent: ping\ndata: {}\n\ndata:no-space\n\n";
        assert_eq!(
            parse_all(input),
            vec![ev(None, "{\"a\":1}"), ev(Some("ping"), "{}"), ev(None, "no-space")]
        );
    }

    #[test]
    fn handles_crlf_and_cr_line_endings() {
        let crlf = b"event: a\r\ndata: one\r\n\r\ndata: two\r\n\r\n";
        assert_eq!(parse_all(crlf), vec![ev(Some("a"), "one"), ev(None, "two")]);
        let cr = b"event: a\rdata: one\r\rdata: two\r\r";
        assert_eq!(parse_all(cr), vec![ev(Some("a"), "one"), ev(None, "two")]);
        let mixed = b"data: one\r\n\ndata: two\r\r\ndata: three\n\r";
        assert_eq!(
            parse_all(mixed),
            vec![ev(None, "one"), ev(None, "two"), ev(None, "three")]
        );
    }

    #[test]
    fn joins_multi_line_data_and_skips_comments() {
        let input =
            b": keep-alive\n\ndata: line one\n: a comment in the middle\ndata: line two\ndata\ndata:  two spaces\n\n";
        assert_eq!(parse_all(input), vec![ev(None, "line one\nline two\n\n two spaces")]);
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_their_name_is_reset() {
        let input = b"event: lonely\n\ndata: x\n\nid: 7\nretry: 100\n\n";
        assert_eq!(parse_all(input), vec![ev(None, "x")]);
    }

    #[test]
    fn drops_a_leading_byte_order_mark() {
        let input = "\u{feff}data: x\n\n".as_bytes();
        assert_eq!(parse_all(input), vec![ev(None, "x")]);
    }

    #[test]
    fn finish_dispatches_an_unterminated_last_event() {
        let mut parser = SseParser::new();
        assert_eq!(parser.feed(b"data: a\n\ndata: [DONE]"), vec![ev(None, "a")]);
        assert_eq!(parser.finish(), Some(ev(None, "[DONE]")));
        assert_eq!(parser.finish(), None);
        let mut parser = SseParser::new();
        assert!(parser.feed(b"data: b\n").is_empty());
        assert_eq!(parser.finish(), Some(ev(None, "b")));
    }

    #[test]
    fn split_at_every_byte_gives_the_same_events() {
        let input = "\u{feff}event: message_start\r\ndata: {\"text\":\"héllo wörld 🎉\"}\r\n\r\n: ping\r\
                     data: 日本語\rdata: second line\r\r\
                     event: x\ndata: {\"emoji\":\"👩‍💻\"}\n\n\
                     data: [DONE]\n\n";
        let whole = parse_all(input.as_bytes());
        assert_eq!(
            whole,
            vec![
                ev(Some("message_start"), "{\"text\":\"héllo wörld 🎉\"}"),
                ev(None, "日本語\nsecond line"),
                ev(Some("x"), "{\"emoji\":\"👩‍💻\"}"),
                ev(None, "[DONE]"),
            ]
        );
        let bytes = input.as_bytes();
        // One byte at a time.
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for b in bytes {
            events.extend(parser.feed(std::slice::from_ref(b)));
        }
        events.extend(parser.finish());
        assert_eq!(events, whole);
        // Two chunks, split at every position.
        for split in 0..=bytes.len() {
            let mut parser = SseParser::new();
            let mut events = parser.feed(&bytes[..split]);
            events.extend(parser.feed(&bytes[split..]));
            events.extend(parser.finish());
            assert_eq!(events, whole, "split at byte {split}");
        }
    }
}
