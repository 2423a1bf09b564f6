//! A large profile: 10,000 conversations and 1,000,000 messages, against an empty profile and a
//! small one (100 conversations, 10,000 messages). Prints numbers; asserts nothing. Run with
//! `make bench` (release builds, under Xvfb).
//!
//! - opening the store (closed normally, and after a crash, when every page is checked), listing
//!   the sidebar's first page and searching, through the same
//!   `porthole-store` calls the app makes (`SEARCH_LIMIT` = 50 hits), p50 and p95 of a fixed set
//!   of queries (common, middling and rare words, two-word queries, prefixes), small against large;
//! - start-up to ready and idle memory of the app: `PORTHOLE_BENCH_RUNS` (default 10) alternating
//!   runs on an empty profile and on the large one.
//!
//! The profiles are made once (about a minute for the large one) and kept under the target folder
//! (`bench-profiles/`); each is a copy of the same generated text, so runs compare.

use std::path::{Path, PathBuf};
use std::time::Instant;

use porthole_e2e::bench::{StartSample, binary, median, percentile, start_to_ready};
use porthole_e2e::target_dir;
use porthole_store::Store;
use rusqlite::params;

/// Bump when what is generated changes, so kept profiles are made again.
const GENERATION: u32 = 1;
const MESSAGES_PER_CONVERSATION: usize = 100;
const SEARCH_LIMIT: usize = 50;

