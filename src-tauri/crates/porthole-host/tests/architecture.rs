//! The rule of ARCHITECTURE.md: dependencies point one way, shell → host → domain crates.
//! Nothing under `src-tauri/crates/` depends on Tauri (or on a windowing or dialog crate), even
//! through another crate, and no crate depends on the shell.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

/// Crates only the shell may use.
const WINDOW_CRATES: &[&str] = &[
    "tauri",
    "tauri-build",
    "tauri-runtime",
    "tauri-runtime-wry",
    "wry",
    "tao",
    "rfd",
    "gtk",
];

#[test]
fn nothing_under_crates_depends_on_the_desktop_shell_or_tauri() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(&workspace)
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();

    let names: HashMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let crates_dir = workspace.join("src-tauri/crates").canonicalize().unwrap();
    let domain: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| Path::new(p["manifest_path"].as_str().unwrap()).starts_with(&crates_dir))
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(
        domain.iter().any(|id| names[id] == "porthole-host"),
        "porthole-host is under crates/"
    );
    assert!(domain.len() >= 9, "{domain:?}");

    // Every dependency edge of every kind (normal, build, dev).
    let edges: HashMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let deps = n["deps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["pkg"].as_str().unwrap())
                .collect();
            (n["id"].as_str().unwrap(), deps)
        })
        .collect();
    for start in &domain {
        let mut seen = HashSet::new();
        let mut stack = vec![(*start, vec![names[start]])];
        while let Some((id, path)) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let name = names[id];
            assert!(
                !WINDOW_CRATES.contains(&name) && name != "porthole",
                "{} reaches {name}: {}",
                names[start],
                path.join(" → ")
            );
            for dep in edges.get(id).into_iter().flatten() {
                let mut next = path.clone();
                next.push(names[dep]);
                stack.push((dep, next));
            }
        }
    }
}

#[test]
fn the_shell_depends_on_the_host() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")).unwrap();
    assert!(
        manifest.contains("porthole-host.workspace = true"),
        "the shell's Cargo.toml uses porthole-host"
    );
}
