//! The transport of a local (stdio) server: its process, in a process group of its own on Unix,
//! and newline-delimited JSON-RPC on its stdin and stdout.
//!
//! rmcp's own child-process transport drops what it cannot use (a line that is not JSON, a
//! message over 16 MiB, an answer to a request never sent) and waits; the caller then waits its
//! whole timeout and learns nothing. This one ends the connection at once instead, with the
//! reason in words ([`ConnectionEnd`]): the server exited (its status and the last line of its
//! stderr), was ended by a signal, wrote something that is not JSON-RPC, answered with an id no
//! request has, or sent a message over [`MAX_MESSAGE_BYTES`]. Ending the connection also ends
//! the server's process group, as does dropping the transport (Porthole stopping with it).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{Notify, watch};

/// The largest single message (one line) a server may send: tool results of 50 MB and more
/// (base64 images, files) fit; a larger one ends the connection with a reason naming this limit.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The line buffer's capacity kept between messages: an ordinary message fits without growing
/// it, and one large result (a view's HTML, a 50 MB file) does not stay allocated for as long
/// as the connection lasts.
const KEPT_LINE_CAPACITY: usize = 64 << 10;

/// How much text that is not JSON-RPC (start-up banners, stray log lines) a server may write to
/// its stdout before the connection is ended as broken.
const STRAY_TEXT_LIMIT: usize = 64 << 10;

/// How long a server whose stdout closed (or whose stdin refused a write) has to exit before it
/// is said to be still running, and is stopped.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// How a connection ended, in words ("exited with status 3: Cannot find module 'x'"), once it
/// has. Shared by the transport, which sets it, and the session's owner, which reports it.
#[derive(Debug, Clone)]
pub struct ConnectionEnd(Arc<watch::Sender<End>>);

#[derive(Debug, Clone, PartialEq)]
enum End {
    Open,
    /// The server broke the connection, for this reason.
    Broken(String),
    /// Porthole closed or dropped it.
    Closed,
}

impl Default for ConnectionEnd {
    fn default() -> Self {
        ConnectionEnd(Arc::new(watch::channel(End::Open).0))
    }
}

impl ConnectionEnd {
    /// Records why the server broke the connection; the first end stays.
    pub fn set(&self, reason: String) {
        self.end(End::Broken(reason));
    }

    /// Records that Porthole closed the connection (nothing to report).
    pub(crate) fn closed(&self) {
        self.end(End::Closed);
    }

    fn end(&self, end: End) {
        self.0.send_if_modified(|now| {
            if *now != End::Open {
                return false;
            }
            *now = end;
            true
        });
    }

    /// Why the server broke the connection, if it did.
    pub fn reason(&self) -> Option<String> {
        match &*self.0.borrow() {
            End::Broken(reason) => Some(reason.clone()),
            End::Open | End::Closed => None,
        }
    }

    /// Waits until the connection ends: the reason the server broke it, or `None` when Porthole
    /// closed it.
    pub async fn ended(&self) -> Option<String> {
        let mut rx = self.0.subscribe();
        // The sender lives in `self`, so the channel cannot close while this waits.
        rx.wait_for(|end| *end != End::Open).await.ok()?;
        self.reason()
    }

    /// Whether `other` is this same connection's end.
    pub fn is(&self, other: &ConnectionEnd) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The most telling of the last lines a server wrote to stderr (see [`telling_line`]), and
/// whether its stderr has closed.
#[derive(Debug, Clone)]
pub struct StderrTail(
    Arc<watch::Sender<(Option<String>, bool)>>,
    /// The last lines, each with whether it was indented (a stack frame, say).
    Arc<std::sync::Mutex<VecDeque<(bool, String)>>>,
);

impl Default for StderrTail {
    fn default() -> Self {
        StderrTail(Arc::new(watch::channel((None, false)).0), Arc::default())
    }
}

/// How many of a server's last stderr lines are looked through for the telling one.
const TAIL_LINES: usize = 40;

/// The line that says why a program failed, of its last lines (oldest first): the last one that
/// reads like an error (Node prints its version after the error and its stack; Python its
/// traceback before the error), else the last line.
pub(crate) fn telling_line(lines: &VecDeque<(bool, String)>) -> Option<String> {
    let erring = |(indented, l): &&(bool, String)| {
        let lower = l.to_ascii_lowercase();
        !indented
            && (l.contains("Error")
                || l.contains("Exception")
                || lower.contains("error:")
                || lower.contains("panicked")
                || lower.starts_with("fatal"))
    };
    lines.iter().rev().find(erring).or(lines.back()).map(|(_, l)| l.clone())
}

impl StderrTail {
    /// Notes one line of the server's stderr.
    pub fn line(&self, line: &str) {
        let trimmed = line.trim_end();
        if trimmed.trim().is_empty() {
            return;
        }
        let telling = {
            let mut lines = self.1.lock().unwrap();
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back((
                trimmed.starts_with(char::is_whitespace),
                excerpt(trimmed.as_bytes(), 200),
            ));
            telling_line(&lines)
        };
        self.0.send_modify(|(last, _)| *last = telling);
    }

