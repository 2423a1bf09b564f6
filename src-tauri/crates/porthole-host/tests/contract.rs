//! The front end's contract and the shell's capabilities are generated from the Rust types and
//! the one command list; these tests fail when the committed files are stale (run with
//! `PORTHOLE_BLESS=1` to write them again) or when a capability names an unknown command.

use std::path::{Path, PathBuf};

use porthole_host::contract::{capability_permissions, commands, generate, read_tree};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .canonicalize()
        .unwrap()
}

fn bless() -> bool {
    std::env::var_os("PORTHOLE_BLESS").is_some()
}

#[test]
fn the_front_ends_generated_types_and_client_are_up_to_date() {
    let committed = repo().join("ui/src/lib/generated");
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path()).unwrap();
    let generated = read_tree(fresh.path());
    assert!(generated.contains_key(Path::new("commands.ts")));
    assert!(generated.contains_key(Path::new("TurnEvent.ts")));
    if bless() {
        if committed.exists() {
            std::fs::remove_dir_all(&committed).unwrap();
        }
        for (path, text) in &generated {
            let target = committed.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, text).unwrap();
        }
        return;
    }
    let on_disk = read_tree(&committed);
    let stale: Vec<_> = generated
        .keys()
        .chain(on_disk.keys())
        .filter(|p| generated.get(*p) != on_disk.get(*p))
        .collect();
    assert!(
        stale.is_empty(),
        "ui/src/lib/generated is stale ({stale:?}); run PORTHOLE_BLESS=1 cargo test -p porthole-host --test contract"
    );
}

#[test]
fn the_window_gets_camel_case_fields_everywhere() {
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path()).unwrap();
    let tree = read_tree(fresh.path());
    let turn = &tree[Path::new("TurnEvent.ts")];
    assert!(turn.contains("durationMs"), "{turn}");
    assert!(!turn.contains("duration_ms"), "{turn}");
    let record = &tree[Path::new("ToolCallRecord.ts")];
    assert!(record.contains("durationMs"), "{record}");
    let client = &tree[Path::new("commands.ts")];
    assert!(
        client.contains("sendMessage: (args: SendMessage) => invoke<string>(\"send_message\", args)"),
        "{client}"
    );
}

fn capability(name: &str) -> (PathBuf, Value) {
    let path = repo().join("src-tauri/capabilities").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (path, serde_json::from_str(&text).unwrap())
}

#[test]
fn capabilities_grant_exactly_the_listed_commands_to_each_window() {
    for (file, pop_out) in [("main-webview.json", false), ("view-window.json", true)] {
        let (path, mut json) = capability(file);
        let expected = capability_permissions(pop_out);
        if bless() {
            json["permissions"] = serde_json::json!(expected);
            std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap() + "\n").unwrap();
            continue;
        }
        let granted: Vec<String> = json["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            granted, expected,
            "{file} is stale; run PORTHOLE_BLESS=1 cargo test -p porthole-host --test contract"
        );
    }
}

#[test]
fn every_capability_names_only_known_commands() {
    let known: Vec<String> = commands()
        .iter()
        .map(|c| format!("allow-{}", c.name.replace('_', "-")))
        .collect();
    for entry in std::fs::read_dir(repo().join("src-tauri/capabilities")).unwrap() {
        let path = entry.unwrap().path();
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for permission in json["permissions"].as_array().unwrap() {
            let permission = permission.as_str().unwrap();
            if permission.starts_with("core:") {
                continue;
            }
            assert!(
                known.iter().any(|k| k == permission),
                "{}: unknown command permission {permission}",
                path.display()
            );
        }
    }
}
