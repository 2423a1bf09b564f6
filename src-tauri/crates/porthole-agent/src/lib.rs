//! Porthole's agent loop and model providers, with no Tauri dependency: the desktop app and the
//! headless `porthole run` use exactly this code.

pub mod agent;
pub mod agui;
pub mod context;
pub mod conversation;
pub mod events;
pub mod keys;
pub mod provider;
pub mod providers;
pub mod record;
pub mod wire;

pub use agent::{
    APP_TOOL_TIMEOUT, Agent, AllowAll, AppTool, AppTools, ApprovalRequest, Approver, CallEnd, DenyAll, NoViews,
    RememberedApprovals, ToolRunner, TurnResult, ViewReports, ViewState,
};
pub use context::ModelContext;
pub use conversation::{Message, Part, Role, ToolSpec, Usage};
pub use events::{CallStatus, ChannelSink, Decision, EventSink, MissingServer, RemoteView, StopReason, TurnEvent};
pub use provider::{ModelEvent, ModelReply, ModelRequest, Provider, ProviderError, RetryKind, RetryPolicy};
