//! Porthole's MCP Apps host (`io.modelcontextprotocol/ui`), with no Tauri dependency: what a
//! view may load (its CSP), how a view's HTML is fetched and checked, the unguessable tokens
//! its URL carries, and the view ↔ host JSON-RPC protocol. The desktop shell only serves the
//! HTML on its custom scheme and relays messages between the frame and [`bridge`].

pub mod bridge;
pub mod csp;
pub mod download;
pub mod resource;
pub mod tokens;
