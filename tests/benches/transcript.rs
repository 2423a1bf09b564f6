//! Long transcripts in the real window (prints numbers, asserts nothing beyond sanity): run with
//! `make bench`, or under `xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- cargo bench
//! -p porthole-e2e --bench transcript`. Uses the release `porthole` when built.
//!
//! Two conversations are made through the window itself, by a scripted model and the demo server:
//! a long one (50 turns of 19 steps, each step a short markdown reply and a tool call: the first of
//! each turn `list_directory`, whose view is the demo's folder browser built on the official
//! ext-apps SDK, the others `sha256`; 2,000 stored messages and 50 views) and a short one (20
//! messages, no view). Then:
//!
//! 1. Opening: `PORTHOLE_BENCH_RUNS` (default 5) alternating opens of each from the sidebar, timed
//!    in the page from the click to the transcript showing its last reply (and to the views in
//!    sight being ready).
//! 2. Scrolling: the long one is scrolled from its end upwards, 120 px a frame for 300 frames,
//!    timing each frame with `requestAnimationFrame`; then the rows that were shown (frames
//!    replaced by boxes of their size) are laid out as one static page over the window and
//!    scrolled the same way. Frame time p50/p95 of each, and their ratio.

use std::time::Duration;

use anyhow::{Context, Result};
use porthole_e2e::bench::{median, percentile};
use porthole_e2e::{App, Session};
use porthole_fake_llm::{FakeLlm, FakeToolCall, Reply, Script};
use serde_json::{Value, json};

/// Turns of the long conversation; each is 19 steps (the window's step limit is 20 model
/// requests) of a short reply and a tool call, the first `list_directory` (a view), the others
/// `sha256`, then a closing reply: 40 stored messages and one view a turn.
const TURNS: usize = 50;
const STEPS_PER_TURN: usize = 19;
const SHORT_STEPS: usize = 9;
const WAIT: Duration = Duration::from_secs(60);

fn step_text(i: usize) -> String {
    format!(
        "Step {i}: checking the **next** item of the list, as asked.\n\n- one point about it\n- another, with `code`\n\nThen the tool."
    )
}

fn turn_done(t: usize) -> String {
    if t + 1 == TURNS {
        "The long one is done.".into()
    } else {
        format!("Turn {t} is done.")
    }
}

fn long_turns() -> Vec<Reply> {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let mut replies = Vec::new();
    for t in 0..TURNS {
        for i in 0..STEPS_PER_TURN {
            let id = format!("l{t}_{i}");
            let call = if i == 0 {
                FakeToolCall::new(id, "list_directory", json!({ "path": manifest }).to_string())
            } else {
                FakeToolCall::new(id, "sha256", json!({ "text": format!("item {t} {i}") }).to_string())
            };
            replies.push(Reply::ToolCalls {
                text: Some(step_text(t * STEPS_PER_TURN + i)),
                calls: vec![call],
            });
        }
        replies.push(Reply::text(turn_done(t)));
    }
    replies
}

fn short_turn() -> Vec<Reply> {
    let mut replies: Vec<Reply> = (0..SHORT_STEPS)
        .map(|i| Reply::ToolCalls {
            text: Some(step_text(i)),
            calls: vec![FakeToolCall::new(
                format!("s{i}"),
                "sha256",
                json!({ "text": format!("short {i}") }).to_string(),
            )],
        })
        .collect();
    replies.push(Reply::text("The short one is done."));
    replies
}

fn last_reply(s: &Session) -> Result<String> {
    Ok(s.execute(
        "const r = document.querySelectorAll('[data-testid=message][data-role=assistant]');
         return r.length ? r[r.length - 1].textContent.trim() : '';",
        json!([]),
    )?
    .as_str()
    .unwrap_or("")
    .to_string())
}

fn send_and_wait(s: &Session, text: &str, answer: &str, timeout: Duration) -> Result<()> {
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, &format!("{text}\u{E007}"))?;
    s.wait_for(&format!("the answer {answer:?}"), timeout, |s| {
        Ok((last_reply(s)? == answer && s.find_all("[data-testid=stop]")?.is_empty()).then_some(()))
    })
}