    /// Notes that the server's stderr has closed (everything it wrote has been read).
    pub fn closed(&self) {
        self.0.send_modify(|(_, closed)| *closed = true);
    }

    /// The last line, once stderr has closed or `within` has passed.
    async fn last_line(&self, within: Duration) -> Option<String> {
        let mut rx = self.0.subscribe();
        // Timing out just means the line so far is used.
        tokio::time::timeout(within, rx.wait_for(|(_, closed)| *closed))
            .await
            .ok();
        self.0.borrow().0.clone()
    }
}

/// The requests a connection sent and that are not answered yet, so that an answer with an id
/// no request has is caught (a cancelled request's late answer is fine). Shared by the stdio and
/// the HTTP transports.
#[derive(Debug, Default)]
pub(crate) struct Unanswered(std::sync::Mutex<HashSet<RequestId>>);

impl Unanswered {
    /// Notes `message` going out, when it is a request.
    pub(crate) fn sent(&self, message: &TxJsonRpcMessage<RoleClient>) {
        if let JsonRpcMessage::Request(request) = message {
            self.0.lock().unwrap().insert(request.id.clone());
        }
    }

    /// Checks `message` coming in: an answer must be to a request sent; why not otherwise.
    pub(crate) fn check(&self, message: &RxJsonRpcMessage<RoleClient>) -> Result<(), String> {
        let answered = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        match answered {
            Some(id) if !self.0.lock().unwrap().remove(id) => Err(format!(
                "answered with id {id}, which matches no request Porthole sent it"
            )),
            _ => Ok(()),
        }
    }
}

/// At most `max` characters of `bytes`, as one line of text.
pub(crate) fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out.trim().to_string()
}

/// A server's process group (its process id; `None` once unknown), which signals go to.
#[derive(Debug, Clone)]
struct ProcessGroup {
    #[cfg_attr(not(unix), allow(dead_code))]
    leader: Option<u32>,
    /// Asks the task that waits for the process to kill it (where groups are not signalled).
    kill: Arc<Notify>,
}

impl ProcessGroup {
    /// Ends the whole group at once (SIGKILL); the leader is also killed by its waiting task.
    fn kill(&self) {
        #[cfg(unix)]
        self.signal(libc::SIGKILL);
        self.kill.notify_one();
    }

    #[cfg(unix)]
    fn signal(&self, signal: libc::c_int) {
        if let Some(pid) = self.leader.and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: killpg has no memory effects; a group that is already gone gives ESRCH.
            unsafe {
                libc::killpg(pid, signal);
            }
        }
    }
}

/// The transport to one local server (see the module's documentation).
pub struct ChildTransport {
    server: Arc<str>,
    stdout: BufReader<ChildStdout>,
    /// The line being read; kept across cancelled `receive` calls, so none is lost.
    line: Vec<u8>,
    /// The longest line accepted: [`MAX_MESSAGE_BYTES`].
    max_message_bytes: usize,
    stray_bytes: usize,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    /// The requests sent and not yet answered.
    waiting: Arc<Unanswered>,
    exit: watch::Receiver<Option<ExitStatus>>,
    group: ProcessGroup,
    end: ConnectionEnd,
    stderr: StderrTail,
    /// Closed on purpose: the process has been asked to exit, and the group ended.
    closed: bool,
}

