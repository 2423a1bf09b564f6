//! Declares the app's command ACL manifest: with it, every command needs an explicit
//! `allow-<command>` permission in a capability, even for the app's own front end. The commands
//! come from the one list in `crates/porthole-host/src/command_list.rs`. Also gives the binary
//! the commit it is built from (`PORTHOLE_COMMIT`, shown by `porthole --version`), and lays its
//! code out in the order of `link-order/porthole.txt` in release builds (`link-order/README.md`).

use std::path::Path;

include!("crates/porthole-host/src/command_list.rs");
include!("link-order/link_order.rs");

macro_rules! names {
    (
        main: { $($main:ident: $main_args:ty => $main_result:ty,)* }
        shared: { $($shared:ident: $shared_args:ty => $shared_result:ty,)* }
        pop_out: { $($pop:ident: $pop_args:ty => $pop_result:ty,)* }
    ) => {
        &[$(stringify!($main),)* $(stringify!($shared),)* $(stringify!($pop),)*]
    };
}

const COMMANDS: &[&str] = app_command_list!(names);

/// The commit being built: `PORTHOLE_COMMIT` when set (a build from a tarball can say), else
/// git's short hash of HEAD, else "unknown" (no git, or not a clone).
fn commit() -> String {
    println!("cargo:rerun-if-env-changed=PORTHOLE_COMMIT");
    if let Some(commit) = std::env::var("PORTHOLE_COMMIT").ok().filter(|c| !c.trim().is_empty()) {
        return commit.trim().to_string();
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|text| !text.is_empty())
    };
    // Built again when HEAD moves: HEAD itself, the branch it names, and the packed refs.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into())
}

fn main() {
    println!("cargo:rustc-env=PORTHOLE_COMMIT={}", commit());
    // The package's folder as cargo gives it to this run (not `env!`, the folder this script was
    // compiled in: a target folder shared by several clones reuses the script, and the list it
    // named was another clone's, or gone).
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    link_order("porthole", &Path::new(&manifest).join("link-order"));
    println!("cargo:rerun-if-changed=crates/porthole-host/src/command_list.rs");
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
