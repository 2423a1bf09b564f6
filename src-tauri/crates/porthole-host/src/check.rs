//! `porthole check`: each configured server connected as the app connects it (the MCP Apps
//! extension advertised), its tools and views put through [`porthole_apps::check`]'s rules, and
//! connected once more without the extension to see what a text-only host gets. The report is
//! printed as text, as one JSON document (`--json`) or as JUnit XML (`--junit FILE`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use porthole_apps::check::{Finding, Severity, check_tool, check_view, compare_capability};
use porthole_mcp::catalog::{apps_sdk_server, read_tool_meta};
use porthole_mcp::{ElicitationPolicy, ServerConfig, ServerState, Servers};
use serde::Serialize;
use serde_json::Value;

use crate::Setup;

/// The JSON document `porthole check --json` prints (its shape is documented in the README).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub servers: Vec<ServerReport>,
    pub summary: Summary,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerReport {
    pub name: String,
    pub connected: bool,
    /// The server's own name and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Every tool's name, in the server's order.
    pub tools: Vec<String>,
    /// Every `ui://` view a tool names, with the tools that name it.
    pub views: BTreeMap<String, Vec<String>>,
    pub findings: Vec<Finding>,
    /// The tools with a view, for the live check: name, `ui://` URI, input and output schemas.
    #[serde(skip)]
    pub ui_tools: Vec<UiTool>,
}

/// A tool with a view, as the live check needs it.
#[derive(Debug, Clone)]
pub struct UiTool {
    pub name: String,
    pub uri: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Whether the check passed: no error (and, with `--strict`, no warning).
    pub passed: bool,
    pub strict: bool,
}

impl Report {
    /// The same servers, counted again (after the live check added its findings).
    pub fn recount(self) -> Report {
        let strict = self.summary.strict;
        Report::new(self.servers, strict)
    }

    fn new(servers: Vec<ServerReport>, strict: bool) -> Report {
        let count = |s: Severity| {
            servers
                .iter()
                .flat_map(|r| &r.findings)
                .filter(|f| f.severity == s)
                .count()
        };
        let (errors, warnings, infos) = (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
        Report {
            servers,
            summary: Summary {
                errors,
                warnings,
                infos,
                passed: errors == 0 && (!strict || warnings == 0),
                strict,
            },
        }
    }

    /// Whether `finding` fails the check.
    fn fails(&self, finding: &Finding) -> bool {
        finding.severity == Severity::Error || (self.summary.strict && finding.severity == Severity::Warning)
    }
}

/// Checks `configs` (the servers to check) as `setup`'s profile would connect them. `None` when
/// the person stopped it.
pub async fn gather(setup: &Setup, configs: Vec<ServerConfig>, strict: bool) -> Option<Report> {
    // The extension is advertised to every server checked, whatever the config says: the check
    // is about what a view's host sees.
    let advertised: Vec<ServerConfig> = configs
        .iter()
        .cloned()
        .map(|mut c| {
            c.mcp_apps = true;
            c.enabled = true;
            c
        })
        .collect();
    let plain: Vec<ServerConfig> = advertised.iter().cloned().map(ServerConfig::without_mcp_apps).collect();
    let with = Servers::start(advertised, setup.connect_options(true, ElicitationPolicy::Decline));
    let without = Servers::start(plain, setup.connect_options(false, ElicitationPolicy::Decline));
    let settled = tokio::select! {
        both = async { tokio::join!(with.settled(), without.settled()) } => Some(both.0),
        _ = tokio::signal::ctrl_c() => None,
    };
    let Some(statuses) = settled else {
        tokio::join!(with.shutdown(), without.shutdown());
        return None;
    };
    let mut reports = Vec::new();
    for config in &configs {
        let Some(status) = statuses.iter().find(|s| s.name == config.name) else {
            continue;
        };
        let mut report = ServerReport {
            name: config.name.clone(),
            connected: status.state == ServerState::Connected,
            server_info: status.server_info.clone(),
            protocol_version: status.protocol_version.clone(),
            tools: Vec::new(),
            views: BTreeMap::new(),
            findings: Vec::new(),
            ui_tools: Vec::new(),
        };
        if !report.connected {
            report.findings.push(Finding::server_connect(
                status.error.as_deref().unwrap_or("it did not start"),
            ));
            reports.push(report);
            continue;
        }
        check_server(&with, &without, &mut report).await;
        reports.push(report);
    }
    tokio::join!(with.shutdown(), without.shutdown());
    Some(Report::new(reports, strict))
}

fn as_values<T: Serialize>(items: &[T]) -> Vec<Value> {
    items.iter().filter_map(|i| serde_json::to_value(i).ok()).collect()
}

async fn check_server(with: &Servers, without: &Servers, report: &mut ServerReport) {
    let name = report.name.clone();
    let tools = match with.list_tools(&name).await {
        Ok(tools) => as_values(&tools),
        Err(e) => {
            report
                .findings
                .push(Finding::server_connect(&format!("tools/list failed: {e}")));
            return;
        }
    };
    // A server that cannot list its resources still gets its views read.
    let listing = with
        .list_resources(&name)
        .await
        .map(|r| as_values(&r))
        .unwrap_or_default();
    let metas = tools.iter().map(|t| t.get("_meta").and_then(Value::as_object));
    let sdk_server = apps_sdk_server(metas);
    for tool in &tools {
        let tool_name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        report.findings.extend(check_tool(tool, sdk_server));
        let meta = tool.get("_meta").and_then(Value::as_object);
        if let Some(uri) = read_tool_meta(meta, sdk_server).resource_uri {
            report.views.entry(uri.clone()).or_default().push(tool_name.clone());
            report.ui_tools.push(UiTool {
                name: tool_name.clone(),
                uri,
                input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
                output_schema: tool.get("outputSchema").cloned(),
            });
        }
        report.tools.push(tool_name);
    }
    for uri in report.views.keys() {
        let listed = listing
            .iter()
            .find(|r| r.get("uri").and_then(Value::as_str) == Some(uri.as_str()));
        let read = with
            .read_resource(&name, uri)
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()));
        let findings = check_view(uri, read.as_ref().map_err(String::as_str), listed);
        report.findings.extend(findings);
    }
    match without.list_tools(&name).await {
        Ok(plain) => report.findings.extend(compare_capability(&tools, &as_values(&plain))),
        Err(e) => tracing::info!(server = %name, "without MCP Apps, tools/list failed: {e}"),
    }
}

