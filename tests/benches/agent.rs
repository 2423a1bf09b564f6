//! Agent loop benchmarks (prints numbers, asserts nothing): `cargo bench -p porthole-e2e --bench agent`.
//!
//! 1. What the agent loop adds to a tool round trip. The same `echo` tool of Porthole's test
//!    server (stdio) is called directly through `Servers::call_tool`, and through
//!    `Agent::run_turn` driven by an in-process scripted model (no network, next to no time of
//!    its own) that asks for one `echo` call per step. A round trip through the loop is the time
//!    from one `StepStarted` event to the next (request building, the model's events, approval,
//!    the call, the events around it); it is also given as a whole turn's time, less the scripted
//!    model's, over its number of round trips. Done once with a sink that keeps the events in
//!    memory and once with the `Recorder` on a SQLite file, which is what the app uses. The loop
//!    asks `call_tool` for progress notifications, so direct calls are also timed that way.
//! 2. How long a streamed text delta takes from the socket to the turn's event sink, with the
//!    fake LLM on loopback and the real OpenAI and Anthropic providers. The fake stamps each SSE
//!    chunk when its flush to the socket completes, keeping only the latest stamp (after a whole
//!    stream, that of `[DONE]` / `message_stop`, which come after the last text chunk). So the
//!    fake waits `CHUNK_DELAY_MS` between chunks, and the sink reads the stamp the moment the last
//!    `TextDelta` reaches it: then the latest flush is that text delta's own chunk. Turns where
//!    that cannot be told for sure are left out and counted.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use porthole_agent::providers::{ProviderConfig, ProviderKind, build};
use porthole_agent::record::Recorder;
use porthole_agent::{
    Agent, AllowAll, EventSink, Message, ModelEvent, ModelReply, ModelRequest, Part, Provider, ProviderError, Role,
    StopReason, TurnEvent, Usage,
};
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_mcp::{CallOptions, ConnectOptions, ServerConfig, ServerState, Servers};
use porthole_store::Store;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const TEST_SERVER: &str = env!("CARGO_BIN_EXE_porthole-test-server");
/// Tool round trips per turn through the loop.
const ROUND_TRIPS: usize = 10;
/// Timed turns per sink (each of `ROUND_TRIPS` round trips), and timed direct calls.
const TURNS: usize = 30;
const DIRECT_CALLS: usize = TURNS * ROUND_TRIPS;
/// The direct calls and the turns are interleaved in this many rounds.
const ROUNDS: usize = 3;
/// Streamed turns per provider.
const STREAM_TURNS: usize = 200;
/// Pause between the fake's SSE chunks: much longer than a delta takes to reach the sink, so
/// when the last text delta reaches it, the fake's latest flush is that delta's chunk.
const CHUNK_DELAY_MS: u64 = 10;

fn test_server() -> ServerConfig {
    ServerConfig::stdio("test", TEST_SERVER).with_timeout(Duration::from_secs(30))
}

fn echo_args() -> Map<String, Value> {
    json!({"text": "x"}).as_object().cloned().unwrap()
}

/// The `q` quantile (nearest rank) of `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A model that answers at once, in process: while the request holds fewer than `round_trips`
/// tool results it asks for one `echo` call (streaming its start and arguments as a provider
/// does), then it answers with text. `busy_ns` adds up the time spent inside `stream`.
struct ScriptedModel {
    tool: String,
    round_trips: usize,
    busy_ns: AtomicU64,
}

