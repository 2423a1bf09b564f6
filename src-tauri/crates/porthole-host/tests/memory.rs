//! Freed memory goes back to the system when the app says a burst of work is over (its own
//! test binary: it measures the whole process's resident memory).

/// The process's resident memory, in bytes (Linux: `/proc/self/statm`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn memory_freed_after_a_burst_is_given_back() {
    const MIB: u64 = 1 << 20;
    // A burst: 64 MiB in small pieces (as parsed JSON is), of which one piece in a hundred is
    // still in use afterwards, the last one among them, so the allocator cannot give the
    // memory back from the top of its heap by itself.
    let before = resident_bytes();
    let mut pieces: Vec<Vec<u8>> = (0..65_536).map(|i| vec![i as u8; 1024]).collect();
    let kept: Vec<Vec<u8>> = pieces
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| i % 100 == 0 || *i == 65_535)
        .map(|(_, p)| std::mem::take(p))
        .collect();
    drop(pieces);
    let after_burst = resident_bytes();
    assert!(
        after_burst > before + 48 * MIB,
        "the freed pieces are still held: {} MiB more than before",
        (after_burst.saturating_sub(before)) / MIB
    );

    assert!(
        porthole_host::memory::give_back_freed_memory(),
        "nothing was given back"
    );
    let given_back = resident_bytes();
    assert!(
        given_back + 48 * MIB < after_burst,
        "resident after giving back: {} MiB, after the burst: {} MiB",
        given_back / MIB,
        after_burst / MIB
    );
    assert_eq!(kept.len(), 657, "what is still in use stays");
    assert!(kept.iter().all(|p| p.len() == 1024));
}
