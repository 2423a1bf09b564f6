//! The end-to-end harness: starts `tauri-driver` (which starts `WebKitWebDriver`, which starts
//! the real `porthole` binary) and speaks W3C WebDriver to it over loopback.
//!
//! Each [`App`] gets its own driver on free ports and its own profile folder, so tests never
//! share state. The window needs a display: `make test` runs these under Xvfb.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub mod bench;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

/// The W3C key for an element reference in WebDriver JSON.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The entry script of the published `@modelcontextprotocol/server-everything`, installed by
/// `make deps` (run it with `node <entry> stdio`).
pub fn server_everything_entry() -> PathBuf {
    let path =
        workspace_root().join("tests/fixtures/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "run `make deps`: tests/fixtures has no server-everything"
    );
    path
}

/// Builds the widget of `tests/skybridge-widget` (written with the published skybridge
/// framework, installed by `make deps`) into one page in `dir`, and returns its path, for
/// `porthole-apps-sdk-server --skybridge-widget`.
pub fn skybridge_widget(dir: &Path) -> Result<PathBuf> {
    let project = workspace_root().join("tests/skybridge-widget");
    anyhow::ensure!(
        project.join("node_modules/skybridge").is_dir(),
        "run `make deps`: tests/skybridge-widget has no node_modules"
    );
    let page = dir.join("skybridge-widget.html");
    let out = Command::new("node")
        .arg(project.join("build.mjs"))
        .arg(&page)
        .output()
        .context("running node (is it on PATH?)")?;
    anyhow::ensure!(
        out.status.success(),
        "building the skybridge widget failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(page)
}

/// A stand-in for the person's browser, in `dir`: a script to pass as `BROWSER`, which appends
/// each URL it is asked to open to the returned log file (absent until something is opened).
pub fn recording_browser(dir: &std::path::Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let opened = dir.join("browser-opened.txt");
    let browser = dir.join("browser.sh");
    std::fs::write(&browser, format!("#!/bin/sh\necho \"$@\" >> {}\n", opened.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok((browser, opened))
}

/// The cargo target folder the tests were built in (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() {
            dir
        } else {
            workspace_root().join(dir)
        };
    }
    workspace_root().join("target")
}

