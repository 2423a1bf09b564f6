// The app's window commands, written once: each with the arguments it takes (one struct, the
// invoke payload; `NoArgs` for none) and what it answers. Grouped by the windows that may call
// them. This file is included three times: by `porthole_host::contract` (the TypeScript client
// and the capabilities are generated and checked from it), by the shell (`generate_handler!`)
// and by the shell's build script (the command ACL manifest). Add a command here, then write its
// wrapper in `src-tauri/src/commands.rs` and run `PORTHOLE_BLESS=1 cargo test -p porthole-host
// --test contract` to regenerate the front end's client and the capabilities.
macro_rules! app_command_list {
    ($callback:ident) => {
        $callback! {
            // Only the main window.
            main: {
                app_info: NoArgs => AppInfo,
                list_servers: NoArgs => Vec<ServerStatus>,
                ui_ready: NoArgs => (),
                answer_elicitation: AnswerElicitation => (),
                list_questions: NoArgs => Vec<Question>,
                model_info: NoArgs => ModelInfo,
                list_conversations: NoArgs => Vec<Conversation>,
                list_conversation_page: ConversationPage => ConversationList,
                open_conversation: ConversationRef => StoredConversation,
                earlier_messages: EarlierMessages => StoredConversation,
                keep_scroll_position: KeepScrollPosition => (),
                rename_conversation: RenameConversation => (),
                delete_conversation: ConversationRef => (),
                export_conversation: ExportConversation => Option<String>,
                search_conversations: SearchConversations => Vec<SearchHit>,
                send_message: SendMessage => String,
                list_agents: NoArgs => Vec<AgentSummary>,
                agent_settings: NoArgs => Vec<AgentEntry>,
                save_agent: SaveAgent => Vec<AgentEntry>,
                remove_agent: AgentRef => Vec<AgentEntry>,
                list_prompts: NoArgs => PromptList,
                complete_argument: CompleteArgument => Completions,
                send_prompt: SendPrompt => String,
                list_attachable: NoArgs => ResourceList,
                template_uri: TemplateUri => String,
                attach_resource: ResourceRef => AttachmentInfo,
                retry_turn: InConversation => (),
                edit_and_resend: EditAndResend => (),
                stop_turn: InConversation => bool,
                send_without_waiting: InConversation => bool,
                answer_approval: AnswerApproval => (),
                approvals: NoArgs => Approvals,
                revoke_tool_approval: ToolRef => Approvals,
                revoke_sampling: ServerRef => Approvals,
                reopen_views: ReopenViews => (),
                teardown_views: InConversation => (),
                answer_download: AnswerDownload => usize,
                answer_sampling: AnswerSampling => (),
                answer_link: AnswerLink => (),
                answer_server_sampling: AnswerServerSampling => (),
                pop_out_view: ViewRef => String,
                clipboard_write_requested: NoArgs => (),
                run_tool: RunTool => ToolRun,
                read_resource: ResourceRef => ResourceRead,
                model_settings: NoArgs => ModelSettings,
                save_model_settings: SaveModelSettings => (),
                list_provider_models: ProviderRequest => Vec<String>,
                test_model: TestModel => ModelTest,
                save_api_key: SaveApiKey => (),
                delete_api_key: ProviderRef => (),
                general_settings: NoArgs => GeneralSettings,
                save_general_settings: SaveGeneralSettings => GeneralSettings,
                system_theme_changed: SystemThemeChanged => (),
                server_settings: NoArgs => ServerSettings,
                save_server: SaveServer => ServerSettings,
                remove_server: ServerRef => ServerSettings,
                set_server_enabled: ServerSwitch => ServerSettings,
                set_server_mcp_apps: ServerSwitch => ServerSettings,
                set_mcp_apps: McpAppsSwitch => ServerSettings,
                import_candidates: NoArgs => Vec<ImportSource>,
                import_preview: ImportPath => ImportPreview,
                choose_import_file: NoArgs => Option<String>,
                import_servers: ImportServers => ImportReport,
                server_install_request: NoArgs => Option<ServerInstallRequest>,
                answer_server_install: AnswerServerInstall => Option<ServerSettings>,
                server_log: ServerRef => ServerLog,
                sign_in_server: ServerRef => (),
                reconnect_server: ServerRef => (),
                sign_out_server: ServerRef => String,
                clear_view_data: ServerRef => String,
                recover_store: NoArgs => String,
                // The workbench's server inspector.
                server_details: ServerRef => ServerDetails,
                ping_server: ServerRef => f64,
                server_traffic: ServerTraffic => Vec<TrafficEntry>,
                traffic_message: TrafficMessage => Option<Value>,
                export_server_traffic: ServerRef => Option<String>,
                subscribe_resource: ResourceRef => bool,
                preview_prompt: PreviewPrompt => PromptPreview,
                // The workbench's view inspector.
                set_view_inspection: InspectionSwitch => (),
                preview_view: PreviewView => ViewPreview,
                // The workbench's host emulation.
                host_emulation: NoArgs => HostEmulationState,
                set_host_emulation: SetHostEmulation => HostEmulationState,
            }
            // The main window and pop-out windows; each checks the asking window shows the view.
            shared: {
                view_message: ViewMessage => (),
                close_view: ViewRef => (),
                set_view_display_mode: SetViewDisplayMode => (),
                set_view_container: SetViewContainer => (),
                teardown_view: ViewRef => (),
                allow_view_devices: ViewRef => (),
                // The view inspector, on a card or in a pop-out.
                view_inspection_on: NoArgs => bool,
                view_inspection: ViewRef => Option<ViewInspection>,
                replay_view: ReplayView => (),
                reload_view: ViewRef => (),
            }
            // Only pop-out windows.
            pop_out: {
                pop_out_ready: NoArgs => String,
                pop_in_view: NoArgs => (),
            }
        }
    };
}