impl ChildTransport {
    /// Starts `command` with piped stdio (on Unix as the leader of a new process group, so
    /// launchers such as `npx` end with their children). The caller reads the returned stderr
    /// and reports its lines to `stderr`; `end` receives the reason the connection ends.
    pub fn spawn(
        server: &str,
        command: tokio::process::Command,
        end: ConnectionEnd,
        stderr: StderrTail,
    ) -> std::io::Result<(ChildTransport, Option<ChildStderr>)> {
        let mut wrap = process_wrap::tokio::CommandWrap::from(command);
        wrap.command_mut()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
        let mut child = wrap.spawn()?;
        let stdin = child.stdin().take().ok_or_else(|| std::io::Error::other("no stdin"))?;
        let stdout = child
            .stdout()
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let child_stderr = child.stderr().take();
        let group = ProcessGroup {
            leader: child.id(),
            kill: Arc::new(Notify::new()),
        };
        let (exit_tx, exit) = watch::channel(None);
        let kill = group.kill.clone();
        let name: Arc<str> = server.into();
        let waiter_name = name.clone();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = kill.notified() => {
                    if let Err(e) = child.start_kill() {
                        tracing::debug!(server = %waiter_name, "the server's process could not be killed: {e}");
                    }
                    child.wait().await
                }
            };
            match status {
                Ok(status) => {
                    tracing::debug!(server = %waiter_name, %status, "the server's process ended");
                    exit_tx.send_replace(Some(status));
                }
                Err(e) => tracing::warn!(server = %waiter_name, "cannot wait for the server's process: {e}"),
            }
        });
        let transport = ChildTransport {
            server: name,
            stdout: BufReader::new(stdout),
            line: Vec::new(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            stray_bytes: 0,
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            waiting: Arc::default(),
            exit,
            group,
            end,
            stderr,
            closed: false,
        };
        Ok((transport, child_stderr))
    }

    /// Ends the connection as broken: records `reason` and ends the process group.
    fn broken(&mut self, reason: String) -> Option<RxJsonRpcMessage<RoleClient>> {
        tracing::warn!(server = %self.server, "{reason}");
        self.end.set(reason);
        self.group.kill();
        None
    }

    /// Reads one line into `self.line`, at most `max_message_bytes` long (and its newline). Cancellation-safe:
    /// bytes are moved from the reader's buffer into `self.line` with no await in between.
    async fn read_line(&mut self) -> Result<LineRead, std::io::Error> {
        loop {
            let available = self.stdout.fill_buf().await?;
            if available.is_empty() {
                return Ok(LineRead::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if self.line.len() + take > self.max_message_bytes + 1 {
                return Ok(LineRead::TooLong);
            }
            self.line.extend_from_slice(&available[..take]);
            self.stdout.consume(take);
            if newline.is_some() {
                return Ok(LineRead::Line);
            }
        }
    }

    /// Checks one whole line: `Some(message)` to deliver, `None` to read on, or the connection
    /// ends (`Err`) with the reason.
    fn check_line(&mut self, line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleClient>>, String> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        let Some(first) = line.iter().find(|b| !b.is_ascii_whitespace()) else {
            return Ok(None);
        };
        if *first != b'{' && *first != b'[' {
            // A start-up banner or a log line on the wrong stream: tolerated, up to a point.
            self.stray_bytes += line.len();
            tracing::warn!(target: "mcp_server", server = %self.server, "not JSON-RPC, on stdout: {}", excerpt(line, 200));
            if self.stray_bytes > STRAY_TEXT_LIMIT {
                return Err(format!(
                    "writes text that is not JSON-RPC to its stdout (over {} KiB), such as: {}",
                    STRAY_TEXT_LIMIT >> 10,
                    excerpt(line, 80)
                ));
            }
            return Ok(None);
        }
        let message = match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => message,
            Err(e) => {
                return match serde_json::from_slice::<serde_json::Value>(line) {
                    Err(_) => Err(format!("wrote a line that is not JSON: {}", excerpt(line, 80))),
                    // A request or notification this client does not know is skipped, as rmcp does.
                    Ok(v) if v.get("method").is_some_and(|m| m.is_string()) => {
                        tracing::debug!(server = %self.server, "skipping a message Porthole does not know: {e}");
                        Ok(None)
                    }
                    Ok(_) => Err(format!(
                        "wrote JSON that is not a JSON-RPC message ({e}): {}",
                        excerpt(line, 80)
                    )),
                };
            }
        };
        self.waiting.check(&message)?;
        Ok(Some(message))
    }
}

/// Reads `stdout` to its end, dropping what it reads, then waits for ever (the server's exit
/// ends the wait; its stdout may be held open by a child it left behind).
async fn drain(stdout: &mut BufReader<ChildStdout>) {
    loop {
        match stdout.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(read) => {
                let n = read.len();
                stdout.consume(n);
            }
        }
    }
    std::future::pending::<()>().await;
}

