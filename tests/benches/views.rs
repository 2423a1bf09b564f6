//! MCP App views in the real window (prints numbers, asserts nothing beyond sanity): run with
//! `make bench`, or under `xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session --
//! cargo bench -p porthole-e2e --bench views`. Uses the release `porthole` (and
//! `porthole-baseline-window`) when built, else the debug ones. `PORTHOLE_BENCH_VIEWS=latency`
//! (or `=memory`) runs one of the two parts only; `=memory-sdk` only the memory with SDK views.
//!
//! The view is `tests/bench-view-server/stamp.html`, a small plain-JS MCP Apps client served by
//! `porthole-bench-view-server` (stdio) for its UI tool `stamp {delay_ms}`, with `stamps.js`
//! first in it (`porthole_e2e::bench::stamp_view`). It records, in wall
//! clock ms (`performance.timeOrigin + performance.now()`, the machine's clock as the server's
//! `SystemTime`), its frame's navigation start, when its script starts, when `ui/initialize` is
//! answered and when `ui/notifications/tool-result` arrives. The server stamps the HTML when it
//! serves `resources/read` and the result just before returning it.
//!
//! 1. Latency, `PORTHOLE_BENCH_RUNS` (default 30) calls of each kind, one turn per call:
//!    - "cold": `stamp {}` returns at once, so the view is still starting when the result is
//!      back and the host holds it until the view has initialized;
//!    - "steady": `stamp {delay_ms: 1500}`, so the view is initialized first and only the
//!      delivery of the result is timed.
//!
//!    Before each call the bench scrolls the transcript to its end (it stops following the end
//!    once a view has grown it, and views far out of sight are parked), then sends no WebDriver
//!    command until the call is surely over (the driver's commands run on the window's main
//!    thread), then reads the new view's stamps from inside its frame.
//!
//!    The same HTML in a bare `<iframe sandbox="allow-scripts" srcdoc>` is timed for comparison
//!    in the empty Tauri window of the start-up benchmark (same WebKitGTK; Porthole's own CSP
//!    allows frames from `mcpview:` only, so a bare frame cannot be made in its window), with a
//!    few lines of in-page host answering `ui/initialize` and posting the result; and again
//!    loaded from a custom scheme, as Porthole loads views, in `porthole-baseline-scheme-window`
//!    (the same empty window, its `bare:` scheme serving the HTML from memory with the headers
//!    Porthole gives a view), so the scheme's own cost is measured apart from Porthole's.
//!
//!    The cold path is timed again with an SDK-built view (`stamp_sdk`: the demo folder view,
//!    React and the official ext-apps SDK, about 600 KB, with `stamps.js` recording the same
//!    stamps; `porthole_e2e::bench::sdk_stamp_view`), in Porthole and in both bare frames.
//! 2. Memory with 1 and with 50 views in one transcript (one reply calling the tool 50 times,
//!    the view cache on as users have it), for two views: the bench server's `stamp` (3 KB)
//!    and the demo server's folder view (`list_directory`, about 600 KB built with React and
//!    the official ext-apps SDK):
//!    RSS and PSS (from `/proc/<pid>/smaps_rollup`, as the start-up benchmark) of the porthole
//!    process and all its descendants (WebKit's web and network processes, the bench server).
//!    Porthole parks (tears down) views whose cards are far out of sight, so this is measured
//!    twice: as the window runs, and with every view kept live (the transcript is made so tall
//!    that every card is "in sight").

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use porthole_e2e::bench::{binary, percentile};
use porthole_e2e::{App, Driver, Session};
use porthole_fake_llm::{FakeLlm, FakeToolCall, RecordedRequest, Reply, Script};
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_porthole-bench-view-server");
const WAIT: Duration = Duration::from_secs(60);
/// How long `stamp` waits in the "steady" calls: well past the view's start-up.
const STEADY_DELAY_MS: u64 = 1500;
/// How long the bare host waits after `initialized` before posting the result, when steady.
const BARE_STEADY_DELAY_MS: u64 = 300;
const MANY_VIEWS: usize = 50;
/// How long the bench leaves the window alone after sending a message (beyond `stamp`'s delay).
const QUIET_MS: u64 = 1000;

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

// ---- statistics ---------------------------------------------------------------------------------

/// Prints one line for `values` (ms) and returns their median.
fn row(label: &str, mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        println!("  {:>44}  {label}", "(no samples)");
        return None;
    }
    values.sort_by(f64::total_cmp);
    let p50 = percentile(&values, 50.0);
    println!(
        "  p50 {p50:>8.2}  p95 {:>8.2}  min {:>8.2}  max {:>8.2}  n={:<3} {label}",
        percentile(&values, 95.0),
        values[0],
        values[values.len() - 1],
        values.len()
    );
    Some(p50)
}

fn ratio(label: &str, a: Option<f64>, b: Option<f64>) {
    match (a, b) {
        // Pages time in whole milliseconds: a baseline under half of one is no base for a ratio.
        (Some(a), Some(b)) if b >= 0.5 => println!("  {:>7.1}x  {label}  ({a:.2} / {b:.2} ms)", a / b),
        (Some(a), Some(b)) => println!(
            "  {:>8}  {label}  ({a:.2} / {b:.2} ms: the baseline is under the page clock's 1 ms)",
            "n/a"
        ),
        _ => println!("  {:>8}  {label}", "n/a"),
    }
}

/// The p50s of a cold view's steps, as [`cold_steps`] printed them.
struct ColdSteps {
    load: Option<f64>,
    init: Option<f64>,
    total: Option<f64>,
}

/// Prints a cold view's five steps, each with its label: HTML served (or frame inserted) ->
/// navigation start -> first script -> `ui/initialize` answered -> result; then the whole.
fn cold_steps(c: &[Stamps], labels: [&str; 5]) -> ColdSteps {
    let [nav, load, init, result, total] = labels;
    row(nav, col(c, |s| s.origin - s.read_at));
    let load = row(load, col(c, |s| s.script - s.origin));
    let init = row(init, col(c, |s| s.init - s.script));
    row(result, col(c, |s| s.result - s.init));
    let total = row(total, col(c, |s| s.result - s.read_at));
    ColdSteps { load, init, total }
}