/// How the live check shows each view.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// The arguments for every tool checked (else each tool's are made from its input schema).
    pub args: Option<serde_json::Map<String, Value>>,
    /// Show each view with a sample result instead of calling its tool.
    pub no_call: bool,
    /// How long a view may take to complete `ui/initialize`.
    pub limit: std::time::Duration,
}

/// The live check: each UI tool of each connected server in `report` has its view loaded in a
/// real webview of `host` (see [`crate::live`]), and what it did is added to the report.
pub async fn live(host: &crate::Host, report: Report, options: &LiveOptions) -> Report {
    let mut report = report;
    host.servers().settled().await;
    for server in &mut report.servers {
        if !server.connected {
            continue;
        }
        for ui in server.ui_tools.clone() {
            // A view its static rules already refuse (unreadable, not HTML…) is not loaded again.
            let refused = server
                .findings
                .iter()
                .any(|f| f.severity == Severity::Error && f.resource.as_deref() == Some(ui.uri.as_str()));
            if refused {
                continue;
            }
            let input = options
                .args
                .clone()
                .unwrap_or_else(|| crate::live::sample_arguments(&ui.input_schema));
            let result = if options.no_call {
                crate::live::LiveResult::Given(crate::live::sample_result(ui.output_schema.as_ref()))
            } else {
                crate::live::LiveResult::Call
            };
            let request = crate::live::LiveRequest {
                server: server.name.clone(),
                tool: ui.name.clone(),
                input,
                result,
                width: 800,
                height: 600,
                theme: porthole_apps::theme::Theme::Light,
                still: false,
                limit: options.limit,
                // What a view does just after it starts (a timer that throws, a late image) is
                // part of the check: wait until its traffic has been quiet a moment.
                settle: Some((LIVE_QUIET, LIVE_SETTLE_MOST)),
                picture: false,
            };
            let limit_ms = u64::try_from(options.limit.as_millis()).unwrap_or(u64::MAX);
            let facts = match host.show_view(request).await {
                Ok(outcome) => {
                    let o = outcome.observation.unwrap_or_else(crate::views::Observation::empty);
                    let (load_error, initialized_ms) = match &outcome.progress {
                        crate::views::ViewProgress::Failed(why) => (Some(why.clone()), None),
                        _ => (None, o.initialized_ms.filter(|ms| *ms <= limit_ms)),
                    };
                    porthole_apps::check::LiveFacts {
                        call_error: outcome.call_error,
                        load_error,
                        initialized_ms,
                        limit_ms,
                        diagnostics: o.diagnostics,
                        unsupported: o.unsupported,
                    }
                }
                Err(e) => porthole_apps::check::LiveFacts {
                    load_error: Some(e.message),
                    limit_ms,
                    ..Default::default()
                },
            };
            server
                .findings
                .extend(porthole_apps::check::check_live(&ui.name, &ui.uri, &facts));
        }
    }
    report.recount()
}