impl Provider for ScriptedModel {
    fn kind(&self) -> &'static str {
        "scripted"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: mpsc::UnboundedSender<ModelEvent>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        async move {
            let started = Instant::now();
            let done = request.messages.iter().filter(|m| m.role == Role::Tool).count();
            let usage = Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 0,
            };
            let reply = if done < self.round_trips {
                let id = format!("call_{done}");
                let arguments = json!({"text": "x"});
                let _ = events.send(ModelEvent::ToolCallStarted {
                    index: 0,
                    id: id.clone(),
                    name: self.tool.clone(),
                });
                let _ = events.send(ModelEvent::ToolCallArgumentsDelta {
                    index: 0,
                    fragment: arguments.to_string(),
                });
                ModelReply {
                    parts: vec![Part::ToolUse {
                        id,
                        name: self.tool.clone(),
                        arguments,
                    }],
                    stop_reason: Some("tool_use".into()),
                    usage,
                }
            } else {
                let text = "done".to_string();
                let _ = events.send(ModelEvent::TextDelta { text: text.clone() });
                ModelReply {
                    parts: vec![Part::Text { text }],
                    stop_reason: Some("end_turn".into()),
                    usage,
                }
            };
            self.busy_ns
                .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
            Ok(reply)
        }
        .boxed()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        async { Ok(vec![]) }.boxed()
    }
}

/// Stamps every `StepStarted`, then hands the event to the store's recorder or keeps it in memory.
struct StepSink {
    recorder: Option<Recorder>,
    events: Mutex<Vec<TurnEvent>>,
    steps: Mutex<Vec<Instant>>,
}

impl EventSink for StepSink {
    fn emit(&self, event: &TurnEvent) {
        if matches!(event, TurnEvent::StepStarted { .. }) {
            self.steps.lock().unwrap().push(Instant::now());
        }
        match &self.recorder {
            Some(recorder) => recorder.emit(event),
            None => self.events.lock().unwrap().push(event.clone()),
        }
    }
}

/// Per-round-trip times of one sink: each round trip alone, and each turn's time over its round trips.
#[derive(Default)]
struct LoopTimes {
    round_trips: Vec<f64>,
    per_turn: Vec<f64>,
}

async fn loop_turn(agent: &Agent, model: &ScriptedModel, store: Option<(&Store, &str)>, times: Option<&mut LoopTimes>) {
    let sink = StepSink {
        recorder: store.map(|(store, conversation)| Recorder::new(store.clone(), conversation)),
        events: Mutex::new(Vec::new()),
        steps: Mutex::new(Vec::new()),
    };
    let busy_before = model.busy_ns.load(Ordering::Relaxed);
    let started = Instant::now();
    let result = agent
        .run_turn(None, vec![], Message::user("echo x"), &sink, CancellationToken::new())
        .await;
    let elapsed = started.elapsed();
    let busy = Duration::from_nanos(model.busy_ns.load(Ordering::Relaxed) - busy_before);
    assert_eq!(result.stop_reason, StopReason::EndTurn, "{:?}", result.error);
    let steps = sink.steps.into_inner().unwrap();
    assert_eq!(steps.len(), ROUND_TRIPS + 1);
    if let Some(times) = times {
        times.round_trips.extend(steps.windows(2).map(|w| us(w[1] - w[0])));
        times.per_turn.push(us(elapsed - busy) / ROUND_TRIPS as f64);
    }
}

async fn direct_calls(servers: &Servers, calls: usize, progress: bool, out: &mut Vec<f64>) {
    for _ in 0..calls {
        let (tx, _rx) = mpsc::unbounded_channel();
        let options = CallOptions {
            progress: progress.then_some(tx),
            ..CallOptions::default()
        };
        let started = Instant::now();
        servers
            .call_tool("test", "echo", Some(echo_args()), options)
            .await
            .unwrap();
        out.push(us(started.elapsed()));
    }
}

fn line(label: &str, n: &str, v: &[f64]) {
    println!(
        "  {label:<44} {n:>24}  {:>7.0} {:>7.0} µs",
        quantile(v, 0.5),
        quantile(v, 0.95)
    );
}

