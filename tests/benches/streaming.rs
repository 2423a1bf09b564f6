//! Long streamed replies: does the cost per delta stay flat as a reply grows? Prints numbers;
//! asserts only that every reply arrived whole. Run with `make bench`, or under
//! `xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- cargo bench -p porthole-e2e
//! --bench streaming`. Uses the release `porthole` when built, else the debug one.
//! `PORTHOLE_BENCH_STREAMING=headless` (or `=window`) runs one of the two parts only.
//!
//! The fake LLM (OpenAI format) answers with replies of 1,000, 10,000 and 100,000 text deltas
//! of one word each ("word "), as fast as the socket takes them:
//!
//! 1. `porthole run --json` (the store written as `porthole run` does): from the first
//!    `text_delta` line on its stdout to its `done` line, per delta; then the stored reply is
//!    checked whole.
//! 2. The window: from sending the message to the reply shown complete, per delta; then a
//!    reply of 5,000 deltas paced at 500 a second (`PORTHOLE_BENCH_PACED_DELTAS` for another
//!    length), with the transcript's text length sampled on every animation frame in the page:
//!    how far the window is behind the stream (its lag), and the frame interval, in each fifth
//!    of it, and the longest frame interval once it has finished (the reply then keeps the
//!    blocks it was shown in, or is rendered whole); as one paragraph, as paragraphs of 100 words, as a code block, a list, a table and
//!    a quote (`PORTHOLE_BENCH_SHAPES=list,table` runs only those: `paragraph`, `paragraphs`,
//!    `code`, `list`, `table`, `quote`).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use porthole_e2e::App;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use serde_json::{Value, json};

/// The reply lengths (deltas); `PORTHOLE_BENCH_DELTAS=1000,10000` overrides them.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn sizes() -> Vec<usize> {
    std::env::var("PORTHOLE_BENCH_DELTAS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect::<Vec<usize>>()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| SIZES.to_vec())
}
const PIECE: &str = "word ";
const PACED_DELTAS: usize = 5_000;
const PACED_PER_SECOND: u64 = 500;
/// The paced reply in paragraphs: words in each.
const WORDS_A_PARAGRAPH: usize = 100;
/// The paced reply as code: words a line.
const WORDS_A_LINE: usize = 10;