/// How long a started view's traffic must be quiet before the live check reads what it saw, and
/// the most it waits for that.
const LIVE_QUIET: std::time::Duration = std::time::Duration::from_millis(300);
const LIVE_SETTLE_MOST: std::time::Duration = std::time::Duration::from_secs(2);

/// Where a finding is, in words: its tool or view, else the server.
fn place(f: &Finding) -> String {
    match (&f.tool, &f.resource) {
        (Some(tool), _) => format!("tool {tool}"),
        (None, Some(uri)) => format!("view {uri}"),
        (None, None) => "server".into(),
    }
}

/// The report for a person: per server, each finding with its fix; then the summary.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    for server in &report.servers {
        let about = [server.server_info.as_deref(), server.protocol_version.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", protocol ");
        let _ = writeln!(
            out,
            "{}{}: {} tools, {} views",
            server.name,
            if about.is_empty() {
                String::new()
            } else {
                format!(" ({about})")
            },
            server.tools.len(),
            server.views.len()
        );
        if server.findings.is_empty() {
            let _ = writeln!(out, "  no findings");
        }
        let mut findings: Vec<&Finding> = server.findings.iter().collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        for f in findings {
            let _ = writeln!(
                out,
                "  {:<7}  {:<19}  {}: {}\n  {:<7}  {:<19}  fix: {}",
                f.severity.as_str(),
                f.rule,
                place(f),
                f.message,
                "",
                "",
                f.fix
            );
        }
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "{} error{}, {} warning{}, {} info: {}",
        s.errors,
        if s.errors == 1 { "" } else { "s" },
        s.warnings,
        if s.warnings == 1 { "" } else { "s" },
        s.infos,
        if s.passed { "passed" } else { "failed" }
    );
    out
}