async fn tool_round_trips(servers: &Servers) {
    let tool = servers
        .statuses()
        .into_iter()
        .find(|s| s.state == ServerState::Connected)
        .and_then(|s| s.tools.into_iter().find(|t| t.name == "echo"))
        .expect("the test server offers echo")
        .model_name;
    let model = Arc::new(ScriptedModel {
        tool,
        round_trips: ROUND_TRIPS,
        busy_ns: AtomicU64::new(0),
    });
    let mut agent = Agent::new(model.clone(), "scripted", servers.clone());
    agent.approver = Arc::new(AllowAll);
    agent.step_limit = ROUND_TRIPS as u32 + 5;

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.create_conversation("bench").unwrap().id;

    // Warm-up: the connection, the runtime's threads, SQLite's pages.
    let mut ignored = Vec::new();
    direct_calls(servers, 100, false, &mut ignored).await;
    direct_calls(servers, 100, true, &mut ignored).await;
    for _ in 0..3 {
        loop_turn(&agent, &model, None, None).await;
        loop_turn(&agent, &model, Some((&store, &conversation)), None).await;
    }

    let (mut direct, mut direct_progress) = (Vec::new(), Vec::new());
    let (mut memory, mut recorded) = (LoopTimes::default(), LoopTimes::default());
    for _ in 0..ROUNDS {
        direct_calls(servers, DIRECT_CALLS / ROUNDS, false, &mut direct).await;
        direct_calls(servers, DIRECT_CALLS / ROUNDS, true, &mut direct_progress).await;
        for _ in 0..TURNS / ROUNDS {
            loop_turn(&agent, &model, None, Some(&mut memory)).await;
            loop_turn(&agent, &model, Some((&store, &conversation)), Some(&mut recorded)).await;
        }
    }
    let model_us = model.busy_ns.load(Ordering::Relaxed) as f64 / 1e3;
    let model_requests = (ROUND_TRIPS + 1) * (2 * TURNS + 6);

    println!("tool round trip: `echo` on porthole-test-server over stdio");
    println!("  {:<44} {:>24}  {:>7} {:>7}", "", "", "median", "p95");
    let n_calls = format!("n={DIRECT_CALLS} calls");
    let n_trips = format!("n={} round trips", TURNS * ROUND_TRIPS);
    let n_turns = format!("n={TURNS} turns of {ROUND_TRIPS}");
    line("direct Servers::call_tool", &n_calls, &direct);
    line(
        "direct, with a progress channel (as the loop)",
        &n_calls,
        &direct_progress,
    );
    line("loop, in-memory sink: step to step", &n_trips, &memory.round_trips);
    line("loop, in-memory sink: turn / round trips", &n_turns, &memory.per_turn);
    line(
        "loop, Recorder on SQLite: step to step",
        &n_trips,
        &recorded.round_trips,
    );
    line(
        "loop, Recorder on SQLite: turn / round trips",
        &n_turns,
        &recorded.per_turn,
    );
    let (loop_memory, loop_recorded) = (quantile(&memory.round_trips, 0.5), quantile(&recorded.round_trips, 0.5));
    for (label, base) in [
        ("direct", quantile(&direct, 0.5)),
        ("direct with a progress channel", quantile(&direct_progress, 0.5)),
    ] {
        println!(
            "  loop overhead per round trip over {label} (medians): in-memory sink {:.0} µs, Recorder {:.0} µs",
            loop_memory - base,
            loop_recorded - base,
        );
    }
    println!(
        "  (scripted model's own time: {:.1} µs per request, subtracted from the turn figures)",
        model_us / model_requests as f64
    );
}

/// Per text delta reaching the sink: when it arrived, and the fake's latest flush at that moment.
struct DeltaSink {
    fake: Arc<FakeLlm>,
    deltas: Mutex<Vec<(Instant, Option<Instant>)>>,
}

impl EventSink for DeltaSink {
    fn emit(&self, event: &TurnEvent) {
        if !matches!(event, TurnEvent::TextDelta { .. }) {
            return;
        }
        let arrived = Instant::now();
        let mut deltas = self.deltas.lock().unwrap();
        // The fake stamps a flush after its write returns; the delta can overtake the stamp.
        // The previous delta's chunk is the flush before this one, so wait (briefly) for the stamp to move on.
        let previous = deltas.last().and_then(|d| d.1);
        let mut flushed = self.fake.last_chunk_sent_at();
        while flushed == previous && arrived.elapsed() < Duration::from_millis(1) {
            std::hint::spin_loop();
            flushed = self.fake.last_chunk_sent_at();
        }
        deltas.push((arrived, flushed.filter(|f| Some(*f) != previous)));
    }
}

