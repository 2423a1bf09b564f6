//! Declares the app's command ACL manifest: with it, every command needs an explicit
//! `allow-<command>` permission in a capability, even for the app's own front end. The commands
//! come from the one list in `crates/porthole-host/src/command_list.rs`.

include!("crates/porthole-host/src/command_list.rs");

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

fn main() {
    println!("cargo:rerun-if-changed=crates/porthole-host/src/command_list.rs");
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