/// The paced reply's length; `PORTHOLE_BENCH_PACED_DELTAS=15000` makes it longer (30 s).
fn paced_deltas() -> usize {
    std::env::var("PORTHOLE_BENCH_PACED_DELTAS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(PACED_DELTAS)
}

fn profile() -> Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("porthole-bench-streaming-").tempdir()?;
    std::fs::write(dir.path().join("config.json"), r#"{"mcpServers": {}}"#)?;
    Ok(dir)
}

/// One reply of `n` deltas through `porthole run --json`: (ms from the first delta to done,
/// the stored reply's length in bytes).
fn headless_once(runtime: &tokio::runtime::Runtime, n: usize) -> Result<(f64, usize)> {
    let fake = runtime.block_on(FakeLlm::start(Script::new(vec![Reply::stream(PIECE, n)])))?;
    let dir = profile()?;
    let url = fake.base_url();
    let mut child = porthole_e2e::porthole_command(
        dir.path(),
        &["run", "--json", "--base-url", &url, "--model", "m", "--prompt", "Go"],
    )
    .env("OPENAI_API_KEY", "unused")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()?;
    let mut first = None;
    let mut done = None;
    let mut conversation = None;
    for line in BufReader::new(child.stdout.take().context("stdout")?).lines() {
        let line = line?;
        // Only the start of a line is looked at: parsing 100,000 lines would time the bench.
        if first.is_none() && line.contains(r#""type":"text_delta""#) {
            first = Some(Instant::now());
        } else if line.contains(r#""type":"turn_started""#) {
            let v: Value = serde_json::from_str(&line)?;
            conversation = v["conversation_id"].as_str().map(String::from);
        } else if line.contains(r#""type":"done""#) {
            done = Some(Instant::now());
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("porthole run failed: {status}");
    }
    let (Some(first), Some(done), Some(id)) = (first, done, conversation) else {
        bail!("porthole run printed no delta, no done or no conversation");
    };
    let store = porthole_store::Store::open(&dir.path().join("porthole.db"))?;
    let messages = store.messages(&id)?;
    let stored = messages
        .last()
        .and_then(|m| m.parts[0]["text"].as_str())
        .map(str::len)
        .unwrap_or(0);
    if stored != PIECE.len() * n {
        bail!("the stored reply has {stored} bytes, not {}", PIECE.len() * n);
    }
    Ok(((done - first).as_secs_f64() * 1000.0, stored))
}

fn print_ratio(sizes: &[usize], per_delta: &[f64]) {
    if let (Some(first), Some(last)) = (per_delta.first(), per_delta.last()) {
        println!(
            "  cost per delta, {} deltas / {} deltas: {:.2}x",
            sizes[sizes.len() - 1],
            sizes[0],
            last / first
        );
    }
}

fn headless() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    println!();
    println!("1. `porthole run --json`: first text delta on stdout -> done, per delta (median of 3)");
    let sizes = sizes();
    let mut per_delta = Vec::new();
    for &n in &sizes {
        let mut runs: Vec<f64> = (0..3)
            .map(|_| headless_once(&runtime, n).map(|(ms, _)| ms))
            .collect::<Result<_>>()?;
        runs.sort_by(f64::total_cmp);
        let ms = runs[1];
        let us = ms * 1000.0 / n as f64;
        println!("  {n:>7} deltas: {ms:>9.1} ms, {us:>7.2} µs a delta (runs: {runs:.1?})");
        per_delta.push(us);
    }
    print_ratio(&sizes, &per_delta);
    Ok(())
}

/// The window on a fresh profile, its model the fake LLM playing `script`.
fn window(runtime: &tokio::runtime::Runtime, script: Script) -> Result<(FakeLlm, tempfile::TempDir, App)> {
    let fake = runtime.block_on(FakeLlm::start(script))?;
    let dir = profile()?;
    let url = fake.base_url();
    let app = App::launch(dir.path(), &["--base-url", &url, "--model", "fake-model"], &[])?;
    Ok((fake, dir, app))
}

/// Sends `text` and waits for the reply to be shown complete with `bytes` characters (the
/// replies of one window grow, so an earlier one never matches).
fn send_and_wait(app: &App, text: &str, bytes: usize) -> Result<f64> {
    let s = &app.session;
    let composer = s.find("[data-testid=composer]")?;
    let started = Instant::now();
    s.send_keys(&composer, &format!("{text}\u{E007}"))?;
    let mut seen = Value::Null;
    s.wait_for("the reply shown complete", Duration::from_secs(600), |s| {
        let v = s.execute(
            "const replies = document.querySelectorAll('[data-testid=message][data-role=assistant]');
             const last = replies[replies.length - 1];
             return [replies.length, last ? last.dataset.status : null, last ? last.textContent.length : 0];",
            json!([]),
        )?;
        // Earlier replies may have left the document (the transcript is windowed): the new
        // one is the last, complete with its own length (each reply here has another).
        let chars = v[2].as_u64().unwrap_or(0);
        let done = v[0].as_u64().unwrap_or(0) >= 1 && v[1] == "complete" && chars + 2 >= bytes as u64;
        if std::env::var_os("PORTHOLE_BENCH_TRACE").is_some() && seen != v {
            eprintln!("{:>8.0} ms: {v}", started.elapsed().as_secs_f64() * 1000.0);
        }
        seen = v;
        Ok(done.then_some(()))
    })
    .with_context(|| format!("[replies, last status, its characters] = {seen}"))?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

fn in_window() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    println!();
    println!("2. The window: message sent -> reply shown complete (one conversation, one reply each)");
    let sizes = sizes();
    let replies = sizes.iter().map(|&n| Reply::stream(PIECE, n)).collect();
    let (_fake, _dir, app) = window(&runtime, Script::new(replies))?;
    let mut per_delta = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let ms = send_and_wait(&app, &format!("reply {i}"), PIECE.len() * n)?;
        let us = ms * 1000.0 / n as f64;
        println!("  {n:>7} deltas: {ms:>9.1} ms, {us:>7.2} µs a delta");
        per_delta.push(us);
    }
    print_ratio(&sizes, &per_delta);
    drop(app);
    let paced = paced_deltas();
    println!();
    println!(
        "   {paced} deltas at {PACED_PER_SECOND} a second: the window's lag behind the stream (how long after it \
         would have, had it kept up, a frame shows what it shows)"
    );
    let shapes = [
        ("paragraph", "one paragraph".to_string(), Shape::Paragraph),
        (
            "paragraphs",
            format!("paragraphs of {WORDS_A_PARAGRAPH} words"),
            Shape::Paragraphs,
        ),
        (
            "code",
            format!("a Rust code block of {WORDS_A_LINE} words a line"),
            Shape::Code,
        ),
        ("list", format!("a list of {WORDS_A_LINE} words an item"), Shape::List),
        (
            "table",
            format!("a table of two columns, {WORDS_A_LINE} words a row"),
            Shape::Table,
        ),
        ("quote", format!("a quote of {WORDS_A_LINE} words a line"), Shape::Quote),
    ];
    let chosen = std::env::var("PORTHOLE_BENCH_SHAPES").ok();
    for (name, label, shape) in shapes {
        if chosen
            .as_deref()
            .is_some_and(|c| !c.split(',').any(|n| n.trim() == name))
        {
            continue;
        }
        paced_reply(&runtime, &label, paced, shape)?;
    }
    Ok(())
}

