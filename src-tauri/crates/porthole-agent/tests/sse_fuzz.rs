//! Fuzzing the providers' SSE parser (`porthole_agent::providers::sse`) with proptest.
//!
//! Properties, on arbitrary bytes, on token soups of the format's own pieces and on the kept
//! corpus (`tests/corpus/sse/`: the providers' test streams, CRLF, a BOM, comments) mutated:
//! - it never panics;
//! - the events are the same however the input is split into chunks (even inside a UTF-8
//!   sequence or between the `\r` and `\n` of a line ending);
//! - they are those of a whole-input reading of the format written here independently
//!   (lines ended by CRLF, LF or CR; `data` lines joined with `\n`; comments, `id`, `retry` and
//!   other fields ignored; an event without data not dispatched; an unterminated last event kept);
//! - every event is well formed: no line ending inside a name or a data line, no empty name.
//!
//! The corpus files are also checked whole on every run. Failures proptest finds are kept in
//! `proptest-regressions/sse_fuzz.txt` (committed) and replayed first. Cases: 256 by default,
//! `PROPTEST_CASES=N` for a longer run.

use std::path::Path;

use porthole_agent::providers::sse::{SseEvent, SseParser};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const BOM: &[u8] = "\u{feff}".as_bytes();

fn fuzz_config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/sse_fuzz.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// The kept corpus: every file of `tests/corpus/sse/`, by name.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/sse");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the SSE corpus is missing: {}", dir.display());
    files
}

/// The events of `input` fed in the chunks that `splits` (sorted offsets) cut it into.
fn parse_split(input: &[u8], splits: &[usize]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut from = 0;
    for &at in splits.iter().chain([input.len()].iter()) {
        let at = at.clamp(from, input.len());
        events.extend(parser.feed(&input[from..at]));
        from = at;
    }
    events.extend(parser.finish());
    events
}

/// The format read from the whole input at once, written independently of the parser.
fn reference(input: &[u8]) -> Vec<SseEvent> {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    let mut lines: Vec<&[u8]> = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < input.len() {
        match input[i] {
            b'\n' => {
                lines.push(&input[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&input[start..i]);
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < input.len() {
        lines.push(&input[start..]);
    }
    lines.push(b""); // the end of the stream dispatches what is pending

    let mut events = Vec::new();
    let (mut name, mut data): (Option<String>, Option<String>) = (None, None);
    for line in lines {
        if line.is_empty() {
            if let Some(data) = data.take() {
                events.push(SseEvent {
                    event: name.take().filter(|n| !n.is_empty()),
                    data,
                });
            }
            name = None;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => (&line[..c], line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..])),
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value).into_owned();
        match field {
            b"data" => {
                data = Some(match data {
                    Some(before) => format!("{before}\n{value}"),
                    None => value,
                })
            }
            b"event" => name = Some(value),
            _ => {}
        }
    }
    events
}

fn assert_well_formed(events: &[SseEvent]) {
    for e in events {
        if let Some(name) = &e.event {
            assert!(!name.is_empty() && !name.contains(['\r', '\n']), "{e:?}");
        }
        assert!(!e.data.contains('\r'), "{e:?}");
    }
}

/// Checks every property on one input and one way of splitting it.
fn check(input: &[u8], splits: &[usize]) {
    let whole = parse_split(input, &[]);
    assert_eq!(whole, reference(input), "input {:?}", String::from_utf8_lossy(input));
    assert_well_formed(&whole);
    let mut splits: Vec<usize> = splits.iter().map(|s| s % (input.len() + 1)).collect();
    splits.sort_unstable();
    assert_eq!(
        parse_split(input, &splits),
        whole,
        "split at {splits:?}: {:?}",
        String::from_utf8_lossy(input)
    );
}

#[test]
fn the_corpus_parses_the_same_whole_split_anywhere_and_byte_by_byte() {
    for (name, input) in corpus() {
        let whole = parse_split(&input, &[]);
        assert!(!whole.is_empty(), "{name}: no events");
        assert_eq!(whole, reference(&input), "{name}");
        assert_well_formed(&whole);
        // Anthropic and OpenAI data lines are JSON (or OpenAI's closing [DONE]).
        if name.starts_with("anthropic") || name.starts_with("openai") {
            for e in &whole {
                assert!(
                    e.data == "[DONE]" || serde_json::from_str::<serde_json::Value>(&e.data).is_ok(),
                    "{name}: {e:?}"
                );
            }
        }
        let every_byte: Vec<usize> = (1..input.len()).collect();
        assert_eq!(parse_split(&input, &every_byte), whole, "{name}, one byte at a time");
        for at in 0..=input.len() {
            assert_eq!(parse_split(&input, &[at]), whole, "{name}, split at {at}");
        }
    }
}

/// Pieces the format is made of, and bytes that are not UTF-8.
fn token() -> impl Strategy<Value = Vec<u8>> {
    let pieces: Vec<&'static [u8]> = vec![
        b"data",
        b"data:",
        b"data: ",
        b"event",
        b"event: ",
        b"id: 1",
        b"retry: 5",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"\n\n",
        b"\r\r",
        BOM,
        b"[DONE]",
        b"{\"a\":1}",
        b"x",
        "é".as_bytes(),
        "🎉".as_bytes(),
        &[0xf0, 0x9f],
        &[0xff],
        &[0xc3],
    ];
    prop_oneof![
        6 => prop::sample::select(pieces).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..4),
    ]
}

/// A corpus file changed in a few places: bytes replaced, cut out or put in, or truncated.
fn mutated_corpus() -> impl Strategy<Value = Vec<u8>> {
    let n = corpus().len();
    let edit = (any::<usize>(), 0usize..4, token());
    (
        0..n,
        prop::collection::vec(edit, 0..6),
        prop::option::of(any::<usize>()),
    )
        .prop_map(|(file, edits, truncate)| {
            let mut bytes = corpus()[file].1.clone();
            for (at, kind, piece) in edits {
                let at = at % (bytes.len() + 1);
                match kind {
                    0 => {
                        bytes.splice(at..at, piece);
                    }
                    1 => {
                        let end = (at + piece.len()).min(bytes.len());
                        bytes.drain(at..end);
                    }
                    _ => {
                        let end = (at + piece.len()).min(bytes.len());
                        bytes.splice(at..end, piece);
                    }
                }
            }
            if let Some(t) = truncate {
                bytes.truncate(t % (bytes.len() + 1));
            }
            bytes
        })
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::collection::vec(any::<u8>(), 0..256),
        4 => prop::collection::vec(token(), 0..64).prop_map(|t| t.concat()),
        1 => prop::collection::vec(token(), 0..16).prop_map(|t| [BOM.to_vec(), t.concat()].concat()),
        4 => mutated_corpus(),
    ]
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn any_input_any_split_gives_the_reference_events(
        input in input(),
        splits in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        check(&input, &splits);
    }
}