// ---- the view's stamps --------------------------------------------------------------------------

/// What one view recorded (see `stamps.js`), wall clock ms.
#[derive(Debug, Clone)]
struct Stamps {
    /// Porthole: when the server served `resources/read`; bare: when the iframe was inserted.
    read_at: f64,
    origin: f64,
    script: f64,
    init: f64,
    result: f64,
    /// When the result left the server (Porthole) or was posted by the in-page host (bare).
    returned_at: f64,
    /// When the server got `tools/call` (Porthole; the same as `returned_at` when bare).
    received_at: f64,
    /// The result's text (Porthole: the server's "returned at" stamp, as written).
    result_text: String,
    /// Porthole: when the agent's next model request, carrying this result, reached the fake
    /// model (filled in after parsing).
    model_request_at: f64,
    /// Navigation timing's `responseEnd`: ms from navigation start to the last byte of the HTML.
    response_end: f64,
}

impl Stamps {
    fn parse(v: &Value) -> Result<Stamps> {
        let f = |key: &str| {
            v[key]
                .as_f64()
                .ok_or_else(|| anyhow!("no {key} in the view's stamps {v}"))
        };
        let s = |key: &str| {
            v["structured"][key]
                .as_f64()
                .ok_or_else(|| anyhow!("no structuredContent.{key} in {v}"))
        };
        let returned_at: f64 = v["resultText"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| anyhow!("the result text is not a time: {v}"))?;
        Ok(Stamps {
            read_at: f("readAt")?,
            origin: f("origin")?,
            script: f("script")?,
            init: f("init")?,
            result: f("result")?,
            returned_at,
            received_at: s("receivedAt")?,
            result_text: v["resultText"].as_str().unwrap_or_default().to_string(),
            model_request_at: f64::NAN,
            response_end: v["nav"]["responseEnd"].as_f64().unwrap_or(f64::NAN),
        })
    }
}

fn col(samples: &[Stamps], f: impl Fn(&Stamps) -> f64) -> Vec<f64> {
    samples.iter().map(f).collect()
}

/// The page's clock (`performance.timeOrigin + performance.now()`) less this process's wall
/// clock, from the quickest of a few round trips: (offset, ± half that round trip).
fn clock_offset(s: &Session) -> Result<(f64, f64)> {
    let mut best = (0.0, f64::INFINITY);
    for _ in 0..7 {
        let before = now_ms();
        let page = s
            .execute("return performance.timeOrigin + performance.now();", json!([]))?
            .as_f64()
            .context("a number")?;
        let after = now_ms();
        let half = (after - before) / 2.0;
        if half < best.1 {
            best = (page - (before + half), half);
        }
    }
    Ok(best)
}

// ---- Porthole -----------------------------------------------------------------------------------

/// A profile whose only server is the bench server (`stamp` always allowed), and a fake model
/// playing `replies`.
struct Chat {
    _runtime: tokio::runtime::Runtime,
    fake: FakeLlm,
    dir: tempfile::TempDir,
    /// When (wall clock ms) a model request carrying a `stamp` result reached the fake model, by
    /// that result's text (the server's "returned at" stamp).
    model_requests: Arc<Mutex<HashMap<String, f64>>>,
}

/// The leading number of a tool result's text, as the bench server wrote it.
fn stamp_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().find_map(|p| p["text"].as_str())?.to_string(),
        _ => return None,
    };
    let number: String = text.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    (!number.is_empty()).then_some(number)
}

fn chat(replies: Vec<Reply>) -> Result<Chat> {
    chat_with(replies, &ViewKind::Stamp)
}

/// Which view the memory part fills the transcript with.
enum ViewKind {
    /// The bench server's `stamp` view (3 KB of plain JS).
    Stamp,
    /// The demo server's folder view (`list_directory`), built with React and the official
    /// ext-apps SDK (about 600 KB), as views in the wild are.
    Sdk,
}

impl ViewKind {
    fn server(&self) -> &'static str {
        match self {
            ViewKind::Stamp => "bench",
            ViewKind::Sdk => "porthole-demo",
        }
    }
    fn tool(&self) -> &'static str {
        match self {
            ViewKind::Stamp => "stamp",
            ViewKind::Sdk => "list_directory",
        }
    }
    fn arguments(&self) -> String {
        match self {
            ViewKind::Stamp => "{}".into(),
            ViewKind::Sdk => json!({"path": env!("CARGO_MANIFEST_DIR")}).to_string(),
        }
    }
    fn config(&self) -> Value {
        match self {
            ViewKind::Stamp => {
                json!({ "mcpServers": { "bench": { "command": SERVER, "alwaysAllow": ["stamp", "stamp_sdk"] } } })
            }
            ViewKind::Sdk => json!({ "mcpServers": { "porthole-demo": {
                "command": "porthole", "args": ["demo-server"], "alwaysAllow": ["list_directory"] } } }),
        }
    }
    fn card(&self) -> String {
        format!("[data-testid=tool-call][data-tool-name={}]", self.tool())
    }
}

fn chat_with(replies: Vec<Reply>, kind: &ViewKind) -> Result<Chat> {
    let runtime = tokio::runtime::Runtime::new()?;
    let model_requests: Arc<Mutex<HashMap<String, f64>>> = Arc::default();
    let seen = model_requests.clone();
    let observer = move |request: &RecordedRequest| {
        let at = now_ms();
        let last = request.body["messages"].as_array().and_then(|m| m.last());
        if let Some(last) = last.filter(|m| m["role"] == "tool")
            && let Some(stamp) = stamp_text(&last["content"])
        {
            seen.lock().unwrap().entry(stamp).or_insert(at);
        }
    };
    let fake = runtime.block_on(FakeLlm::start_with_observer(Script::new(replies), 0, observer))?;
    let dir = tempfile::Builder::new().prefix("porthole-bench-views-").tempdir()?;
    std::fs::write(dir.path().join("config.json"), kind.config().to_string())?;
    Ok(Chat {
        _runtime: runtime,
        fake,
        dir,
        model_requests,
    })
}

