//! `porthole check` and `porthole snapshot`, cold (prints numbers, asserts nothing): `cargo bench
//! -p porthole-e2e --bench check`, on a display (`make bench` gives it Xvfb). Each run is a new
//! `porthole` process on a fresh profile, checking one server: the built-in demo server, and
//! `@modelcontextprotocol/server-basic-react` from npm — the rules alone (`--no-live`), the whole
//! check (each view loaded live), the whole check with no display (it starts `xvfb-run` itself),
//! and a snapshot of one view. The release build when there is one (`make bench` makes it).

use std::path::Path;
use std::time::Instant;

use porthole_e2e::bench::{median, use_release_porthole};
use porthole_e2e::{porthole_binary, porthole_command, workspace_root};
use serde_json::json;

fn check_seconds(profile: &Path, args: &[&str], display: bool) -> f64 {
    let mut command = porthole_command(profile, args);
    if !display {
        command.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    }
    let started = Instant::now();
    let out = command.output().expect("cannot run porthole");
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
    let out = scratch.path().join("view.png").display().to_string();
    let servers: [(&str, Vec<&str>, &str); 2] = [
        ("the demo server", vec!["--server", "porthole-demo"], "system_monitor"),
        (
            "server-basic-react",
            vec!["--mcp-config", config.as_str(), "--server", "basic-react"],
            "get-time",
        ),
    ];
    for (what, server, tool) in &servers {
        // `--mcp-config` goes before the subcommand, `--server` after it.
        let (global, server) = server.split_at(server.len() - 2);
        let with = |command: &str, extra: &[&str]| -> Vec<String> {
            let mut args: Vec<String> = global.iter().map(|s| s.to_string()).collect();
            args.push(command.into());
            args.extend(server.iter().map(|s| s.to_string()));
            args.extend(extra.iter().map(|s| s.to_string()));
            args
        };
        let modes: [(&str, Vec<String>, bool); 4] = [
            ("check --no-live", with("check", &["--no-live"]), true),
            ("check", with("check", &[]), true),
            ("check, no display", with("check", &[]), false),
            ("snapshot", with("snapshot", &["--tool", tool, "--out", &out]), true),
        ];
        for (mode, args, display) in modes {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut seconds = Vec::new();
            for i in 0..runs {
                let profile = scratch
                    .path()
                    .join(format!("profile-{what}-{mode}-{i}").replace([' ', ','], "-"));
                seconds.push(check_seconds(&profile, &args, display));
            }
            let fastest = seconds.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "porthole {mode}, {what}, cold ({runs} runs, a fresh profile each): median {:.2} s, fastest {:.2} s",
                median(seconds),
                fastest
            );
        }
    }
}