fn xml(text: &str) -> String {
    text.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || !c.is_control())
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The report as JUnit XML: a test suite per server, a test case for the server itself, each tool
/// and each view. Findings that fail the check are `<failure>`s; the others are in `<system-out>`.
pub fn junit(report: &Report) -> String {
    let mut suites = String::new();
    let (mut all_tests, mut all_failures) = (0, 0);
    for server in &report.servers {
        let mut cases: Vec<(String, String, Vec<&Finding>)> = vec![(
            format!("{}.server", server.name),
            "connect".into(),
            server
                .findings
                .iter()
                .filter(|f| f.tool.is_none() && f.resource.is_none())
                .collect(),
        )];
        for tool in &server.tools {
            let found = server
                .findings
                .iter()
                .filter(|f| f.tool.as_deref() == Some(tool.as_str()))
                .collect();
            cases.push((format!("{}.tools", server.name), tool.clone(), found));
        }
        for uri in server.views.keys() {
            let found = server
                .findings
                .iter()
                .filter(|f| f.tool.is_none() && f.resource.as_deref() == Some(uri.as_str()))
                .collect();
            cases.push((format!("{}.views", server.name), uri.clone(), found));
        }
        let mut body = String::new();
        let mut failures = 0;
        for (class, name, found) in &cases {
            let _ = write!(
                body,
                "    <testcase classname=\"{}\" name=\"{}\">",
                xml(class),
                xml(name)
            );
            let failing: Vec<&&Finding> = found.iter().filter(|f| report.fails(f)).collect();
            if !failing.is_empty() {
                failures += 1;
                let message = failing
                    .iter()
                    .map(|f| format!("{}: {}", f.rule, f.message))
                    .collect::<Vec<_>>()
                    .join("; ");
                let detail = failing
                    .iter()
                    .map(|f| format!("{} {}: {}\nfix: {}", f.severity.as_str(), f.rule, f.message, f.fix))
                    .collect::<Vec<_>>()
                    .join("\n\n");
                let _ = write!(
                    body,
                    "\n      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    xml(failing[0].rule),
                    xml(&message),
                    xml(&detail)
                );
            }
            let other: Vec<String> = found
                .iter()
                .filter(|f| !report.fails(f))
                .map(|f| format!("{} {}: {} (fix: {})", f.severity.as_str(), f.rule, f.message, f.fix))
                .collect();
            if !other.is_empty() {
                let _ = write!(body, "\n      <system-out>{}</system-out>", xml(&other.join("\n")));
            }
            if failing.is_empty() && other.is_empty() {
                body.push_str("</testcase>\n");
            } else {
                body.push_str("\n    </testcase>\n");
            }
        }
        all_tests += cases.len();
        all_failures += failures;
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">\n{body}  </testsuite>\n",
            xml(&server.name),
            cases.len()
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"porthole check\" tests=\"{all_tests}\" failures=\"{all_failures}\" errors=\"0\">\n{suites}</testsuites>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &'static str, severity: Severity, tool: Option<&str>, resource: Option<&str>) -> Finding {
        let mut f = Finding::server_connect("x");
        f.rule = rule;
        f.severity = severity;
        f.tool = tool.map(String::from);
        f.resource = resource.map(String::from);
        f.message = format!("{rule} <&> \"quoted\"");
        f
    }

    fn report(strict: bool) -> Report {
        Report::new(
            vec![ServerReport {
                name: "demo".into(),
                connected: true,
                server_info: Some("demo 1.0".into()),
                protocol_version: Some("2025-06-18".into()),
                tools: vec!["a".into(), "b".into()],
                views: BTreeMap::from([("ui://demo/v.html".to_string(), vec!["a".to_string()])]),
                ui_tools: Vec::new(),
                findings: vec![
                    finding("tool-name", Severity::Warning, Some("b"), None),
                    finding("csp-entry", Severity::Error, None, Some("ui://demo/v.html")),
                    finding("capability-gated", Severity::Info, Some("a"), None),
                ],
            }],
            strict,
        )
    }

    #[test]
    fn warnings_fail_only_when_strict() {
        let lenient = report(false);
        assert_eq!(
            (lenient.summary.errors, lenient.summary.warnings, lenient.summary.infos),
            (1, 1, 1)
        );
        assert!(!lenient.summary.passed);
        let mut clean = report(false);
        clean.servers[0].findings.retain(|f| f.severity != Severity::Error);
        let clean = Report::new(clean.servers, false);
        assert!(clean.summary.passed);
        assert!(!Report::new(clean.servers.clone(), true).summary.passed);
    }

    #[test]
    fn the_text_names_each_finding_with_its_fix() {
        let text = text(&report(false));
        assert!(
            text.starts_with("demo (demo 1.0, protocol 2025-06-18): 2 tools, 1 views\n"),
            "{text}"
        );
        let error = text.find("error    csp-entry").unwrap();
        let warning = text.find("warning  tool-name").unwrap();
        assert!(error < warning, "errors first: {text}");
        assert!(text.contains("view ui://demo/v.html: csp-entry"), "{text}");
        assert!(text.contains("fix: "), "{text}");
        assert!(text.ends_with("1 error, 1 warning, 1 info: failed\n"), "{text}");
    }

    #[test]
    fn junit_has_a_case_per_tool_and_view_and_fails_what_fails() {
        let xml = junit(&report(false));
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"porthole check\" tests=\"4\" failures=\"1\""), "{xml}");
        assert!(xml.contains("<testcase classname=\"demo.views\" name=\"ui://demo/v.html\">\n      <failure type=\"csp-entry\" message=\"csp-entry: csp-entry &lt;&amp;&gt; &quot;quoted&quot;\">"), "{xml}");
        assert!(
            xml.contains("<testcase classname=\"demo.tools\" name=\"b\">\n      <system-out>warning tool-name"),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase classname=\"demo.server\" name=\"connect\"></testcase>"),
            "{xml}"
        );
        let strict = junit(&report(true));
        assert!(strict.contains("failures=\"2\""), "{strict}");
        assert!(strict.contains("<failure type=\"tool-name\""), "{strict}");
    }
}