/// Starts Porthole on the chat's profile. Unless `cached`, the view cache is off: each view's HTML
/// is read from the server as it opens, so its `resources/read` stamp is that view's own.
fn launch(chat: &Chat, cached: bool) -> Result<App> {
    launch_with(chat, cached, &ViewKind::Stamp)
}

fn launch_with(chat: &Chat, cached: bool, kind: &ViewKind) -> Result<App> {
    let url = chat.fake.base_url();
    let env: &[(&str, &str)] = if cached { &[] } else { &[("PORTHOLE_VIEW_CACHE", "off")] };
    let app = App::launch(chat.dir.path(), &["--base-url", &url, "--model", "fake-model"], env)?;
    app.session.wait_for_element(
        &format!(
            "[data-testid=server][data-server-name={}][data-state=connected]",
            kind.server()
        ),
        WAIT,
    )?;
    Ok(app)
}

fn send(s: &Session, text: &str) -> Result<()> {
    let composer = s.find("[data-testid=composer]")?;
    s.send_keys(&composer, &format!("{text}\u{E007}"))
}

fn wait_for_answer(s: &Session, text: &str) -> Result<()> {
    s.wait_for(&format!("the answer {text:?}"), WAIT, |s| {
        let replies = s.find_all("[data-testid=message][data-role=assistant]")?;
        Ok(match replies.last() {
            Some(last) => (s.text(last)? == text).then_some(()),
            None => None,
        })
    })
}

/// The states of every `stamp` card's view, in transcript order (`"none"` for a card without one).
fn view_states(s: &Session, card: &str) -> Result<Vec<String>> {
    let v = s.execute(
        "return Array.from(document.querySelectorAll(arguments[0])).map((card) => {
           const state = card.querySelector('[data-testid=view-state]');
           return state ? state.dataset.state : 'none';
         });",
        json!([card]),
    )?;
    Ok(v.as_array()
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or("?").to_string())
        .collect())
}

/// The state of the view of the `stamp` card of `call_id` (`"absent"` when the card is not in the
/// document, `"none"` when it has no view).
fn call_view_state(s: &Session, card: &str, call_id: &str) -> Result<String> {
    let v = s.execute(
        "const card = Array.from(document.querySelectorAll(arguments[0])).find((c) => c.dataset.callId === arguments[1]);
         if (!card) return 'absent';
         const state = card.querySelector('[data-testid=view-state]');
         return state ? state.dataset.state : 'none';",
        json!([card, call_id]),
    )?;
    Ok(v.as_str().unwrap_or("?").to_string())
}

/// Waits until there are `n` cards (or, unless `all_in_document`, at most `n` with the newest
/// among them) whose views all satisfy `settled`; fails at once if one
/// failed or was refused.
fn wait_for_views(
    s: &Session,
    card: &str,
    n: usize,
    all_in_document: bool,
    timeout: Duration,
    settled: impl Fn(&str) -> bool,
) -> Result<Vec<String>> {
    s.wait_for(&format!("{n} settled views"), timeout, |s| {
        let states = view_states(s, card)?;
        if states.iter().any(|st| st == "failed" || st == "refused") {
            let texts: Vec<String> = s
                .find_all("[data-testid=view-state]")?
                .iter()
                .filter_map(|e| s.text(e).ok())
                .filter(|t| !t.contains("ready"))
                .collect();
            bail!("a view failed: {texts:?}");
        }
        // Cards whose views are parked may have left the document (the transcript is windowed):
        // then fewer than `n` are counted, but the newest must be there.
        let count_ok = if all_in_document {
            states.len() == n
        } else {
            states.len() <= n && call_view_state(s, card, &format!("call_{}", n - 1))? != "absent"
        };
        Ok((count_ok && states.iter().all(|st| settled(st))).then_some(states))
    })
}

/// The stamps of the view in `frame`, once it has its result.
fn read_frame(s: &Session, frame: &porthole_e2e::Element) -> Result<Value> {
    s.switch_to_frame(frame)?;
    let stamps = s.wait_for("the view's tool-result stamp", WAIT, |s| {
        let text = s.execute("return document.getElementById('t').textContent;", json!([]))?;
        let v: Value = serde_json::from_str(text.as_str().unwrap_or("{}"))?;
        Ok((!v["result"].is_null()).then_some(v))
    });
    s.switch_to_parent()?;
    stamps
}

/// Scrolls the transcript to its end.
fn scroll_to_end(s: &Session) -> Result<()> {
    s.execute(
        "const t = document.querySelector('[data-testid=transcript]'); if (t) t.scrollTop = t.scrollHeight;",
        json!([]),
    )
    .map(drop)
}

/// The view id of the newest `card`'s view, and of the last view frame in the window.
fn newest_view_ids(s: &Session, card: &str) -> Result<(Value, Value)> {
    let v = s.execute(
        "const cards = document.querySelectorAll(arguments[0]);
         const card = cards[cards.length - 1];
         const view = card && card.querySelector('[data-testid=view]');
         const frames = document.querySelectorAll('iframe[data-testid=mcp-app-view]');
         const frame = frames[frames.length - 1];
         const holder = frame && frame.closest('[data-testid=view]');
         return [view ? view.dataset.viewId : null, holder ? holder.dataset.viewId : null];",
        json!([card]),
    )?;
    Ok((v[0].clone(), v[1].clone()))
}

