//! What the benchmarks share: finding the binaries they time, starting the app to "ready", and
//! the statistics they print.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::target_dir;

/// The release build of `name` when there is one (`make bench` builds it), else the debug build.
pub fn binary(name: &str) -> PathBuf {
    let release = target_dir().join("release").join(name);
    if release.is_file() {
        release
    } else {
        target_dir().join("debug").join(name)
    }
}

/// The benchmark's plain-JS view (`bench-view-server/stamp.html`, about 3 KB) with its stamps
/// recorded ([`with_stamps`]).
pub fn stamp_view() -> anyhow::Result<String> {
    with_stamps(include_str!("../bench-view-server/stamp.html"), "stamp.html")
}

/// The demo server's folder view (`ui/dist-views/directory.html`, built by `make ui`: React and
/// the official ext-apps SDK, about 600 KB) with the same stamps recorded ([`with_stamps`]). The
/// views benchmark times it in Porthole and in a bare frame.
pub fn sdk_stamp_view() -> anyhow::Result<String> {
    let path = crate::workspace_root().join("ui/dist-views/directory.html");
    let html =
        std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e} (run `make ui` first)", path.display()))?;
    with_stamps(&html, &path.display().to_string())
}

/// `html` (named `what` in errors) with `bench-view-server/stamps.js` as its first script, which
/// records when things reach the view (`__READ_AT__` is left for whoever serves it to fill in).
fn with_stamps(html: &str, what: &str) -> anyhow::Result<String> {
    // Before the view's own script, so that its listener is the first to see the host's messages.
    let at = html
        .find("<script")
        .ok_or_else(|| anyhow::anyhow!("{what} has no script"))?;
    let script = include_str!("../bench-view-server/stamps.js");
    Ok(format!("{}<script>\n{script}</script>\n{}", &html[..at], &html[at..]))
}

/// Makes the window tests' harness ([`crate::App`]) start the release `porthole` when there is
/// one, unless `PORTHOLE_BIN` already names a binary. Call first thing in `main`, before any
/// thread is started.
pub fn use_release_porthole() {
    if std::env::var_os("PORTHOLE_BIN").is_none() {
        // SAFETY: the caller has started no other thread yet.
        unsafe { std::env::set_var("PORTHOLE_BIN", binary("porthole")) };
    }
}

/// The median of `v` (0 when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The nearest-rank percentile `p` (0–100) of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// One start of the app (or the empty window) to ready, and its memory at rest.
pub struct StartSample {
    /// From spawning the binary to its `porthole-ready` line (Porthole: the composer can take
    /// input; the empty window: its page has loaded).
    pub ready_ms: f64,
    /// 3 s after ready, summed over the process and its descendants.
    pub rss_kib: u64,
    pub pss_kib: u64,
    pub processes: usize,
}

/// Starts `binary` (with `--profile <profile>` when given) under `PORTHOLE_REPORT_READY=1`,
/// waits for it to be ready, lets it rest 3 s, reads its memory, and closes it and its children.
pub fn start_to_ready(binary: &Path, profile: Option<&Path>) -> StartSample {
    let mut cmd = Command::new(binary);
    if let Some(p) = profile {
        cmd.arg("--profile").arg(p);
    }
    cmd.env("PORTHOLE_REPORT_READY", "1")
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("PORTHOLE_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let ready_ms = loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("porthole-ready") => break started.elapsed().as_secs_f64() * 1000.0,
            Some(_) => continue,
            None => panic!("{} exited before it was ready", binary.display()),
        }
    };
    std::thread::sleep(Duration::from_secs(3));
    let pids = crate::process_tree(child.id());
    let (rss_kib, pss_kib) = pids
        .iter()
        .map(|&p| crate::memory_kib(p))
        .fold((0, 0), |(r, p), (r2, p2)| (r + r2, p + p2));
    // Closed as a session ending closes it (SIGTERM: Porthole quits as from its close button,
    // leaving its store sound), killed if it has not ended 10 s later.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    // Children that outlive the app (the MCP server, WebKit helpers) get the same end.
    for &p in &pids[1..] {
        let _ = Command::new("kill").arg(p.to_string()).stderr(Stdio::null()).status();
    }
    std::thread::sleep(Duration::from_secs(1));
    StartSample {
        ready_ms,
        rss_kib,
        pss_kib,
        processes: pids.len(),
    }
}
