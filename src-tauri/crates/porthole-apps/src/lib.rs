//! Porthole's MCP Apps host (`io.modelcontextprotocol/ui`), with no Tauri dependency: what a
//! view may load (its CSP), how a view's HTML is fetched and checked, the unguessable tokens
//! its URL carries, the view ↔ host JSON-RPC protocol, and what a view is told about its host
//! ([`host_context`]: theme and style variables, display modes, container limits, locale, time
//! zone). The desktop shell only serves the HTML on its custom scheme and relays messages
//! between the frame and [`bridge`].

pub mod bridge;
pub mod check;
pub mod csp;
pub mod diagnostics;
pub mod display;
pub mod download;
pub mod host_context;
pub mod host_emulation;
pub mod openai_compat;
pub mod partial_json;
pub mod resource;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod theme;
pub mod tokens;
pub mod view_storage;

pub use bridge::tool_definition;
