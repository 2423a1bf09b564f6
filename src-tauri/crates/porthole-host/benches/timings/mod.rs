//! What the host's benchmarks print of a set of timings.

/// The `p`th percentile of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Prints one line of timings in ms (p50, p90, fastest, how many), returns the p50.
pub fn summary(label: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    let p50 = percentile(&ms, 50.0);
    println!(
        "  {label:<54} p50 {p50:>8.3} ms   p90 {:>8.3} ms   fastest {:>8.3} ms   ({} runs)",
        percentile(&ms, 90.0),
        ms[0],
        ms.len()
    );
    p50
}