/// `line`, emptied for the next one: its capacity is kept up to [`KEPT_LINE_CAPACITY`].
fn reuse_line_buffer(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    line.shrink_to(KEPT_LINE_CAPACITY);
    line
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Why a server stopped taking part: it exited (status and the last line of its stderr), was
/// ended by a signal, or is still running with `still_running` (and is stopped).
async fn why_it_stopped(
    mut exit: watch::Receiver<Option<ExitStatus>>,
    stderr: &StderrTail,
    group: &ProcessGroup,
    still_running: &str,
) -> String {
    let status = match tokio::time::timeout(EXIT_GRACE, exit.wait_for(Option::is_some)).await {
        Ok(Ok(status)) => *status,
        // No status within the grace period (or none can be had).
        _ => None,
    };
    let mut reason = match status {
        Some(status) => describe_exit(status),
        None => {
            group.kill();
            still_running.to_string()
        }
    };
    if let Some(line) = stderr.last_line(Duration::from_millis(300)).await {
        reason.push_str(": ");
        reason.push_str(&line);
    }
    reason
}

/// "exited with status 3", or "was ended by signal 11 (SIGSEGV)".
fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                libc::SIGSEGV => " (SIGSEGV, a crash)",
                libc::SIGABRT => " (SIGABRT, it aborted)",
                libc::SIGBUS => " (SIGBUS, a crash)",
                libc::SIGILL => " (SIGILL, a crash)",
                libc::SIGFPE => " (SIGFPE, a crash)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGTERM => " (SIGTERM)",
                libc::SIGINT => " (SIGINT)",
                libc::SIGPIPE => " (SIGPIPE)",
                _ => "",
            };
            return format!("was ended by signal {signal}{name}");
        }
    }
    format!("ended ({status})")
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.waiting.sent(&item);
        let bytes = serde_json::to_vec(&item).map(|mut b| {
            b.push(b'\n');
            b
        });
        let stdin = self.stdin.clone();
        let exit = self.exit.clone();
        let stderr = self.stderr.clone();
        let group = self.group.clone();
        let end = self.end.clone();
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            let mut stdin = stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the connection is closed",
                ));
            };
            let written = async {
                pipe.write_all(&bytes).await?;
                pipe.flush().await
            };
            if let Err(e) = written.await {
                // Most often the server has exited (EPIPE); say how.
                drop(stdin);
                let reason =
                    why_it_stopped(exit, &stderr, &group, "stopped reading its stdin but is still running").await;
                end.set(reason.clone());
                return Err(std::io::Error::new(e.kind(), reason));
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.end.reason().is_some() || self.closed {
            return None;
        }
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::TooLong) => {
                    self.line.clear();
                    return self.broken(format!(
                        "sent a message larger than {} MiB, the most Porthole accepts in one message",
                        self.max_message_bytes >> 20
                    ));
                }
                Ok(LineRead::Eof) => {
                    if self.closed {
                        return None;
                    }
                    let reason = why_it_stopped(
                        self.exit.clone(),
                        &self.stderr,
                        &self.group,
                        "closed its stdout but is still running",
                    )
                    .await;
                    return self.broken(reason);
                }
                Err(e) => return self.broken(format!("its stdout cannot be read: {e}")),
            }
            let line = std::mem::take(&mut self.line);
            let checked = self.check_line(line.strip_suffix(b"\n").unwrap_or(&line));
            self.line = reuse_line_buffer(line);
            match checked {
                Ok(Some(message)) => return Some(message),
                Ok(None) => continue,
                Err(reason) => return self.broken(reason),
            }
        }
    }

    /// Closes the server's stdin and gives it 3 s to exit, then SIGTERM and 2 s, then SIGKILL
    /// (the stdio shutdown of the MCP specification); what is left of its group is ended too.
    /// Meanwhile whatever it still writes is read and dropped: a server in the middle of a long
    /// answer would otherwise block on the full pipe, never see its stdin close, and be
    /// signalled 3 s on instead of ending by itself at once.
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed = true;
        drop(self.stdin.lock().await.take());
        let exited = |exit: &watch::Receiver<Option<ExitStatus>>, within: Duration| {
            let mut exit = exit.clone();
            async move {
                tokio::time::timeout(within, exit.wait_for(Option::is_some))
                    .await
                    .is_ok()
            }
        };
        let (exit, group, stdout) = (&self.exit, &self.group, &mut self.stdout);
        let ended = async {
            if !exited(exit, Duration::from_secs(3)).await {
                #[cfg(unix)]
                group.signal(libc::SIGTERM);
                if !exited(exit, Duration::from_secs(2)).await {
                    group.kill();
                    exited(exit, Duration::from_secs(1)).await;
                }
            }
        };
        tokio::select! {
            () = ended => {}
            () = drain(stdout) => {}
        }
        // Children the server left behind go with it.
        self.group.kill();
        Ok(())
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        // Porthole is stopping, or the connection was abandoned or closed: whatever is left of
        // the group ends now (a task spawned here might never run).
        self.group.kill();
        self.end.closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_message_does_not_keep_its_buffer_after_it_is_read() {
        let small = reuse_line_buffer(Vec::with_capacity(4096));
        assert!(small.is_empty());
        assert_eq!(small.capacity(), 4096, "an ordinary buffer is kept as it is");
        let large = reuse_line_buffer(vec![b'x'; 50 << 20]);
        assert!(large.is_empty());
        assert!(
            large.capacity() <= KEPT_LINE_CAPACITY,
            "50 MiB kept after the message: {}",
            large.capacity()
        );
    }

    #[test]
    fn the_telling_line_is_the_last_error_not_a_trailer_or_a_stack_frame() {
        let tail = |text: &str| {
            let t = StderrTail::default();
            for line in text.lines() {
                t.line(line);
            }
            t.0.borrow().0.clone()
        };
        let node = "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/x.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n    at TypeError.foo (x)\n  code: 'MODULE_NOT_FOUND',\n}\n\nNode.js v22.12.0";
        assert_eq!(tail(node).as_deref(), Some("Error: Cannot find module '/x.js'"));
        let python = "Traceback (most recent call last):\n  File \"s.py\", line 1, in <module>\n    import nope\nModuleNotFoundError: No module named 'nope'";
        assert_eq!(
            tail(python).as_deref(),
            Some("ModuleNotFoundError: No module named 'nope'")
        );
        let rust = "thread 'main' panicked at src/main.rs:2:5:\nno config\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
        assert_eq!(
            tail(rust).as_deref(),
            Some("thread 'main' panicked at src/main.rs:2:5:")
        );
        assert_eq!(
            tail("starting\nlistening on stdio").as_deref(),
            Some("listening on stdio")
        );
        assert_eq!(tail("\n  \n").as_deref(), None);
    }

    #[test]
    fn an_excerpt_is_one_short_line() {
        assert_eq!(excerpt(b"a\nb\x1b[31mc", 80), "a b [31mc");
        assert_eq!(excerpt("é".repeat(100).as_bytes(), 3), "ééé…");
    }

    /// A real process that writes `script`'s output to stdout, behind the transport.
    #[cfg(unix)]
    fn shell(script: &str) -> (ChildTransport, ConnectionEnd) {
        let mut command = tokio::process::Command::new("sh");
        command.args(["-c", script]);
        let end = ConnectionEnd::default();
        let (transport, _stderr) = ChildTransport::spawn("t", command, end.clone(), StderrTail::default()).unwrap();
        (transport, end)
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_message_over_the_limit_ends_the_connection_at_once_naming_the_limit() {
        use rmcp::transport::Transport;
        let (mut transport, end) = shell("head -c 3000000 /dev/zero | tr '\\0' x; echo; sleep 30");
        transport.max_message_bytes = 2 << 20;
        let started = std::time::Instant::now();
        assert!(transport.receive().await.is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            end.reason().unwrap(),
            "sent a message larger than 2 MiB, the most Porthole accepts in one message"
        );
        // The server was ended with its group, not left sleeping.
        let mut exit = transport.exit.clone();
        tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some))
            .await
            .expect("the server's process group was ended")
            .unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_few_banner_lines_are_tolerated_and_a_flood_is_not() {
        use rmcp::transport::Transport;
        let (mut transport, end) = shell(
            r#"echo 'Server running on stdio'; echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'; sleep 30"#,
        );
        let message = transport.receive().await.expect("the notification after the banner");
        assert!(matches!(message, JsonRpcMessage::Notification(_)), "{message:?}");
        assert!(end.reason().is_none());
        drop(transport);

        let (mut transport, end) = shell("yes; sleep 30");
        assert!(transport.receive().await.is_none());
        let reason = end.reason().unwrap();
        assert!(
            reason.starts_with("writes text that is not JSON-RPC to its stdout"),
            "{reason}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn exit_statuses_are_told_apart() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(describe_exit(ExitStatus::from_raw(3 << 8)), "exited with status 3");
        assert_eq!(
            describe_exit(ExitStatus::from_raw(libc::SIGSEGV)),
            "was ended by signal 11 (SIGSEGV, a crash)"
        );
    }
}