struct PortholeLatency {
    cold: Vec<Stamps>,
    steady: Vec<Stamps>,
    /// Steady calls whose result left the server before the view had initialized (left out).
    steady_late: usize,
    /// Cold calls whose view had initialized before the result left the server.
    cold_early: usize,
    /// Calls whose view the window parked before it was read (left out).
    parked: usize,
    clock: (f64, f64),
    frame_clock: (f64, f64),
}

/// `runs` cold and (with `steady`) `runs` steady calls of `tool` (`stamp` or `stamp_sdk`),
/// alternating, one turn each, in one conversation (with `cached`: the view cache on). Each view is
/// read as soon as its turn is over, while it is in sight: the window parks views that are far out
/// of sight.
fn porthole_latency(runs: usize, cached: bool, tool: &str, steady: bool) -> Result<PortholeLatency> {
    let card = format!("[data-testid=tool-call][data-tool-name={tool}]");
    let delays: Vec<u64> = if !steady {
        vec![0; runs]
    } else {
        (0..runs * 2)
            .map(|i| if i % 2 == 0 { 0 } else { STEADY_DELAY_MS })
            .collect()
    };
    // One untimed call first, so the first timed view does not pay for warming up.
    let mut replies = Vec::new();
    for (i, delay) in std::iter::once(0).chain(delays.iter().copied()).enumerate() {
        replies.push(Reply::tool_call(
            format!("call_{i}"),
            tool,
            json!({ "delay_ms": delay }).to_string(),
        ));
        replies.push(Reply::text(format!("Done {i}.")));
    }
    let chat = chat(replies)?;
    let app = launch(&chat, cached)?;
    let s = &app.session;
    let mut out = PortholeLatency {
        cold: Vec::new(),
        steady: Vec::new(),
        steady_late: 0,
        cold_early: 0,
        parked: 0,
        clock: (0.0, 0.0),
        frame_clock: (0.0, 0.0),
    };
    for i in 0..=delays.len() {
        // The window's transcript stops following its end once a view has grown it, and a
        // view far out of sight is parked: the bench scrolls to the end, as a reader would.
        scroll_to_end(s)?;
        send(s, &format!("stamp {i}"))?;
        // No WebDriver traffic while the view starts and gets its result: the driver's
        // commands run on the window's main thread, which relays the view's messages.
        let delay = if i == 0 { 0 } else { delays[i - 1] };
        std::thread::sleep(Duration::from_millis(delay + QUIET_MS));
        let answer = format!("Done {i}.");
        let call_id = format!("call_{i}");
        let mut seen = String::new();
        let mut parked = false;
        s.wait_for("the answer and the newest view", WAIT, |s| {
            scroll_to_end(s)?;
            // Cards far out of sight leave the document (the transcript is windowed): the new
            // one is found by its call id, not by counting.
            seen = call_view_state(s, &card, &call_id)?;
            parked |= seen == "parked";
            let answered = match s.find_all("[data-testid=message][data-role=assistant]")?.last() {
                Some(last) => s.text(last)? == answer,
                None => false,
            };
            Ok((answered && seen == "ready").then_some(()))
        })
        .with_context(|| format!("after {} calls, the newest view ({call_id}) is {seen:?}", i + 1))?;
        if parked {
            // Re-created from the stored result: not a sample.
            out.parked += 1;
            continue;
        }
        let (card_view, frame_view) = newest_view_ids(s, &card)?;
        if card_view.is_null() || card_view != frame_view {
            bail!("the last view frame ({frame_view}) is not the newest card's view ({card_view})");
        }
        let frames = s.find_all("iframe[data-testid=mcp-app-view]")?;
        let frame = frames.last().context("no view frame")?;
        let mut stamps = Stamps::parse(&read_frame(s, frame)?)?;
        if let Some(at) = chat.model_requests.lock().unwrap().get(&stamps.result_text) {
            stamps.model_request_at = *at;
        }
        if i == 0 {
            // The warm-up: also where the clocks are compared.
            out.clock = clock_offset(s)?;
            s.switch_to_frame(frame)?;
            let frame_clock = clock_offset(s);
            s.switch_to_parent()?;
            out.frame_clock = frame_clock?;
            continue;
        }
        let initialized_first = stamps.init < stamps.returned_at;
        if delays[i - 1] == 0 {
            out.cold_early += usize::from(initialized_first);
            out.cold.push(stamps);
        } else if initialized_first {
            out.steady.push(stamps);
        } else {
            out.steady_late += 1;
        }
        eprintln!("porthole: call {i:>3}/{} done", delays.len());
    }
    Ok(out)
}

// ---- a bare frame in an empty Tauri window ------------------------------------------------------

/// A WebDriver session on the empty Tauri window of the start-up benchmark.
struct Bare {
    agent: ureq::Agent,
    base: String,
    _driver: Driver,
}

