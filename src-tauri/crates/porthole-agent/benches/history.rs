//! The history a turn sends the model, read back from a long conversation against a short one
//! (prints numbers, asserts nothing): `cargo bench -p porthole-agent --bench history` (part of
//! `make bench`).
//!
//! A store file in a temporary directory; each turn of the conversation is written as a turn
//! writes it (`shape::turn`: one tool call, 64 KB for its view). Timed is [`load_history`],
//! which every turn runs before it asks the model, at 10, 300 and 1,000 turns.

mod shape;
use std::time::Instant;

use porthole_agent::record::load_history;
use porthole_store::Store;

/// Reads timed at each length.
const RUNS: usize = 30;
/// The conversation's lengths, in turns of one call each.
const LENGTHS: [usize; 3] = [10, 300, 1000];

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("porthole.db")).unwrap();
    let conversation = store.create_conversation("Long").unwrap().id;
    println!("The history a turn sends, read from a conversation of N turns (one tool call each, 64 KB for its view)");
    let mut medians = Vec::new();
    let mut turns = 0;
    for length in LENGTHS {
        while turns < length {
            shape::turn(&store, &conversation, turns);
            turns += 1;
        }
        let mut ms = Vec::new();
        let mut messages = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            messages = load_history(&store, &conversation).unwrap().len();
            ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        ms.sort_by(f64::total_cmp);
        let (p50, p90, fastest) = (ms[ms.len() / 2], ms[ms.len() * 9 / 10], ms[0]);
        println!(
            "  {length:>5} turns ({messages} messages): p50 {p50:8.3} ms   p90 {p90:8.3} ms   fastest {fastest:8.3} ms   per turn {:.1} µs",
            p50 * 1000.0 / length as f64
        );
        medians.push(p50);
    }
    println!(
        "  per turn (p50): {} turns / {} turns = {:.2}×",
        LENGTHS[LENGTHS.len() - 1],
        LENGTHS[0],
        (medians[medians.len() - 1] / LENGTHS[LENGTHS.len() - 1] as f64) / (medians[0] / LENGTHS[0] as f64)
    );
}
