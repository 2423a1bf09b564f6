//! Declares the app's command ACL manifest: with it, every `#[tauri::command]` needs an
//! explicit `allow-<command>` permission in a capability, even for the app's own front end.
//! Keep this list equal to the commands registered in `src/desktop.rs`.

const COMMANDS: &[&str] = &[
    "app_info",
    "list_servers",
    "ui_ready",
    "answer_elicitation",
    "list_questions",
    "model_info",
    "list_conversations",
    "open_conversation",
    "rename_conversation",
    "delete_conversation",
    "search_conversations",
    "send_message",
    "retry_turn",
    "edit_and_resend",
    "stop_turn",
    "answer_approval",
    "view_message",
    "close_view",
    "reopen_views",
    "set_view_display_mode",
    "teardown_views",
    "answer_download",
    "set_view_container",
    "teardown_view",
    "pop_out_view",
    "pop_out_ready",
    "pop_in_view",
    "clipboard_write_requested",
    "run_tool",
    "model_settings",
    "save_model_settings",
    "list_provider_models",
    "test_model",
    "save_api_key",
    "delete_api_key",
    "general_settings",
    "save_general_settings",
    "system_theme_changed",
    "server_settings",
    "save_server",
    "remove_server",
    "set_server_enabled",
    "set_server_mcp_apps",
    "set_mcp_apps",
    "import_candidates",
    "import_preview",
    "import_servers",
    "server_log",
    "sign_in_server",
    "sign_out_server",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
