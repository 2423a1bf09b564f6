//! Start-up and idle-memory benchmark: Porthole against an empty Tauri 2 window built in the
//! same workspace. Prints numbers; asserts nothing. Run with `make bench` (release builds, under
//! Xvfb).
//!
//! - cold start to ready: from spawning the binary to it printing `porthole-ready` (Porthole:
//!   when its composer can take input; the baseline: when its page has loaded). Median and
//!   spread of `PORTHOLE_BENCH_RUNS` runs (default 10).
//! - idle memory: 3 s after ready, the RSS and the PSS (shared pages split fairly) of the
//!   process and all its descendants: WebKit's web and network processes and, for Porthole, the
//!   demo MCP server it starts.
//! - size: the two release binaries' files, as built (the workspace's profile strips symbols).

use porthole_e2e::bench::{StartSample as Sample, binary, median, start_to_ready as run_once};

struct Summary {
    ready_median: f64,
    ready_min: f64,
    ready_max: f64,
    rss_mib: f64,
    pss_mib: f64,
    processes: usize,
}

fn summarize(name: &str, samples: &[Sample]) -> Summary {
    let ready: Vec<f64> = samples.iter().map(|s| s.ready_ms).collect();
    let s = Summary {
        ready_median: median(ready.clone()),
        ready_min: ready.iter().copied().fold(f64::INFINITY, f64::min),
        ready_max: ready.iter().copied().fold(0.0, f64::max),
        rss_mib: median(samples.iter().map(|s| s.rss_kib as f64 / 1024.0).collect()),
        pss_mib: median(samples.iter().map(|s| s.pss_kib as f64 / 1024.0).collect()),
        processes: samples.iter().map(|s| s.processes).max().unwrap_or(0),
    };
    println!(
        "{name:<10} ready {:>7.0} ms (min {:.0}, max {:.0})   idle RSS {:>6.1} MiB   PSS {:>6.1} MiB   {} processes",
        s.ready_median, s.ready_min, s.ready_max, s.rss_mib, s.pss_mib, s.processes
    );
    s
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else to parse.
    let runs: usize = std::env::var("PORTHOLE_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let porthole = binary("porthole");
    let baseline = binary("porthole-baseline-window");
    println!("start-up and idle memory, {runs} runs each (median)");
    println!("porthole: {}\nbaseline: {}", porthole.display(), baseline.display());
    // Alternate the two, after one untimed run of each, so neither gets warmer caches or a
    // quieter machine than the other.
    let profile = |dir: &tempfile::TempDir| Some(dir.path().to_path_buf());
    let warm = tempfile::tempdir().unwrap();
    run_once(&baseline, None);
    run_once(&porthole, profile(&warm).as_deref());
    let (mut bs, mut ps) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let fresh = tempfile::tempdir().unwrap();
        bs.push(run_once(&baseline, None));
        ps.push(run_once(&porthole, profile(&fresh).as_deref()));
        eprintln!(
            "run {:>2}: baseline {:>5.0} ms, porthole {:>5.0} ms",
            i + 1,
            bs[i].ready_ms,
            ps[i].ready_ms
        );
    }
    let b = summarize("baseline", &bs);
    let p = summarize("porthole", &ps);
    println!(
        "ratio porthole/baseline: start-up {:.2}x (median), {:.2}x (fastest), idle RSS {:.2}x, idle PSS {:.2}x",
        p.ready_median / b.ready_median,
        p.ready_min / b.ready_min,
        p.rss_mib / b.rss_mib,
        p.pss_mib / b.pss_mib
    );
    let size = |path: &std::path::Path| {
        std::fs::metadata(path)
            .map(|m| m.len() as f64 / 1e6)
            .unwrap_or(f64::NAN)
    };
    let (porthole_mb, baseline_mb) = (size(&porthole), size(&baseline));
    println!(
        "release binary: porthole {porthole_mb:.2} MB, baseline {baseline_mb:.2} MB, ratio {:.2}x",
        porthole_mb / baseline_mb
    );
}
