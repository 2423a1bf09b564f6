//! What the person allowed once and for all, in one place they can see and undo: tools whose
//! calls are no longer asked about (remembered "Always allow", and each server's `alwaysAllow`
//! in its config), and servers whose requests to the model are no longer asked about.

use serde::Serialize;
use ts_rs::TS;

use crate::Host;
use crate::error::{AppError, AppResult};

/// Where a tool's standing approval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalSource {
    /// "Always allow" in the window (or the terminal): revocable here.
    Remembered,
    /// The server's `alwaysAllow` in its config file: changed there.
    Config,
}

/// A tool whose calls run without asking.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolApproval {
    pub server: String,
    pub tool: String,
    pub source: ApprovalSource,
    /// When it was remembered (Unix milliseconds); `None` for the config's.
    #[ts(type = "number | null")]
    pub since: Option<i64>,
}

/// Everything allowed for good.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Approvals {
    pub tools: Vec<ToolApproval>,
    /// Servers whose sampling requests reach the model without asking (their answers are still
    /// shown before they go back).
    pub sampling: Vec<String>,
}

impl Host {
    /// Every standing approval: remembered ones first (newest first), then the config's.
    pub fn approvals(&self) -> AppResult<Approvals> {
        let store = self.store()?;
        let mut tools: Vec<ToolApproval> = store
            .always_allowed()?
            .into_iter()
            .map(|a| ToolApproval {
                server: a.server,
                tool: a.tool,
                source: ApprovalSource::Remembered,
                since: Some(a.created_at),
            })
            .collect();
        tools.sort_by_key(|a| std::cmp::Reverse(a.since));
        for status in self.inner.servers.statuses() {
            for tool in &status.tools {
                if self.inner.servers.always_allowed(&status.name, &tool.name) {
                    tools.push(ToolApproval {
                        server: status.name.clone(),
                        tool: tool.name.clone(),
                        source: ApprovalSource::Config,
                        since: None,
                    });
                }
            }
        }
        Ok(Approvals {
            tools,
            sampling: crate::sampling::always_servers(store),
        })
    }

    /// Calls of `tool` of `server` are asked about again (a remembered approval is forgotten).
    pub fn revoke_tool_approval(&self, server: &str, tool: &str) -> AppResult<Approvals> {
        let store = self.store()?;
        if !store
            .always_allowed()?
            .iter()
            .any(|a| a.server == server && a.tool == tool)
        {
            return Err(AppError::not_found(format!(
                "{tool} of {server} is not remembered as always allowed"
            )));
        }
        store.set_always_allowed(server, tool, false)?;
        self.approvals()
    }

    /// `server`'s requests to the model are asked about again.
    pub fn revoke_sampling(&self, server: &str) -> AppResult<Approvals> {
        self.forget_sampling(server);
        self.approvals()
    }
}