/// Opens the conversation `id` from the sidebar; (ms to its last reply shown, ms to the views in
/// sight being ready), timed in the page.
fn open(s: &Session, id: &str, answer: &str) -> Result<(f64, f64)> {
    let v = s.execute_async(&format!(
        "const id = {id}, answer = {answer};
         const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
         const button = document.querySelector(`[data-testid=conversation][data-conversation-id=\"${{id}}\"]`);
         if (!button) return {{ error: 'no sidebar entry for ' + id }};
         const t0 = performance.now();
         button.click();
         let shown = null;
         const deadline = t0 + 60000;
         while (performance.now() < deadline) {{
           await frame();
           const t = document.querySelector('[data-testid=transcript]');
           const r = document.querySelectorAll('[data-testid=message][data-role=assistant]');
           const last = r.length ? r[r.length - 1].textContent.trim() : '';
           if (shown === null && t && t.getAttribute('aria-busy') !== 'true' && last === answer) {{
             await frame();
             shown = performance.now() - t0;
           }}
           if (shown !== null) {{
             const states = [...document.querySelectorAll('[data-testid=view-state]')].map((e) => e.dataset.state);
             if (states.every((st) => st === 'ready' || st === 'parked')) return {{ shown, views: performance.now() - t0 }};
           }}
         }}
         return {{ error: 'not shown in 60 s', shown }};",
        id = serde_json::to_string(id)?,
        answer = serde_json::to_string(answer)?,
    ))?;
    if let Some(e) = v.get("error") {
        anyhow::bail!("opening {id}: {e}");
    }
    Ok((
        v["shown"].as_f64().context("shown")?,
        v["views"].as_f64().context("views")?,
    ))
}

/// Scrolls `target` (a CSS selector; the element that scrolls) up from its end, 120 px a frame,
/// and returns each frame's time (ms). When `collect`, keeps every row it showed in
/// `window.__rows` (frames replaced by boxes of their size) for the static page.
fn scroll_frames(s: &Session, target: &str, collect: bool) -> Result<Vec<f64>> {
    let v = s.execute_async(&format!(
        "const el = document.querySelector({target});
         const collect = {collect};
         if (!el) return {{ error: 'nothing to scroll' }};
         window.__rows = window.__rows || new Map();
         const keep = () => {{
           for (const row of el.querySelectorAll(':scope > .row')) {{
             const i = Number(row.dataset.index);
             if (window.__rows.has(i)) continue;
             const copy = row.cloneNode(true);
             for (const f of copy.querySelectorAll('iframe')) {{
               const box = document.createElement('div');
               box.style.height = f.getBoundingClientRect().height + 'px';
               f.replaceWith(box);
             }}
             window.__rows.set(i, copy.outerHTML);
           }}
         }};
         el.scrollTop = el.scrollHeight;
         const frame = () => new Promise((r) => requestAnimationFrame((t) => r(t)));
         await frame(); await frame();
         let last = await frame();
         const times = [];
         for (let i = 0; i < 300; i++) {{
           el.scrollTop = el.scrollTop - 120;
           const t = await frame();
           times.push(t - last);
           last = t;
           if (collect) keep();
         }}
         return {{ times }};",
        target = serde_json::to_string(target)?,
    ))?;
    if let Some(e) = v.get("error") {
        anyhow::bail!("scrolling {target}: {e}");
    }
    Ok(v["times"]
        .as_array()
        .context("times")?
        .iter()
        .filter_map(Value::as_f64)
        .collect())
}

fn p(v: &[f64], q: f64) -> f64 {
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile(&sorted, q)
}

