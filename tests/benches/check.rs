//! `porthole check`, cold (prints numbers, asserts nothing): `cargo bench -p porthole-e2e --bench
//! check`. Each run is a new `porthole` process on a fresh profile, checking one server: the
//! built-in demo server, and `@modelcontextprotocol/server-basic-react` from npm. The release
//! build when there is one (`make bench` makes it).

use std::path::Path;
use std::time::Instant;

use porthole_e2e::bench::{median, use_release_porthole};
use porthole_e2e::{porthole_binary, porthole_command, workspace_root};
use serde_json::json;

fn check_seconds(profile: &Path, args: &[&str]) -> f64 {
    let started = Instant::now();
    let out = porthole_command(profile, args).output().expect("cannot run porthole");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.code() == Some(0),
        "porthole {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    seconds
}

fn main() {
    use_release_porthole();
    println!("porthole: {}", porthole_binary().display());
    let fixtures = workspace_root().join("tests/fixtures");
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("basic-react.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"basic-react": {
            "command": "node",
            "args": ["node_modules/@modelcontextprotocol/server-basic-react/dist/index.js", "--stdio"],
            "cwd": fixtures.display().to_string(),
        }}})
        .to_string(),
    )
    .unwrap();
    let config = config.display().to_string();
    let runs = 10;
    for (what, args) in [
        ("the demo server", vec!["check", "--server", "porthole-demo"]),
        (
            "server-basic-react",
            vec!["--mcp-config", config.as_str(), "check", "--server", "basic-react"],
        ),
    ] {
        let mut seconds = Vec::new();
        for i in 0..runs {
            let profile = scratch.path().join(format!("profile-{what}-{i}").replace(' ', "-"));
            seconds.push(check_seconds(&profile, &args));
        }
        let fastest = seconds.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "porthole check, {what}, cold ({runs} runs, a fresh profile each): median {:.2} s, fastest {:.2} s",
            median(seconds),
            fastest
        );
    }
}