impl Bare {
    fn launch(binary: &Path, args: &[String]) -> Result<Bare> {
        let driver = Driver::start(&[])?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(90)))
            .build()
            .into();
        let caps = json!({
            "capabilities": {
                "alwaysMatch": { "tauri:options": { "application": binary, "args": args } },
                "firstMatch": [{}]
            }
        });
        let body: Value = agent
            .post(format!("{}/session", driver.url))
            .send_json(&caps)?
            .body_mut()
            .read_json()?;
        let id = body["value"]["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("no session: {}", body["value"]))?;
        let bare = Bare {
            agent,
            base: format!("{}/session/{id}", driver.url),
            _driver: driver,
        };
        let deadline = Instant::now() + WAIT;
        while bare.execute_async("return document.readyState;")? != json!("complete") {
            if Instant::now() > deadline {
                bail!("the baseline window's page did not load");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(bare)
    }

    fn execute_async(&self, body: &str) -> Result<Value> {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             (async () => {{ {body} }})().then(done, e => done({{ error: String(e) }}));"
        );
        let value: Value = self
            .agent
            .post(format!("{}/execute/async", self.base))
            .send_json(json!({"script": script, "args": []}))?
            .body_mut()
            .read_json()?;
        let value = value["value"].clone();
        if let Some(error) = value.get("error") {
            bail!("script failed: {error}");
        }
        Ok(value)
    }

    /// One view in a fresh `<iframe sandbox="allow-scripts">`: `Some(html)` (a stamping view,
    /// `__READ_AT__` still in it) as its `srcdoc`; `None`, loaded from the `bare:` scheme of
    /// `porthole-baseline-scheme-window`, which serves the view it was started with. The page
    /// answers `ui/initialize`, then posts tool-input and the result (after `delay_ms` when
    /// steady).
    fn view(&self, html: Option<&str>, delay_ms: u64) -> Result<Stamps> {
        let html = serde_json::to_string(&html)?;
        let body = format!(
            r#"const HTML = {html};
            const delay = {delay_ms};
            const now = () => performance.timeOrigin + performance.now();
            const frame = document.createElement("iframe");
            frame.setAttribute("sandbox", "allow-scripts");
            frame.style.cssText = "width: 320px; height: 80px; border: 0; display: block";
            const stamps = new Promise((resolve, reject) => {{
              const timer = setTimeout(() => reject(new Error("no stamps within 20 s")), 20000);
              window.addEventListener("message", async function onMessage(e) {{
                if (e.source !== frame.contentWindow) return;
                const m = e.data;
                if (!m || m.jsonrpc !== "2.0") return;
                const send = (msg) => frame.contentWindow.postMessage(msg, "*");
                if (m.method === "ui/initialize") {{
                  send({{ jsonrpc: "2.0", id: m.id, result: {{ protocolVersion: "2026-01-26",
                    hostInfo: {{ name: "bare", version: "1" }}, hostCapabilities: {{}}, hostContext: {{}} }} }});
                }} else if (m.method === "ui/notifications/initialized") {{
                  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
                  send({{ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {{ arguments: {{}} }} }});
                  const at = now();
                  send({{ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: {{
                    content: [{{ type: "text", text: at.toFixed(3) }}],
                    structuredContent: {{ receivedAt: at, returnedAt: at }} }} }});
                }} else if (m.method === "notifications/message" && m.params && m.params.logger === "bench") {{
                  clearTimeout(timer);
                  window.removeEventListener("message", onMessage);
                  resolve(m.params.data);
                }}
              }});
            }});
            const created = now();
            if (HTML === null) frame.src = "bare://localhost/view?read_at=" + created.toFixed(3);
            else frame.srcdoc = HTML.replace("__READ_AT__", created.toFixed(3));
            document.body.appendChild(frame);
            return await stamps;"#
        );
        Stamps::parse(&self.execute_async(&body)?)
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.agent.delete(&self.base).call();
    }
}

struct BareLatency {
    cold: Vec<Stamps>,
    steady: Vec<Stamps>,
}

/// `runs` cold and (with `with_steady`) `runs` steady views of `html` as `srcdoc`, alternating.
fn bare_latency(binary: &Path, runs: usize, html: &str, with_steady: bool) -> Result<BareLatency> {
    let bare = Bare::launch(binary, &[])?;
    bare.view(Some(html), 0)?; // warm-up
    let (mut cold, mut steady) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        cold.push(bare.view(Some(html), 0)?);
        if with_steady {
            steady.push(bare.view(Some(html), BARE_STEADY_DELAY_MS)?);
        }
    }
    Ok(BareLatency { cold, steady })
}

/// `runs` cold views of `html` loaded from a custom scheme: `porthole-baseline-scheme-window`
/// serves it over `bare:` with the headers Porthole gives a view's document (the policy of a
/// view that declares no `_meta.ui.csp`, `porthole_apps::tokens::response`).
fn bare_scheme_latency(runs: usize, html: &str) -> Result<Vec<Stamps>> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("view.html");
    std::fs::write(&file, html)?;
    let (_, headers, _) = porthole_apps::tokens::response(Ok(porthole_apps::tokens::Served {
        html: String::new(),
        csp: porthole_apps::csp::build_csp(None).policy,
        permissions_policy: porthole_apps::tokens::permissions_policy(&[]),
    }));
    let mut args = Vec::new();
    for (name, value) in headers {
        args.push("--header".to_string());
        args.push(format!("{name}: {value}"));
    }
    args.push(file.display().to_string());
    let bare = Bare::launch(&binary("porthole-baseline-scheme-window"), &args)?;
    bare.view(None, 0)?; // warm-up
    (0..runs).map(|_| bare.view(None, 0)).collect()
}

// ---- memory -------------------------------------------------------------------------------------

/// The porthole process running with `profile`.
fn porthole_pid(profile: &Path) -> Result<u32> {
    let profile = profile.to_string_lossy();
    for entry in std::fs::read_dir("/proc")?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if comm.trim() == "porthole" && args.iter().any(|a| a == profile.as_ref()) {
            return Ok(pid);
        }
    }
    bail!("no porthole process with the profile {profile}")
}

/// Memory of the app and its descendants, by process name: (count, RSS KiB, PSS KiB).
type Breakdown = BTreeMap<String, (usize, u64, u64)>;

fn app_memory(pid: u32) -> Breakdown {
    let mut out = Breakdown::new();
    for p in porthole_e2e::process_tree(pid) {
        // The program's file name (`comm` is cut at 15 characters).
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let argv0 = String::from_utf8_lossy(cmdline.split(|b| *b == 0).next().unwrap_or_default()).into_owned();
        let name = Path::new(&argv0)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(argv0);
        let (rss, pss) = porthole_e2e::memory_kib(p);
        let e = out.entry(name).or_default();
        *e = (e.0 + 1, e.1 + rss, e.2 + pss);
    }
    out
}

fn totals(b: &Breakdown) -> (f64, f64, usize) {
    let (rss, pss, n) = b
        .values()
        .fold((0, 0, 0), |(r, p, n), (c, r2, p2)| (r + r2, p + p2, n + c));
    (rss as f64 / 1024.0, pss as f64 / 1024.0, n)
}