/// Microseconds from the fake flushing the last text chunk to its `TextDelta` reaching the sink,
/// one per turn, and how many turns could not be measured.
async fn stream_delays(kind: ProviderKind, servers: &Servers) -> (Vec<f64>, usize) {
    let script = Script {
        chunk_delay_ms: CHUNK_DELAY_MS,
        ..Script::default()
    };
    let fake = Arc::new(FakeLlm::start(script).await.unwrap());
    let provider = build(ProviderConfig {
        kind,
        base_url: Some(fake.base_url()),
        ..ProviderConfig::default()
    });
    let agent = Agent::new(provider, "fake-model", servers.clone());
    let text = "The quick brown fox jumps over the lazy dog, then naps in the afternoon sun.";
    let (mut delays, mut unmeasured) = (Vec::new(), 0);
    for turn in 0..STREAM_TURNS + 10 {
        fake.push(Reply::text(text));
        let sink = DeltaSink {
            fake: fake.clone(),
            deltas: Mutex::new(Vec::new()),
        };
        let result = agent
            .run_turn(None, vec![], Message::user("hi"), &sink, CancellationToken::new())
            .await;
        assert_eq!(result.stop_reason, StopReason::EndTurn, "{kind}: {:?}", result.error);
        assert_eq!(result.text, text);
        let deltas = sink.deltas.into_inner().unwrap();
        assert!(deltas.len() >= 3, "{kind}: the text came in {} deltas", deltas.len());
        if turn < 10 {
            continue; // warm-up
        }
        // The stream's final chunk ([DONE] / message_stop) is flushed after the last text chunk:
        // the stamp read at the last delta must be an earlier flush.
        // And it must be one chunk after the one read at the delta before (not two: the chunk
        // after the last text chunk, flushed before the delta arrived).
        let final_flush = fake.last_chunk_sent_at();
        let one_chunk = Duration::from_millis(CHUNK_DELAY_MS) * 3 / 2;
        match (deltas[deltas.len() - 2].1, deltas[deltas.len() - 1]) {
            (Some(before), (arrived, Some(flushed))) if Some(flushed) < final_flush && flushed - before < one_chunk => {
                delays.push(us(arrived - flushed))
            }
            _ => unmeasured += 1,
        }
    }
    (delays, unmeasured)
}

#[tokio::main]
async fn main() {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("cores: {cores}; test server: {TEST_SERVER}");
    let servers = Servers::start(vec![test_server()], ConnectOptions::default());
    let statuses = servers.settled().await;
    assert_eq!(statuses[0].state, ServerState::Connected, "{:?}", statuses[0].error);

    tool_round_trips(&servers).await;

    println!(
        "last text chunk flushed by the fake LLM (loopback) → its TextDelta at the turn's sink \
         ({CHUNK_DELAY_MS} ms between chunks)"
    );
    println!("  {:<44} {:>24}  {:>7} {:>7} {:>7}", "", "", "p50", "p95", "max");
    for (kind, label) in [
        (ProviderKind::OpenAi, "OpenAI provider, chat/completions SSE"),
        (ProviderKind::Anthropic, "Anthropic provider, messages SSE"),
    ] {
        let (delays, unmeasured) = stream_delays(kind, &servers).await;
        let skipped = if unmeasured > 0 {
            format!(" ({unmeasured} turns unmeasured)")
        } else {
            String::new()
        };
        println!(
            "  {label:<44} {:>24}  {:>7.0} {:>7.0} {:>7.0} µs{skipped}",
            format!("n={} turns", delays.len()),
            quantile(&delays, 0.5),
            quantile(&delays, 0.95),
            quantile(&delays, 1.0),
        );
    }
    servers.shutdown().await;
}