/// What the paced reply's words make.
#[derive(Clone, Copy)]
enum Shape {
    /// One paragraph.
    Paragraph,
    /// A paragraph break after every [`WORDS_A_PARAGRAPH`]th word.
    Paragraphs,
    /// One fenced code block (highlighted), a line break after every [`WORDS_A_LINE`]th word.
    Code,
    /// One bulleted list, an item of [`WORDS_A_LINE`] words each.
    List,
    /// One table of two columns, a row of [`WORDS_A_LINE`] words (half in each cell).
    Table,
    /// One quote, a line of [`WORDS_A_LINE`] words each (one paragraph in the quote).
    Quote,
}

/// One reply of `n` numbered words ("w1 w2 …") in this `shape` at [`PACED_PER_SECOND`], in a
/// window of its own: the lag and the frame interval in each fifth of it.
fn paced_reply(runtime: &tokio::runtime::Runtime, label: &str, n: usize, shape: Shape) -> Result<()> {
    let pieces: Vec<String> = (1..=n)
        .map(|i| {
            let word = match shape {
                Shape::Paragraphs if i % WORDS_A_PARAGRAPH == 0 => format!("w{i}\n\n"),
                Shape::Code if i % WORDS_A_LINE == 0 => format!("w{i}\n"),
                Shape::List if i % WORDS_A_LINE == 0 => format!("w{i}\n- "),
                Shape::Table if i % WORDS_A_LINE == 0 => format!("w{i} |\n| "),
                Shape::Table if i % WORDS_A_LINE == WORDS_A_LINE / 2 => format!("w{i} | "),
                Shape::Quote if i % WORDS_A_LINE == 0 => format!("w{i}\n> "),
                _ => format!("w{i} "),
            };
            match shape {
                Shape::Code if i == 1 => format!("```rust\n{word}"),
                Shape::List if i == 1 => format!("- {word}"),
                Shape::Table if i == 1 => format!("| first half | second half |\n|---|---|\n| {word}"),
                Shape::Quote if i == 1 => format!("> {word}"),
                _ => word,
            }
        })
        .collect();
    let bytes: usize = pieces.iter().map(String::len).sum();
    let script = Script {
        chunk_delay_ms: 1000 / PACED_PER_SECOND,
        ..Script::new(vec![Reply::Stream { pieces }])
    };
    let (_fake, _dir, app) = window(runtime, script)?;
    let s = &app.session;
    // Samples (page time, the last word shown) on every animation frame while the reply
    // streams: the number in the last word of the last text node that is not blank (cheap
    // however long the reply).
    s.execute(
        "window.__streamSamples = [];
         const lastText = (root) => {
           let node = root.lastChild;
           while (node) {
             if (node.nodeType === Node.TEXT_NODE && /\\S/.test(node.data)) return node.data;
             if (node.nodeType === Node.ELEMENT_NODE && node.lastChild) { node = node.lastChild; continue; }
             while (node !== root && !node.previousSibling) node = node.parentNode;
             if (node === root) return '';
             node = node.previousSibling;
           }
           return '';
         };
         // The frame intervals from the last frame streaming to 3 frames after the reply is
         // finished (then rendered as written, or whole).
         window.__finishFrames = [];
         let previous = null;
         const tick = () => {
           const now = performance.now();
           const replies = document.querySelectorAll('[data-testid=message][data-role=assistant]');
           const last = replies[replies.length - 1];
           if (last && last.dataset.status === 'streaming') {
             const word = /w(\\d+)\\s*$/.exec(lastText(last).slice(-24));
             if (word) window.__streamSamples.push([now, Number(word[1])]);
           }
           const complete = last && last.dataset.status === 'complete';
           if (complete && previous !== null) window.__finishFrames.push(now - previous);
           previous = now;
           if (!complete || window.__finishFrames.length < 4) requestAnimationFrame(tick);
         };
         requestAnimationFrame(tick);",
        json!([]),
    )?;
    // Paragraph breaks are shown shorter than they are written.
    send_and_wait(&app, "paced", bytes * 9 / 10)?;
    // The frames after it finished.
    std::thread::sleep(Duration::from_millis(500));
    let finish_frame = s
        .execute("return window.__finishFrames;", json!([]))?
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .fold(f64::NAN, f64::max);
    let samples = s.execute("return window.__streamSamples;", json!([]))?;
    let samples: Vec<(f64, f64)> = samples
        .as_array()
        .context("samples")?
        .iter()
        .filter_map(|p| Some((p[0].as_f64()?, p[1].as_f64()?)))
        .collect();
    let Some(&(t0, w0)) = samples.first() else {
        bail!("no frame showed the reply streaming");
    };
    // Had the window kept up, it would show word `w` (w - w0) / rate after the first frame.
    let per_ms = PACED_PER_SECOND as f64 / 1000.0;
    let lags: Vec<(f64, f64)> = samples
        .iter()
        .map(|&(t, w)| (w, (t - t0) - (w - w0) / per_ms))
        .collect();
    let median = |part: Vec<f64>| -> f64 {
        let mut part = part;
        part.sort_by(f64::total_cmp);
        part.get(part.len() / 2).copied().unwrap_or(f64::NAN)
    };
    // The median of (word shown, value) pairs in each fifth of the reply.
    let total = n as f64;
    let per_fifth = |values: Vec<(f64, f64)>| -> Vec<f64> {
        (0..5)
            .map(|k| {
                let (from, to) = (total * k as f64 / 5.0, total * (k + 1) as f64 / 5.0);
                median(
                    values
                        .iter()
                        .filter(|(w, _)| *w >= from && *w < to)
                        .map(|v| v.1)
                        .collect(),
                )
            })
            .collect()
    };
    let lag_fifths = per_fifth(lags);
    let frame_fifths = per_fifth(samples.windows(2).map(|w| (w[1].1, w[1].0 - w[0].0)).collect());
    let list = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(", ");
    println!("  {label}:");
    println!(
        "    lag, median in each fifth: {} ms (growth, first fifth to last: {:+.0} ms)",
        list(&lag_fifths),
        lag_fifths[4] - lag_fifths[0]
    );
    println!(
        "    frame interval, median in each fifth: {} ms ({} frames)",
        list(&frame_fifths),
        samples.len()
    );
    println!("    once finished: the longest frame interval, {finish_frame:.0} ms");
    Ok(())
}

fn main() -> Result<()> {
    porthole_e2e::bench::use_release_porthole();
    println!("Long streamed replies: {}", porthole_e2e::porthole_binary().display());
    let part = std::env::var("PORTHOLE_BENCH_STREAMING").unwrap_or_default();
    if part != "window" {
        headless()?;
    }
    if part != "headless" {
        in_window()?;
    }
    Ok(())
}