/// The `porthole` binary under test: `$PORTHOLE_BIN`, else the debug build.
pub fn porthole_binary() -> PathBuf {
    std::env::var_os("PORTHOLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("debug").join("porthole"))
}

/// The variables that choose a profile, a model or a key: a test of the `porthole` binary starts
/// without any of the caller's, and sets what it means.
pub const PORTHOLE_VARIABLES: [&str; 7] = [
    "PORTHOLE_HOME",
    "PORTHOLE_MCP_APPS",
    "PORTHOLE_PROVIDER",
    "PORTHOLE_BASE_URL",
    "PORTHOLE_MODEL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// `porthole --profile PROFILE ARGS…`, with none of [`PORTHOLE_VARIABLES`] from the caller.
pub fn porthole_command(profile: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(porthole_binary());
    command.arg("--profile").arg(profile).args(args);
    for var in PORTHOLE_VARIABLES {
        command.env_remove(var);
    }
    command
}

/// A process a test started, killed when dropped (already gone is fine).
pub struct Spawned(pub Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a server (`program ARGS…`, such as the test server with `--http`) and returns it with
/// the URL it prints first (`listening <url>`).
pub fn server_listening(program: &str, args: &[&str]) -> (Spawned, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("{program} prints the URL it listens on, not {line:?}"))
        .to_string();
    (Spawned(child), url)
}

/// The scripted AG-UI agent (`tests/fixtures/agui-agent.mjs`, on the published AG-UI packages
/// and, when the script names `mcpServers`, the published MCP Apps middleware), started with
/// `script` (its `log` set to a file in `dir`); returns the running process, its URL and the
/// log's path.
pub fn agui_agent(dir: &Path, mut script: serde_json::Value) -> (Spawned, String, PathBuf) {
    let log = dir.join("agent-inputs.jsonl");
    script["log"] = serde_json::json!(log);
    let path = dir.join("agent-script.json");
    std::fs::write(&path, script.to_string()).unwrap();
    let entry = workspace_root().join("tests/fixtures/agui-agent.mjs");
    assert!(
        workspace_root()
            .join("tests/fixtures/node_modules/@ag-ui/mcp-apps-middleware")
            .is_dir(),
        "run `make deps`: tests/fixtures has no @ag-ui/mcp-apps-middleware"
    );
    let (process, url) = server_listening("node", &[entry.to_str().unwrap(), path.to_str().unwrap()]);
    (process, url, log)
}

/// A scripted agent's run that says it asks the clock and calls the official basic example's
/// `get-time` (call `call-time`), which the MCP Apps middleware then runs.
pub fn agui_clock_run() -> serde_json::Value {
    serde_json::json!([
        {"type": "RUN_STARTED", "threadId": "$threadId", "runId": "$runId"},
        {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Asking the clock."},
        {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
        {"type": "TOOL_CALL_START", "toolCallId": "call-time", "toolCallName": "get-time", "parentMessageId": "a1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-time", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "call-time"},
        {"type": "RUN_FINISHED", "threadId": "$threadId", "runId": "$runId"}
    ])
}

/// A scripted agent's call of `slow_task` (call `call-slow`) whose progress comes as the
/// middleware forks' `mcp-apps-progress` activity: 1 of 4, then (a JSON-Patch delta) 3 of 4
/// "almost there", then its result; `pause_ms` between them (none when 0).
pub fn agui_progress_call(pause_ms: u64) -> Vec<serde_json::Value> {
    let id = "mcp-apps-progress:call-slow";
    let pause = (pause_ms > 0).then(|| serde_json::json!({"type": "WAIT", "ms": pause_ms}));
    [
        Some(serde_json::json!({"type": "TOOL_CALL_START", "toolCallId": "call-slow", "toolCallName": "slow_task"})),
        Some(serde_json::json!({"type": "TOOL_CALL_ARGS", "toolCallId": "call-slow", "delta": "{}"})),
        Some(serde_json::json!({"type": "TOOL_CALL_END", "toolCallId": "call-slow"})),
        Some(serde_json::json!({"type": "ACTIVITY_SNAPSHOT", "messageId": id, "activityType": "mcp-apps-progress", "replace": false,
            "content": {"progress": 1, "total": 4, "toolCallId": "call-slow", "toolName": "slow_task", "serverHash": "h"}})),
        pause.clone(),
        Some(serde_json::json!({"type": "ACTIVITY_DELTA", "messageId": id, "activityType": "mcp-apps-progress",
            "patch": [{"op": "replace", "path": "/progress", "value": 3}, {"op": "add", "path": "/message", "value": "almost there"}]})),
        pause.map(|_| serde_json::json!({"type": "WAIT", "ms": pause_ms * 3})),
        Some(serde_json::json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "call-slow", "content": "done", "role": "tool"})),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The scripted agent's log: each request's `RunAgentInput`, and `{"closedByClient": runId}`
/// lines.
pub fn agui_agent_log(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// An official MCP App example server from npm (`@modelcontextprotocol/server-<name>`) over
/// Streamable HTTP on a free port; returns the process and its MCP endpoint's URL once it
/// listens.
pub fn example_over_http(name: &str) -> (Spawned, String) {
    let entry = workspace_root().join(format!(
        "tests/fixtures/node_modules/@modelcontextprotocol/server-{name}/dist/index.js"
    ));
    assert!(entry.is_file(), "run `make deps`: tests/fixtures has no server-{name}");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new("node")
        .arg(&entry)
        .env("PORT", port.to_string())
        .current_dir(workspace_root().join("tests/fixtures"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the {name} example: {e}"));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        let read = out.read_line(&mut line).unwrap_or(0);
        assert!(read > 0, "the {name} example ended before it listened");
        if line.contains("listening on") {
            break;
        }
    }
    // Its later output is not read: it goes nowhere rather than filling the pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    (Spawned(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// `tauri-driver` from `PATH`, else from cargo's bin folder.
pub fn tauri_driver() -> Result<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("tauri-driver"))
        .find(|p| p.is_file());
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    on_path
        .or_else(|| cargo_home.map(|h| h.join("bin/tauri-driver")).filter(|p| p.is_file()))
        .ok_or_else(|| anyhow!("tauri-driver is not installed; run `make deps` (cargo install tauri-driver --locked)"))
}

/// Two distinct free ports (both listeners are held until both are known, so the OS cannot
/// hand out the same port twice).
fn free_ports() -> Result<(u16, u16)> {
    let a = TcpListener::bind("127.0.0.1:0")?;
    let b = TcpListener::bind("127.0.0.1:0")?;
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

/// A running `tauri-driver`, killed (with its WebKitWebDriver and the app) on drop.
pub struct Driver {
    child: Child,
    pub url: String,
}

impl Driver {
    pub fn start(env: &[(&str, &str)]) -> Result<Driver> {
        let (port, native_port) = free_ports()?;
        let mut cmd = Command::new(tauri_driver()?);
        cmd.args(["--port", &port.to_string(), "--native-port", &native_port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // A blank window under Xvfb otherwise (tauri#15936).
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().context("cannot start tauri-driver")?;
        // Relay the driver's (and the app's) stderr, so a failing test shows the app's logs.
        if let Some(stderr) = child.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    eprintln!("[app] {line}");
                }
            });
        }
        // tauri-driver opens its port at once, and starts WebKitWebDriver beside it; a session
        // asked for before WebKitWebDriver listens on the native port is dropped ("Peer
        // disconnected": seen on a loaded machine, where WebKitWebDriver starts slowly), so
        // both ports are waited for.
        let deadline = Instant::now() + Duration::from_secs(20);
        for (which, port) in [("tauri-driver", port), ("WebKitWebDriver", native_port)] {
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    bail!("{which} did not open port {port} within 20 s");
                }
                if let Some(status) = child.try_wait()? {
                    bail!("tauri-driver exited at once ({status})");
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SIGTERM lets tauri-driver stop WebKitWebDriver, which stops the app.
        #[cfg(unix)]
        // SAFETY: kill(2) on a child we spawned and have not reaped yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(90)))
        .build()
        .into()
}

/// A WebDriver session on the app's main window.
pub struct Session {
    agent: ureq::Agent,
    base: String,
}

/// An element found in the page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Session {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        let url = format!("{}{}", self.base, path);
        let mut response = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, Some(body)) => self.agent.post(&url).send_json(body),
            (_, None) => self.agent.post(&url).send_json(json!({})),
        }
        .with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let value: Value = response
            .body_mut()
            .read_json()
            .with_context(|| format!("{method} {path}: body"))?;
        if !status.is_success() {
            bail!("{method} {path}: HTTP {status}: {}", value["value"]);
        }
        Ok(value["value"].clone())
    }

    pub fn find(&self, css: &str) -> Result<Element> {
        let v = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})))?;
        Ok(Element(
            v[ELEMENT_KEY]
                .as_str()
                .ok_or_else(|| anyhow!("no element id for {css}"))?
                .to_string(),
        ))
    }

    pub fn find_all(&self, css: &str) -> Result<Vec<Element>> {
        let v = self.call(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )?;
        Ok(v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e[ELEMENT_KEY].as_str().map(|s| Element(s.to_string())))
            .collect())
    }

    pub fn text(&self, el: &Element) -> Result<String> {
        Ok(self
            .call("GET", &format!("/element/{}/text", el.0), None)?
            .as_str()
            .unwrap_or("")
            .to_string())
    }

    pub fn attribute(&self, el: &Element, name: &str) -> Result<Option<String>> {
        Ok(self
            .call("GET", &format!("/element/{}/attribute/{name}", el.0), None)?
            .as_str()
            .map(str::to_string))
    }

    pub fn property(&self, el: &Element, name: &str) -> Result<Value> {
        self.call("GET", &format!("/element/{}/property/{name}", el.0), None)
    }

    /// The element's box in the page: `{x, y, width, height}` in CSS pixels.
    pub fn rect(&self, el: &Element) -> Result<Value> {
        self.call("GET", &format!("/element/{}/rect", el.0), None)
    }

    pub fn click(&self, el: &Element) -> Result<()> {
        self.call("POST", &format!("/element/{}/click", el.0), None).map(drop)
    }

    /// Clicks the element `css` matches once it has stopped moving, and makes sure the click
    /// reached it. WebDriver's click is a mouse press and release at the point where the element
    /// was when it looked; a transcript that is still laying out (a view growing above, the
    /// windowed list settling after a scroll) can move the element in between, and the click
    /// lands on whatever is there instead (CI saw this once: the inspector's Replay click went
    /// nowhere). The element is scrolled to the middle of its scroller, then its box is read
    /// until two reads 100 ms apart agree; a listener on the document records where clicks land;
    /// a click that did not reach the element is made again, at most three times, and the error
    /// says what was clicked instead.
    pub fn click_when_still(&self, css: &str) -> Result<()> {
        let mut missed = Vec::new();
        for _ in 0..3 {
            let el = self.find(css)?;
            // Brought into sight first, so that WebDriver's click need not scroll.
            let rect = "const el = document.querySelector(arguments[0]);
                        if (arguments[1]) el.scrollIntoView({ block: 'center' });
                        const r = el.getBoundingClientRect();
                        return [r.x, r.y, r.width, r.height];";
            let mut before = self.execute(rect, json!([css, true]))?;
            self.wait_for(&format!("{css} to stop moving"), Duration::from_secs(10), |s| {
                std::thread::sleep(Duration::from_millis(100));
                let now = s.execute(rect, json!([css, false]))?;
                let still = now == before;
                before = now;
                Ok(still.then_some(()))
            })?;
            // Judged when the click happens: a click can replace the element it reached.
            self.execute(
                "window.__portholeClick = { wanted: arguments[0], landed: 'nothing' };
                 if (!window.__portholeClickListener) {
                   window.__portholeClickListener = true;
                   document.addEventListener('click', (e) => {
                     const c = window.__portholeClick;
                     if (!c) return;
                     const t = e.target;
                     const id = t.getAttribute && t.getAttribute('data-testid');
                     c.landed = t.closest && t.closest(c.wanted)
                       ? 'landed'
                       : `${(t.tagName || 'document').toLowerCase()}${id ? `[data-testid=${id}]` : ''}`;
                   }, true);
                 }",
                json!([css]),
            )?;
            self.click(&el)?;
            // The click event is dispatched before WebDriver answers; give it a moment anyway.
            let mut landed = String::from("nothing");
            for _ in 0..10 {
                landed = self
                    .execute("return window.__portholeClick.landed;", json!([]))?
                    .as_str()
                    .unwrap_or("nothing")
                    .to_string();
                if landed != "nothing" {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if landed == "landed" {
                return Ok(());
            }
            eprintln!("a click on {css} reached {landed} instead; clicking again");
            missed.push(landed);
        }
        bail!(
            "three clicks on {css} did not reach it; they reached: {}",
            missed.join(", ")
        )
    }

    /// Empties an input or textarea.
    pub fn clear(&self, el: &Element) -> Result<()> {
        self.call("POST", &format!("/element/{}/clear", el.0), None).map(drop)
    }

    /// Types into an element. WebDriver key codes work: `\u{E007}` is Enter, `\u{E008}` Shift.
    pub fn send_keys(&self, el: &Element, text: &str) -> Result<()> {
        self.call("POST", &format!("/element/{}/value", el.0), Some(json!({"text": text})))
            .map(drop)
    }

    /// Runs a script in the page (`return …;` gives the value).
    /// Presses `keys` on whatever has the keyboard (WebDriver key actions: no element is focused
    /// first). WebDriver's key codes: `\u{E004}` Tab, `\u{E007}` Enter, `\u{E00C}` Esc,
    /// `\u{E008}` Shift, `\u{E009}` Control, `\u{E003}` Backspace, `\u{E012}`–`\u{E015}` the
    /// arrows; a modifier is held from its key down until the end of `keys`.
    pub fn press(&self, keys: &str) -> Result<()> {
        let modifiers = ['\u{E008}', '\u{E009}', '\u{E00A}', '\u{E03D}'];
        let mut actions = Vec::new();
        let mut held = Vec::new();
        for key in keys.chars() {
            let key = key.to_string();
            actions.push(json!({"type": "keyDown", "value": key}));
            if modifiers.iter().any(|m| m.to_string() == key) {
                held.push(key);
            } else {
                actions.push(json!({"type": "keyUp", "value": key}));
            }
        }
        for key in held.into_iter().rev() {
            actions.push(json!({"type": "keyUp", "value": key}));
        }
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.call("POST", "/actions", Some(body))?;
        self.call("DELETE", "/actions", None).map(|_| ())
    }

    /// What has the keyboard: its `data-testid` (or its tag name, lower case, when it has none).
    pub fn focused(&self) -> Result<String> {
        let found = self.execute(
            "const a = document.activeElement; return a ? (a.dataset.testid || a.tagName.toLowerCase()) : 'nothing';",
            json!([]),
        )?;
        Ok(found.as_str().unwrap_or("nothing").to_string())
    }

    pub fn execute(&self, script: &str, args: Value) -> Result<Value> {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": args})))
    }

    /// Runs the body of an `async` function in the page and returns what it resolves to.
    pub fn execute_async(&self, body: &str) -> Result<Value> {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             (async () => {{ {body} }})().then(done, e => done({{ error: String(e) }}));"
        );
        self.call("POST", "/execute/async", Some(json!({"script": script, "args": []})))
    }

    /// Makes `frame` (an `<iframe>` element found in the current browsing context) the context
    /// later commands run in, until [`Session::switch_to_parent`].
    pub fn switch_to_frame(&self, frame: &Element) -> Result<()> {
        self.call("POST", "/frame", Some(json!({"id": {ELEMENT_KEY: frame.0}})))
            .map(drop)
    }

    /// Makes the parent of the current browsing context (the window, from a top-level frame) the
    /// context later commands run in.
    pub fn switch_to_parent(&self) -> Result<()> {
        self.call("POST", "/frame/parent", None).map(drop)
    }

    /// Makes the window's top-level browsing context the one later commands run in (also from
    /// inside a frame that has since been removed, where [`Session::switch_to_parent`] fails).
    pub fn switch_to_top(&self) -> Result<()> {
        self.call("POST", "/frame", Some(json!({"id": null}))).map(drop)
    }

    /// The handles of the app's windows that WebDriver sees (the main one and any pop-outs).
    pub fn window_handles(&self) -> Result<Vec<String>> {
        let v = self.call("GET", "/window/handles", None)?;
        Ok(v.as_array()
            .map(|a| a.iter().filter_map(|h| h.as_str().map(String::from)).collect())
            .unwrap_or_default())
    }

    /// The handle of the window later commands run in.
    pub fn window_handle(&self) -> Result<String> {
        Ok(self.call("GET", "/window", None)?.as_str().unwrap_or("").to_string())
    }

    /// Makes the window `handle` the one later commands run in.
    pub fn switch_to_window(&self, handle: &str) -> Result<()> {
        self.call("POST", "/window", Some(json!({"handle": handle}))).map(drop)
    }

    /// Closes the current window (as its close button would).
    /// Moves and resizes the window, as the person would (WebDriver's Set Window Rect).
    pub fn set_window_rect(&self, x: i32, y: i32, width: u32, height: u32) -> Result<Value> {
        self.call(
            "POST",
            "/window/rect",
            Some(json!({"x": x, "y": y, "width": width, "height": height})),
        )
    }

    /// WebDriver's Maximize Window: the window manager maximizes it (there must be one).
    pub fn maximize_window(&self) -> Result<Value> {
        self.call("POST", "/window/maximize", Some(json!({})))
    }

    pub fn close_window(&self) -> Result<()> {
        self.call("DELETE", "/window", None).map(drop)
    }

    pub fn title(&self) -> Result<String> {
        Ok(self.call("GET", "/title", None)?.as_str().unwrap_or("").to_string())
    }

    pub fn url(&self) -> Result<String> {
        Ok(self.call("GET", "/url", None)?.as_str().unwrap_or("").to_string())
    }

    /// Saves a PNG of the window.
    pub fn screenshot(&self, path: &Path) -> Result<()> {
        use base64::Engine;
        let data = self.call("GET", "/screenshot", None)?;
        let png = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap_or(""))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, png)?;
        Ok(())
    }

    /// Polls `check` until it returns `Some`, or fails with `what` after `timeout`.
    pub fn wait_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&Session) -> Result<Option<T>>,
    ) -> Result<T> {
        let deadline = Instant::now() + timeout;
        let mut last_error = None;
        loop {
            match check(self) {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
            if Instant::now() > deadline {
                let what = format!("timed out after {timeout:?} waiting for {what}; {}", self.describe());
                return Err(match last_error {
                    Some(e) => e.context(what),
                    None => anyhow!(what),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the window shows, in a line, for a failure's message: the composer, whether a reply
    /// is being written, open dialogs, and the transcript's last items.
    pub fn describe(&self) -> String {
        let script = r#"
            const q = (s) => document.querySelector(s);
            const composer = q('[data-testid=composer]');
            const items = [...document.querySelectorAll('[data-testid=transcript] [data-testid]')]
              .filter((e) => ['message', 'tool-call', 'notice', 'turn-error'].includes(e.dataset.testid))
              .slice(-6)
              .map((e) => `${e.dataset.testid}${e.dataset.role ? '/' + e.dataset.role : ''}: ${(e.innerText || '').replace(/\s+/g, ' ').slice(0, 80)}`);
            return [
              `composer ${composer ? JSON.stringify(composer.value) : 'absent'}`,
              q('[data-testid=stop]') ? 'a reply is being written' : 'no reply being written',
              `send ${q('[data-testid=send]') ? (q('[data-testid=send]').disabled ? 'disabled' : 'enabled') : 'absent'}`,
              `transcript busy ${q('[data-testid=transcript]')?.getAttribute('aria-busy')}`,
              `focus on ${document.activeElement ? (document.activeElement.dataset.testid || document.activeElement.tagName) : 'nothing'}`,
              `dialogs: ${[...document.querySelectorAll('[role=dialog]')].map((d) => d.dataset.testid || d.getAttribute('aria-label') || '?').join(', ') || 'none'}`,
              `last items: ${items.join(' | ') || 'none'}`,
            ].join('; ');
        "#;
        match self.execute(script, json!([])) {
            Ok(Value::String(s)) => format!("the window: {s}"),
            Ok(other) => format!("the window: {other}"),
            Err(e) => format!("the window could not be described: {e:#}"),
        }
    }

    /// Waits until at least one element matches `css` and returns the first.
    pub fn wait_for_element(&self, css: &str, timeout: Duration) -> Result<Element> {
        self.wait_for(css, timeout, |s| Ok(s.find_all(css)?.into_iter().next()))
    }
}

/// The app, launched through WebDriver with its own profile folder.
pub struct App {
    pub session: Session,
    pub profile: PathBuf,
    _driver: Driver,
}

impl App {
    /// Launches `porthole --profile <profile> <args…>` with extra environment `env`, and waits for
    /// the composer to be ready.
    pub fn launch(profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<App> {
        App::launch_program(&porthole_binary(), profile, args, env)
    }

    /// [`App::launch`] of another build of Porthole, such as the one a package installed.
    pub fn launch_program(binary: &Path, profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<App> {
        // WebKitWebDriver occasionally drops the connection while it starts (seen on a loaded
        // 2-core machine): a fresh driver is tried, twice at most. The app itself failing to
        // start fails every attempt the same way.
        let mut last = None;
        for attempt in 1..=3 {
            match App::launch_once(binary, profile, args, env) {
                Ok(app) => return Ok(app),
                Err(e) if format!("{e:#}").contains("cannot create a WebDriver session") => {
                    eprintln!("WebDriver session attempt {attempt} failed: {e:#}");
                    last = Some(e);
                    std::thread::sleep(Duration::from_secs(attempt));
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("three attempts"))
    }

    fn launch_once(binary: &Path, profile: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<App> {
        let driver = Driver::start(env)?;
        if !binary.is_file() {
            bail!("{} is missing; build it first (make build)", binary.display());
        }
        let mut all_args = vec!["--profile".to_string(), profile.display().to_string()];
        all_args.extend(args.iter().map(|s| s.to_string()));
        let agent = agent();
        let caps = json!({
            "capabilities": {
                "alwaysMatch": { "tauri:options": { "application": binary, "args": all_args } },
                "firstMatch": [{}]
            }
        });
        let mut response = agent
            .post(format!("{}/session", driver.url))
            .send_json(&caps)
            .context("cannot create a WebDriver session")?;
        let body: Value = response.body_mut().read_json()?;
        let id = body["value"]["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("no session: {}", body["value"]))?
            .to_string();
        let session = Session {
            agent,
            base: format!("{}/session/{id}", driver.url),
        };
        session.wait_for_element("[data-testid=composer]", Duration::from_secs(60))?;
        Ok(App {
            session,
            profile: profile.to_path_buf(),
            _driver: driver,
        })
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.session.call("DELETE", "", None);
        // WebKitWebDriver may leave the app running once the session is gone: it is ended here,
        // so a later launch on the same profile starts an app of its own rather than handing
        // itself to this one (one app per profile).
        end_apps_on(&self.profile);
    }
}

/// The `porthole` processes started with `--profile <profile>` (Linux: read from `/proc`).
pub fn apps_on(profile: &Path) -> Vec<u32> {
    let wanted = profile.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let is_porthole = args
            .first()
            .is_some_and(|a| a.ends_with(b"/porthole") || *a == b"porthole");
        if is_porthole && args.windows(2).any(|w| w[0] == b"--profile" && w[1] == wanted) {
            found.push(pid);
        }
    }
    found
}

/// Ends the apps on `profile`: a second to go by themselves, then SIGTERM (the app closes
/// cleanly), then SIGKILL.
pub fn end_apps_on(profile: &Path) {
    for (signal, wait) in [(0, 1), (libc::SIGTERM, 5), (libc::SIGKILL, 0)] {
        let deadline = Instant::now() + Duration::from_secs(wait);
        loop {
            let running = apps_on(profile);
            if running.is_empty() {
                return;
            }
            if signal != 0 {
                for pid in &running {
                    // SAFETY: kill(2) on a process of ours that was running a moment ago.
                    unsafe { libc::kill(*pid as libc::pid_t, signal) };
                }
            }
            if Instant::now() > deadline || signal == libc::SIGKILL {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Whether a top-level window whose title contains `title` is on screen (mapped and viewable),
/// asked of the X server (`xwininfo`, x11-utils), whatever WebDriver would show by switching to
/// it.
pub fn x_window_on_screen(title: &str) -> Result<bool> {
    let tree = Command::new("xwininfo").args(["-root", "-tree"]).output()?;
    let tree = String::from_utf8_lossy(&tree.stdout);
    for line in tree.lines().filter(|l| l.contains(title)) {
        let Some(id) = line.split_whitespace().next().filter(|w| w.starts_with("0x")) else {
            continue;
        };
        let info = Command::new("xwininfo").args(["-id", id]).output()?;
        if String::from_utf8_lossy(&info.stdout).contains("Map State: IsViewable") {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Where tests write screenshots: `$PORTHOLE_SCREENSHOT_DIR`, else `<target>/screenshots`.
pub fn screenshot_dir() -> PathBuf {
    std::env::var_os("PORTHOLE_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("screenshots"))
}

/// `pid` and every process below it (Linux: read from `/proc`).
pub fn process_tree(pid: u32) -> Vec<u32> {
    use std::collections::{HashMap, HashSet};
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // The command name may contain spaces; the fields after the last ')' are fixed.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let ppid: u32 = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        children.entry(ppid).or_default().push(p);
    }
    let mut out = vec![pid];
    let mut seen = HashSet::from([pid]);
    let mut i = 0;
    while i < out.len() {
        for &c in children.get(&out[i]).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(c) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// (RSS, PSS) of one process in KiB, from `/proc/<pid>/smaps_rollup` (0 when unreadable).
pub fn memory_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("Rss:"), field("Pss:"))
}