/// The median of three readings a second apart (by total PSS).
fn settled_memory(pid: u32) -> Breakdown {
    std::thread::sleep(Duration::from_secs(3));
    let mut readings: Vec<Breakdown> = (0..3)
        .map(|i| {
            if i > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            app_memory(pid)
        })
        .collect();
    readings.sort_by(|a, b| totals(a).1.total_cmp(&totals(b).1));
    readings.swap_remove(1)
}

fn print_memory(label: &str, b: &Breakdown) {
    let (rss, pss, n) = totals(b);
    let parts: Vec<String> = b
        .iter()
        .map(|(name, (c, r, p))| {
            format!(
                "{name}{} {:.1}/{:.1}",
                if *c > 1 { format!(" x{c}") } else { String::new() },
                *r as f64 / 1024.0,
                *p as f64 / 1024.0
            )
        })
        .collect();
    println!("  {label:<30} RSS {rss:>7.1} MiB  PSS {pss:>7.1} MiB  {n} processes");
    println!("  {:<30} by process (RSS/PSS MiB): {}", "", parts.join(", "));
}

struct MemoryRun {
    idle: Breakdown,
    with: Breakdown,
    /// Read again a minute later, nothing happening meanwhile: whether what parked views left
    /// behind is given back in time.
    later: Breakdown,
    /// Views with a frame when `with` was read, and views parked by the window.
    live: usize,
    parked: usize,
}

/// Memory before and after one turn whose single reply calls `stamp` `n` times. With
/// `keep_all_live`, the transcript is first taken out of the layout and made 200 000 px tall
/// (behind the rest of the window), so that every card stays in its "near sight" zone (the
/// transcript is the zone's root) and the window parks no view.
fn memory_with(kind: &ViewKind, n: usize, keep_all_live: bool) -> Result<MemoryRun> {
    let calls = (0..n)
        .map(|i| FakeToolCall::new(format!("call_{i}"), kind.tool(), kind.arguments()))
        .collect();
    let chat = chat_with(vec![Reply::ToolCalls { text: None, calls }, Reply::text("Done.")], kind)?;
    // The view cache as users have it (on): the views of a tool share its one copy of the HTML.
    // (Off, each view read its own, and the app process held a 600 KB copy per live SDK view.)
    let app = launch_with(&chat, true, kind)?;
    let card = kind.card();
    let s = &app.session;
    let pid = porthole_pid(chat.dir.path())?;
    if keep_all_live {
        // A rule added through the CSSOM (which the window's CSP allows), so it holds for any
        // transcript element the window renders.
        s.execute(
            "const sheet = document.styleSheets[0];
             sheet.insertRule('[data-testid=transcript] { position: fixed !important; top: 0 !important; \
               left: 0 !important; width: 100% !important; height: 200000px !important; \
               z-index: -1 !important; }', sheet.cssRules.length);",
            json!([]),
        )?;
    }
    let idle = settled_memory(pid);
    send(s, "stamp")?;
    wait_for_answer(s, "Done.")?;
    if keep_all_live {
        wait_for_views(s, &card, n, true, Duration::from_secs(180), |st| st == "ready")?;
    } else {
        // A reader at the end of the transcript; parked views count as settled, and the
        // parking is given time to settle too.
        scroll_to_end(s)?;
        wait_for_views(s, &card, n, false, Duration::from_secs(180), |st| {
            st == "ready" || st == "parked"
        })?;
        std::thread::sleep(Duration::from_secs(2));
        wait_for_views(s, &card, n, false, Duration::from_secs(60), |st| {
            st == "ready" || st == "parked"
        })?;
    }
    let with = settled_memory(pid);
    let frames = s.find_all("iframe[data-testid=mcp-app-view]")?;
    std::thread::sleep(Duration::from_secs(60));
    let later = settled_memory(pid);
    // Sanity: every live view got its result.
    if let ViewKind::Stamp = kind {
        for frame in &frames {
            read_frame(s, frame)?;
        }
    }
    Ok(MemoryRun {
        idle,
        with,
        later,
        live: frames.len(),
        parked: n - frames.len().min(n),
    })
}

fn print_memory_runs(label: &str, one: &MemoryRun, many: &MemoryRun) {
    println!("  {label}");
    print_memory("before the turn (1-view run)", &one.idle);
    print_memory(&format!("1 call: {} live, {} parked", one.live, one.parked), &one.with);
    print_memory(&format!("before the turn ({MANY_VIEWS}-call run)"), &many.idle);
    print_memory(
        &format!("{MANY_VIEWS} calls: {} live, {} parked", many.live, many.parked),
        &many.with,
    );
    print_memory("the same, a minute later", &many.later);
    let (r1, p1, _) = totals(&one.with);
    let (r50, p50, _) = totals(&many.with);
    let calls = (MANY_VIEWS - 1) as f64;
    println!(
        "  per extra call ({MANY_VIEWS} calls - 1 call) / {}: RSS {:+.2} MiB, PSS {:+.2} MiB",
        MANY_VIEWS - 1,
        (r50 - r1) / calls,
        (p50 - p1) / calls
    );
    if many.parked > 0 {
        println!(
            "  ({} of these views were created, then parked: what they leave behind counts here)",
            many.parked
        );
    }
}

// ---- main ---------------------------------------------------------------------------------------