/// A small deterministic generator (xorshift64*), so every machine makes the same profile.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// 4,000 made-up words, used with a Zipf-like frequency (word `i` about `1/i` as often as the first).
fn vocabulary() -> Vec<String> {
    const SYLLABLES: [&str; 24] = [
        "ka", "lo", "mi", "ren", "sta", "vo", "tri", "el", "pan", "qu", "dor", "is", "ne", "ul", "bra", "fe", "gi",
        "ho", "jun", "ox", "ty", "ze", "wa", "cy",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seen = std::collections::HashSet::new();
    let mut words = Vec::new();
    while words.len() < 4000 {
        let n = 2 + rng.below(3);
        let word: String = (0..n).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
        if seen.insert(word.clone()) {
            words.push(word);
        }
    }
    words
}

fn zipf(rng: &mut Rng, n: usize) -> usize {
    ((n as f64).powf(rng.unit()) as usize).clamp(1, n) - 1
}

fn sentence(rng: &mut Rng, words: &[String], len: usize) -> String {
    (0..len)
        .map(|_| words[zipf(rng, words.len())].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The database of a profile of `conversations` conversations, made when not kept already.
fn profile(conversations: usize) -> PathBuf {
    let dir = target_dir()
        .join("bench-profiles")
        .join(format!("{conversations}x{MESSAGES_PER_CONVERSATION}-v{GENERATION}"));
    let done = dir.join("complete");
    if done.is_file() {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let db = dir.join("porthole.db");
    drop(Store::open(&db).expect("the schema"));
    let mut conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;")
        .unwrap();
    let words = vocabulary();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let tx = conn.transaction().unwrap();
    {
        let mut conversation = tx
            .prepare("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        let mut message = tx
            .prepare(
                "INSERT INTO messages (conversation_id, role, parts, status, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'complete', ?4, ?4)",
            )
            .unwrap();
        // A year of conversations, oldest first, each a few minutes long.
        let start: i64 = 1_735_689_600_000;
        for c in 0..conversations {
            let id = format!("{:016x}", rng.next());
            let title = sentence(&mut rng, &words, 4);
            let at = start + c as i64 * 3_000_000;
            let last = at + MESSAGES_PER_CONVERSATION as i64 * 1_000;
            conversation.execute(params![id, title, at, last]).unwrap();
            for m in 0..MESSAGES_PER_CONVERSATION {
                let role = if m % 2 == 0 { "user" } else { "assistant" };
                let len = if m % 2 == 0 {
                    8 + rng.below(20)
                } else {
                    20 + rng.below(60)
                };
                let parts = serde_json::json!([{"type": "text", "text": sentence(&mut rng, &words, len)}]).to_string();
                message
                    .execute(params![id, role, parts, at + m as i64 * 1_000])
                    .unwrap();
            }
        }
    }
    tx.commit().unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO message_fts (message_fts) VALUES ('optimize');")
        .unwrap();
    drop(conn);
    // Left as the app leaves it when it closes.
    drop(Store::open(&db).expect("the made store opens"));
    std::fs::write(&done, "").unwrap();
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "made {} ({conversations} conversations, {} messages, {:.0} MiB) in {:.0} s",
        dir.display(),
        conversations * MESSAGES_PER_CONVERSATION,
        size as f64 / 1_048_576.0,
        started.elapsed().as_secs_f64()
    );
    dir
}

/// What is searched: words from the most common to the rare, pairs, and prefixes (every word
/// matches as a prefix, as typed in the sidebar).
fn queries() -> Vec<String> {
    let words = vocabulary();
    let mut q: Vec<String> = [1, 3, 10, 30, 100, 300, 1000, 2000, 3000, 3999]
        .iter()
        .map(|&r| words[r].clone())
        .collect();
    for (a, b) in [(2, 40), (10, 11), (50, 700), (5, 3500), (200, 300)] {
        q.push(format!("{} {}", words[a], words[b]));
    }
    for r in [4, 60, 900] {
        q.push(words[r][..3].to_string());
    }
    q
}

struct StoreFigures {
    /// Opening a store the app left sound (closed normally).
    open_ms: f64,
    /// Opening it after a crash: every page is checked.
    open_checked_ms: f64,
    /// The sidebar's first page (100 conversations).
    list_ms: f64,
    search: Vec<f64>,
}

fn store_figures(dir: &Path) -> StoreFigures {
    let db = dir.join("porthole.db");
    // As after a crash: the record of the file as left sound is gone, so it is checked.
    let _ = std::fs::remove_file(dir.join("porthole.db-checked"));
    let started = Instant::now();
    let store = Store::open(&db).unwrap();
    let open_checked_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert!(store.checked_on_open());
    drop(store);
    let started = Instant::now();
    let store = Store::open(&db).unwrap();
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert!(!store.checked_on_open());
    let started = Instant::now();
    let list = store.list_conversations_page(100, None).unwrap();
    let list_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(list.len(), 100);
    let queries = queries();
    for q in &queries {
        store.search(q, SEARCH_LIMIT).unwrap(); // warm
    }
    let mut search = Vec::new();
    for _ in 0..5 {
        for q in &queries {
            let started = Instant::now();
            store.search(q, SEARCH_LIMIT).unwrap();
            search.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    search.sort_by(f64::total_cmp);
    StoreFigures {
        open_ms,
        open_checked_ms,
        list_ms,
        search,
    }
}

fn main() {
    let runs: usize = std::env::var("PORTHOLE_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let small = profile(100);
    let large = profile(10_000);

    println!("a large profile: 10,000 conversations / 1,000,000 messages against 100 / 10,000 and an empty one");
    let s = store_figures(&small);
    let l = store_figures(&large);
    for (name, f) in [("small", &s), ("large", &l)] {
        println!(
            "{name:<6} store open {:>6.1} ms (after a crash, every page checked: {:>7.1} ms)   first 100 conversations {:>5.1} ms   search p50 {:>6.2} ms  p95 {:>6.2} ms  max {:>6.2} ms",
            f.open_ms,
            f.open_checked_ms,
            f.list_ms,
            percentile(&f.search, 50.0),
            percentile(&f.search, 95.0),
            f.search.last().copied().unwrap_or(0.0)
        );
    }
    println!(
        "ratio large/small: search p50 {:.2}x, p95 {:.2}x",
        percentile(&l.search, 50.0) / percentile(&s.search, 50.0),
        percentile(&l.search, 95.0) / percentile(&s.search, 95.0)
    );

    if runs == 0 {
        return;
    }
    let porthole = binary("porthole");
    println!(
        "start-up and idle memory, {runs} alternating runs each (median): {}",
        porthole.display()
    );
    let warm = tempfile::tempdir().unwrap();
    start_to_ready(&porthole, Some(warm.path()));
    start_to_ready(&porthole, Some(&large));
    let (mut empty, mut full): (Vec<StartSample>, Vec<StartSample>) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let fresh = tempfile::tempdir().unwrap();
        empty.push(start_to_ready(&porthole, Some(fresh.path())));
        full.push(start_to_ready(&porthole, Some(&large)));
        eprintln!(
            "run {:>2}: empty {:>5.0} ms, large {:>5.0} ms",
            i + 1,
            empty[i].ready_ms,
            full[i].ready_ms
        );
    }
    let ready = |v: &[StartSample]| v.iter().map(|s| s.ready_ms).collect::<Vec<_>>();
    let fastest = |v: &[StartSample]| ready(v).into_iter().fold(f64::INFINITY, f64::min);
    let pss = |v: &[StartSample]| median(v.iter().map(|s| s.pss_kib as f64 / 1024.0).collect());
    for (name, v) in [("empty", &empty), ("large", &full)] {
        println!(
            "{name:<6} ready {:>7.0} ms (fastest {:.0})   idle PSS {:>6.1} MiB",
            median(ready(v)),
            fastest(v),
            pss(v)
        );
    }
    println!(
        "ratio large/empty: start-up {:.2}x (median), {:.2}x (fastest), idle PSS {:.2}x",
        median(ready(&full)) / median(ready(&empty)),
        fastest(&full) / fastest(&empty),
        pss(&full) / pss(&empty)
    );
}