fn main() -> Result<()> {
    let runs: usize = std::env::var("PORTHOLE_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    porthole_e2e::bench::use_release_porthole();
    let runtime = tokio::runtime::Runtime::new()?;
    let mut replies = long_turns();
    replies.extend(short_turn());
    let fake = runtime.block_on(FakeLlm::start(Script::new(replies)))?;
    let dir = tempfile::Builder::new()
        .prefix("porthole-bench-transcript-")
        .tempdir()?;
    let config = json!({ "mcpServers": { "porthole-demo": {
        "command": "porthole", "args": ["demo-server"], "alwaysAllow": ["list_directory", "sha256"] } } });
    std::fs::write(dir.path().join("config.json"), config.to_string())?;
    let url = fake.base_url();
    let app = App::launch(dir.path(), &["--base-url", &url, "--model", "fake-model"], &[])?;
    let s = &app.session;
    s.wait_for_element(
        "[data-testid=server][data-server-name=porthole-demo][data-state=connected]",
        WAIT,
    )?;
    println!(
        "long transcripts in the real window: {}",
        porthole_e2e::bench::binary("porthole").display()
    );
    let started = std::time::Instant::now();
    for t in 0..TURNS {
        let ask = if t == 0 {
            "the long one".to_string()
        } else {
            format!("turn {t}")
        };
        send_and_wait(s, &ask, &turn_done(t), Duration::from_secs(300))?;
    }
    eprintln!("the long conversation made in {:.0} s", started.elapsed().as_secs_f64());
    s.find("[data-testid=new-chat]").and_then(|b| s.click(&b))?;
    s.wait_for("a new chat", WAIT, |s| {
        Ok(s.find_all("[data-testid=message]")?.is_empty().then_some(()))
    })?;
    send_and_wait(s, "the short one", "The short one is done.", WAIT)?;

    let store = porthole_store::Store::open_read_only(&dir.path().join("porthole.db"))?;
    let conversations = store.list_conversations()?;
    let id_of = |title: &str| {
        conversations
            .iter()
            .find(|c| c.title.starts_with(title))
            .map(|c| c.id.clone())
            .with_context(|| format!("no conversation titled {title:?}"))
    };
    let (long, short) = (id_of("the long one")?, id_of("the short one")?);
    let count = |id: &str| -> Result<(usize, usize)> {
        Ok((
            store.messages(id)?.len(),
            store
                .tool_calls(id)?
                .iter()
                .filter(|c| c.tool == "list_directory")
                .count(),
        ))
    };
    let ((long_messages, long_views), (short_messages, short_views)) = (count(&long)?, count(&short)?);
    println!(
        "long: {long_messages} stored messages, {long_views} calls with a view; short: {short_messages} messages, {short_views} views"
    );

    let (mut long_open, mut short_open) = (Vec::new(), Vec::new());
    for i in 0..runs {
        short_open.push(open(s, &short, "The short one is done.")?);
        long_open.push(open(s, &long, "The long one is done.")?);
        eprintln!(
            "run {}: short {:.0} ms ({:.0} ms with its views), long {:.0} ms ({:.0} ms with the views in sight)",
            i + 1,
            short_open[i].0,
            short_open[i].1,
            long_open[i].0,
            long_open[i].1
        );
    }
    let shown = |v: &[(f64, f64)]| median(v.iter().map(|x| x.0).collect());
    let ready = |v: &[(f64, f64)]| median(v.iter().map(|x| x.1).collect());
    println!(
        "1. opening (median of {runs}): short {:.0} ms, long {:.0} ms -> {:.2}x; with the views in sight ready: {:.0} / {:.0} ms -> {:.2}x",
        shown(&short_open),
        shown(&long_open),
        shown(&long_open) / shown(&short_open),
        ready(&short_open),
        ready(&long_open),
        ready(&long_open) / ready(&short_open)
    );

    // The long one is open: scroll it, then the same rows as a static page. Its earlier turns
    // load by themselves while it is left still (a scroll that reaches them first loads them
    // as it goes): scrolled once they are all there.
    s.wait_for("the long conversation's earlier turns", WAIT, |s| {
        let t = s.find("[data-testid=transcript]")?;
        Ok((s.attribute(&t, "data-earlier")?.as_deref() == Some("false")).then_some(()))
    })?;
    std::thread::sleep(Duration::from_secs(2));
    let transcript = scroll_frames(s, "[data-testid=transcript]", true)?;
    let rows = s.execute(
        "const page = document.createElement('div');
         page.id = '__static';
         page.className = 'transcript';
         page.style.cssText = 'position:fixed;inset:0;overflow-y:auto;z-index:99999;background:var(--bg, #fff);display:block';
         page.innerHTML = [...window.__rows.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]).join('');
         document.body.appendChild(page);
         return window.__rows.size;",
        json!([]),
    )?;
    std::thread::sleep(Duration::from_secs(1));
    let fixed = scroll_frames(s, "#__static", false)?;
    println!(
        "2. scrolling 300 frames of 120 px (rAF frame time, ms): transcript p50 {:.1} p95 {:.1}; the same {} rows as a static page p50 {:.1} p95 {:.1} -> p95 {:.2}x",
        p(&transcript, 50.0),
        p(&transcript, 95.0),
        rows,
        p(&fixed, 50.0),
        p(&fixed, 95.0),
        p(&transcript, 95.0) / p(&fixed, 95.0)
    );
    Ok(())
}