fn main() -> Result<()> {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let runs: usize = std::env::var("PORTHOLE_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    porthole_e2e::bench::use_release_porthole();
    let porthole = porthole_e2e::porthole_binary();
    let baseline = binary("porthole-baseline-window");
    let webkit = Command::new("dpkg-query")
        .args(["-W", "-f", "WebKitGTK ${Version}", "libwebkit2gtk-4.1-0"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("MCP App views: latency and memory");
    println!(
        "porthole: {}\nbaseline: {}\nserver:   {SERVER}\n{webkit}",
        porthole.display(),
        baseline.display()
    );

    // `PORTHOLE_BENCH_VIEWS=latency` or `=memory` runs one part only (`=memory-sdk`: only the
    // memory with SDK-built views).
    let part = std::env::var("PORTHOLE_BENCH_VIEWS").unwrap_or_default();
    if !part.starts_with("memory") {
        latency(runs, &baseline)?;
    }
    if part != "latency" {
        memory(part == "memory-sdk")?;
    }
    Ok(())
}

fn latency(runs: usize, baseline: &Path) -> Result<()> {
    let p = porthole_latency(runs, false, "stamp", true)?;
    let cached = porthole_latency(runs, true, "stamp", false)?;
    let stamp = porthole_e2e::bench::stamp_view()?;
    let b = bare_latency(baseline, runs, &stamp, true)?;
    let b_scheme = bare_scheme_latency(runs, &stamp)?;

    println!();
    println!(
        "clock check: page clock - system clock = {:+.2} ms (±{:.2}) in the window, {:+.2} ms (±{:.2}) in a view",
        p.clock.0, p.clock.1, p.frame_clock.0, p.frame_clock.1
    );
    println!("(page clocks: performance.timeOrigin + performance.now(), which WebKit rounds to about 1 ms)");
    println!(
        "calls left out because the window parked their view before it was read: {}",
        p.parked
    );
    println!();
    println!(
        "1a. Porthole, cold: `stamp` returns at once, one call per turn ({} calls; in {} of them the view had \
         initialized before the result left the server)",
        p.cold.len(),
        p.cold_early
    );
    let c = &p.cold;
    row(
        "server served resources/read -> frame navigation start (host checks HTML, mints URL, adds iframe)",
        col(c, |s| s.origin - s.read_at),
    );
    row(
        "frame navigation start -> HTML received (navigation timing responseEnd; mcpview: handler)",
        col(c, |s| s.response_end),
    );
    let p_load = row(
        "frame navigation start -> view's script runs (loading the HTML over mcpview:)",
        col(c, |s| s.script - s.origin),
    );
    let p_init = row(
        "view's script runs -> ui/initialize answered (relay through the window and the Rust bridge)",
        col(c, |s| s.init - s.script),
    );
    row(
        "ui/initialize answered -> tool-result in the view (initialized, tool-input, the held result)",
        col(c, |s| s.result - s.init),
    );
    row(
        "server served resources/read -> server got tools/call (negative: the call came first)",
        col(c, |s| s.received_at - s.read_at),
    );
    row(
        "server returned the result -> tool-result in the view (includes waiting for the view to start)",
        col(c, |s| s.result - s.returned_at),
    );
    let p_total = row(
        "server served resources/read -> tool-result in the view (the whole cold path from the view's HTML)",
        col(c, |s| s.result - s.read_at),
    );
    let uncached_call = row(
        "server got tools/call -> tool-result in the view (a cold view, its HTML from resources/read)",
        col(c, |s| s.result - s.received_at),
    );
    println!();
    println!(
        "1a'. Porthole, cold, the view cache on (its HTML read ahead when the server connected; {} calls)",
        cached.cold.len()
    );
    row(
        "server got tools/call -> frame navigation start (host mints the URL from the cache, adds iframe)",
        col(&cached.cold, |s| s.origin - s.received_at),
    );
    let cached_call = row(
        "server got tools/call -> tool-result in the view (a cold view, its HTML from the cache)",
        col(&cached.cold, |s| s.result - s.received_at),
    );
    println!();
    println!(
        "1b. Porthole, steady: `stamp` waits {STEADY_DELAY_MS} ms, so the view is initialized first \
         ({} calls; {} left out: the view was not initialized yet)",
        p.steady.len(),
        p.steady_late
    );
    let p_steady = row(
        "server returned the result (stamped just before returning) -> view got ui/notifications/tool-result",
        col(&p.steady, |s| s.result - s.returned_at),
    );
    row(
        "server returned the result -> agent's next model request reached the fake model (Rust side only)",
        col(&p.steady, |s| s.model_request_at - s.returned_at),
    );
    println!();
    println!(
        "1c. Bare: the same HTML in <iframe sandbox=\"allow-scripts\" srcdoc> in the empty Tauri window, \
         an in-page host ({} cold, {} steady)",
        b.cold.len(),
        b.steady.len()
    );
    let bare = cold_steps(
        &b.cold,
        [
            "iframe inserted -> frame navigation start",
            "frame navigation start -> view's script runs (bare document load of the same HTML)",
            "view's script runs -> ui/initialize answered (in-page postMessage round trip)",
            "ui/initialize answered -> tool-result in the view",
            "iframe inserted -> tool-result in the view (cold: result posted right after initialized)",
        ],
    );
    let b_steady = row(
        &format!("host posted the result -> view got it (steady: posted {BARE_STEADY_DELAY_MS} ms after initialized)"),
        col(&b.steady, |s| s.result - s.returned_at),
    );
    println!();
    println!(
        "1c'. Bare, from a custom scheme: the same HTML in <iframe sandbox=\"allow-scripts\" src=\"bare://…\"> \
         in an empty Tauri window whose scheme handler answers with it from memory, with the headers Porthole \
         gives a view; the same in-page host ({} cold)",
        b_scheme.len()
    );
    let bare_scheme = cold_steps(
        &b_scheme,
        [
            "iframe inserted -> frame navigation start",
            "frame navigation start -> view's script runs (the document over bare:)",
            "view's script runs -> ui/initialize answered (in-page postMessage round trip)",
            "ui/initialize answered -> tool-result in the view",
            "iframe inserted -> tool-result in the view",
        ],
    );
    row(
        "frame navigation start -> HTML received (navigation timing responseEnd)",
        col(&b_scheme, |s| s.response_end),
    );
    println!();
    println!("ratios (p50 / p50):");
    ratio(
        "cold total: Porthole (resources/read served -> result in view) / bare (iframe inserted -> result in view)",
        p_total,
        bare.total,
    );
    ratio(
        "cold total: Porthole / bare from a custom scheme (iframe inserted -> result in view)",
        p_total,
        bare_scheme.total,
    );
    ratio(
        "document load (navigation start -> script runs): Porthole's mcpview: frame / bare srcdoc frame",
        p_load,
        bare.load,
    );
    ratio(
        "document load: Porthole's mcpview: frame / bare frame from a custom scheme",
        p_load,
        bare_scheme.load,
    );
    ratio("ui/initialize round trip: Porthole / bare", p_init, bare.init);
    ratio(
        "cold view (server got tools/call -> result in view): HTML from the cache / from resources/read",
        cached_call,
        uncached_call,
    );
    ratio(
        "steady delivery: Porthole (result leaves the server -> view) / bare (postMessage -> view)",
        p_steady,
        b_steady,
    );
    ratio(
        "Porthole steady delivery (result leaves the server -> view) / bare document load of the same HTML",
        p_steady,
        bare.load,
    );

    sdk_latency(runs, baseline)
}

/// 1d: the cold path again with a view as they are in the wild (built with the official SDK,
/// about 600 KB of script to parse and run before it asks `ui/initialize`).
fn sdk_latency(runs: usize, baseline: &Path) -> Result<()> {
    let html = porthole_e2e::bench::sdk_stamp_view()?;
    let p = porthole_latency(runs, false, "stamp_sdk", false)?;
    let cached = porthole_latency(runs, true, "stamp_sdk", false)?;
    let b = bare_latency(baseline, runs, &html, false)?;
    let b_scheme = bare_scheme_latency(runs, &html)?;
    println!();
    println!(
        "1d. An SDK-built view, cold: the demo folder view (React and the official ext-apps SDK, {} KB) with \
         the same stamps, `stamp_sdk` returning at once; Porthole ({} calls, the view cache off; {} with it on) \
         and the same HTML in a bare frame in an empty window, as srcdoc ({} views) and from a custom scheme \
         ({} views)",
        html.len() / 1000,
        p.cold.len(),
        cached.cold.len(),
        b.cold.len(),
        b_scheme.len()
    );
    let porthole = cold_steps(
        &p.cold,
        [
            "Porthole: server served resources/read -> frame navigation start",
            "Porthole: frame navigation start -> the view's first script runs (the document over mcpview:)",
            "Porthole: first script -> ui/initialize answered (the SDK's script runs, then the relay)",
            "Porthole: ui/initialize answered -> tool-result in the view",
            "Porthole: server served resources/read -> tool-result in the view (the whole cold path)",
        ],
    );
    row(
        "Porthole, view cache on: server got tools/call -> tool-result in the view",
        col(&cached.cold, |s| s.result - s.received_at),
    );
    let bare = cold_steps(
        &b.cold,
        [
            "bare: iframe inserted -> frame navigation start",
            "bare: frame navigation start -> the view's first script runs",
            "bare: first script -> ui/initialize answered (the SDK's script runs, then the in-page answer)",
            "bare: ui/initialize answered -> tool-result in the view",
            "bare: iframe inserted -> tool-result in the view",
        ],
    );
    let bare_scheme = cold_steps(
        &b_scheme,
        [
            "bare from a custom scheme: iframe inserted -> frame navigation start",
            "bare from a custom scheme: frame navigation start -> the view's first script runs (over bare:)",
            "bare from a custom scheme: first script -> ui/initialize answered",
            "bare from a custom scheme: ui/initialize answered -> tool-result in the view",
            "bare from a custom scheme: iframe inserted -> tool-result in the view",
        ],
    );
    println!();
    println!("ratios, the SDK-built view (p50 / p50):");
    ratio(
        "cold total: Porthole (resources/read served -> result in view) / bare (iframe inserted -> result in view)",
        porthole.total,
        bare.total,
    );
    ratio(
        "cold total: Porthole / bare from a custom scheme (iframe inserted -> result in view)",
        porthole.total,
        bare_scheme.total,
    );
    ratio(
        "document load: Porthole's mcpview: frame / bare srcdoc frame",
        porthole.load,
        bare.load,
    );
    ratio(
        "document load: Porthole's mcpview: frame / bare frame from a custom scheme",
        porthole.load,
        bare_scheme.load,
    );
    ratio(
        "first script -> ui/initialize answered: Porthole / bare",
        porthole.init,
        bare.init,
    );
    Ok(())
}

fn memory(sdk_only: bool) -> Result<()> {
    println!();
    println!(
        "2. Memory of porthole and all its descendants, 3 s after the turn's views settled \
         (median of 3 readings 1 s apart)"
    );
    for (kind, label) in [
        (ViewKind::Stamp, "the bench server's stamp view (3 KB, plain JS)"),
        (
            ViewKind::Sdk,
            "the demo server's folder view (about 600 KB: React and the official ext-apps SDK)",
        ),
    ] {
        if sdk_only && matches!(kind, ViewKind::Stamp) {
            continue;
        }
        println!("  with {label}:");
        let one = memory_with(&kind, 1, false)?;
        let many = memory_with(&kind, MANY_VIEWS, false)?;
        let one_live = memory_with(&kind, 1, true)?;
        let many_live = memory_with(&kind, MANY_VIEWS, true)?;
        print_memory_runs("as the window runs (views far out of sight are parked):", &one, &many);
        print_memory_runs(
            "every view kept live (the transcript made 200 000 px tall, so none is out of sight):",
            &one_live,
            &many_live,
        );
        println!(
            "  ratio {MANY_VIEWS} views / 1 view, PSS: {:.2}x as the window runs, {:.2}x every view live",
            totals(&many.with).1 / totals(&one.with).1,
            totals(&many_live.with).1 / totals(&one_live.with).1
        );
    }
    Ok(())
}
