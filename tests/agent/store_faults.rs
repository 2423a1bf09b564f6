//! Store faults through the real `porthole` binary, with the scripted fake LLM as the only
//! stand-in: a disk that fills up mid-reply (a real, small tmpfs) and a database file with a
//! damaged page. Each run must fail loudly with a one-line reason, show the reply it has, and
//! leave what was already written (and a damaged file) exactly as it was.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use porthole_e2e::porthole_command;
use porthole_fake_llm::{FakeLlm, Reply, Script};
use porthole_store::{MessageRole, MessageStatus, Store};
use serde_json::json;

fn porthole(profile: &Path, args: &[&str]) -> Output {
    let mut cmd = porthole_command(profile, args);
    cmd.stdin(Stdio::null())
        .output()
        .expect("cannot run porthole (is it built? `cargo build -p porthole`)")
}

/// `porthole run --prompt PROMPT` against `fake` (plus `extra` arguments).
fn run(profile: &Path, fake: &FakeLlm, prompt: &str, extra: &[&str]) -> Output {
    let url = fake.base_url();
    let mut args = vec!["run", "--base-url", &url, "--model", "m", "--prompt", prompt];
    args.extend_from_slice(extra);
    porthole(profile, &args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A profile with no MCP servers.
fn profile_in(dir: &Path) -> PathBuf {
    let profile = dir.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(profile.join("config.json"), json!({"mcpServers": {}}).to_string()).unwrap();
    profile
}

/// The conversation id `porthole run` announces on stderr.
fn conversation_of(out: &Output) -> String {
    stderr(out)
        .lines()
        .find_map(|l| l.strip_prefix("porthole: conversation "))
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no conversation id in: {}", stderr(out)))
        .to_string()
}

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped (also when the test panics).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .expect("cannot run mount");
        assert!(
            status.success(),
            "mounting a {size} tmpfs on {} failed: this test needs root (CI runs as root)",
            dir.display()
        );
        Tmpfs(dir.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a process the failed test left behind must not keep the mount.
        let done = Command::new("umount").arg("-l").arg(&self.0).status();
        if !done.is_ok_and(|s| s.success()) {
            eprintln!("could not unmount the tmpfs at {}", self.0.display());
        }
    }
}

/// Fills the file system holding `dir` with one file, then frees `leave` bytes of it.
fn fill_leaving(dir: &Path, leave: u64) -> PathBuf {
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0x5a_u8; 64 * 1024];
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    let full = file.metadata().unwrap().len();
    assert!(full > leave, "the disk was not filled ({full} bytes written)");
    file.set_len(full - leave).unwrap();
    filler
}

/// The disk fills up while a reply streams in. The run prints the whole reply, then fails with
/// exit status 1 and one line saying the conversation could not be saved and why; what was
/// written before (an earlier conversation, this turn's message and the reply's first part) is
/// all there afterwards, and the conversation goes on once there is room again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs root to mount a tmpfs; .ci/test runs it"]
async fn a_full_disk_fails_the_run_loudly_and_keeps_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("small-disk");
    let _tmpfs = Tmpfs::mount(&mount, "4m");
    let profile = profile_in(&mount);

    // The reply streams in four deltas of 200 KB; each rewrites the whole message row into the
    // write-ahead log, so the first fits in the room left and a later one does not.
    let reply: String = (0..800_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    let fake = FakeLlm::start(Script::new(vec![
        Reply::text("First answer."),
        Reply::text(reply.clone()),
    ]))
    .await
    .unwrap();
    let first = run(&profile, &fake, "first question", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let earlier = conversation_of(&first);

    let filler = fill_leaving(&mount, 512 * 1024);
    let out = run(&profile, &fake, "second question", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let database = profile.join("porthole.db");
    let reason = format!(
        "porthole: the conversation could not be saved to {}: ",
        database.display()
    );
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with(&reason), "the last line gives the reason: {err}");
    assert!(last.contains("database or disk is full"), "{err}");
    assert_eq!(stdout(&out).trim_end(), reply, "the reply is printed in full");
    let current = conversation_of(&out);

    // Room again: nothing already written is lost.
    std::fs::remove_file(filler).unwrap();
    let store = Store::open(&database).unwrap();
    let before = store.messages(&earlier).unwrap();
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|m| m.status == MessageStatus::Complete));
    assert_eq!(before[1].parts[0]["text"], "First answer.");
    let messages = store.messages(&current).unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0].role, MessageRole::User);
    assert_eq!(messages[0].parts[0]["text"], "second question");
    assert_eq!(messages[1].status, MessageStatus::Interrupted);
    let saved = messages[1].parts[0]["text"].as_str().unwrap_or_default();
    assert!(
        !saved.is_empty() && saved.len() < reply.len(),
        "{} bytes saved",
        saved.len()
    );
    assert!(reply.starts_with(saved), "the saved part is the reply's start");
    drop(store);

    let fake = FakeLlm::start(Script::new(vec![Reply::text("Third answer.")]))
        .await
        .unwrap();
    let again = run(&profile, &fake, "third question", &["--conversation", &current]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), "Third answer.");
}

/// Writes garbage over the page holding the root of the `messages` table.
fn damage_messages_page(database: &Path) {
    let conn = rusqlite::Connection::open(database).unwrap();
    let page_size: u32 = conn.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap();
    let root: u32 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_schema WHERE name = 'messages'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(database).unwrap();
    let (root, page_size) = (root as usize, page_size as usize);
    for (i, b) in bytes[(root - 1) * page_size..root * page_size].iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[1];
    }
    std::fs::write(database, bytes).unwrap();
}

/// A store with a damaged page is refused before anything is sent or written: one line names
/// the file and says what to do, and the file's bytes do not change. `porthole store recover`
/// moves it aside unchanged and starts a fresh store that works; a healthy store is not moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_store_is_never_written_to_and_recover_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let profile = profile_in(dir.path());
    let database = profile.join("porthole.db");
    let fake = FakeLlm::start(Script::new(vec![
        Reply::text("First answer."),
        Reply::text("Fresh answer."),
    ]))
    .await
    .unwrap();
    let first = run(&profile, &fake, "first question", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    damage_messages_page(&database);
    let damaged = std::fs::read(&database).unwrap();
    let requests = fake.requests().len();

    for args in [&["run", "--prompt", "second question"][..], &["audit"][..]] {
        let out = porthole(&profile, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("porthole: ")).collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(lines[0].contains(&database.display().to_string()), "{err}");
        assert!(lines[0].contains("is damaged"), "{err}");
        assert!(lines[0].contains("porthole store recover"), "{err}");
        assert!(stdout(&out).is_empty());
        assert_eq!(
            std::fs::read(&database).unwrap(),
            damaged,
            "{args:?} wrote to the damaged file"
        );
    }
    assert_eq!(fake.requests().len(), requests, "nothing was sent to the model");

    let out = porthole(&profile, &["store", "recover"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kept = PathBuf::from(stdout(&out).trim());
    assert_eq!(kept.parent(), Some(profile.as_path()));
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("porthole.db.damaged-"), "{name}");
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        damaged,
        "the damaged store is kept as it was"
    );

    let fresh = run(&profile, &fake, "fresh question", &[]);
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert_eq!(stdout(&fresh).trim(), "Fresh answer.");

    let out = porthole(&profile, &["store", "recover"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not damaged; nothing was moved"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&kept).unwrap(), damaged);
    let store = Store::open(&database).unwrap();
    assert_eq!(store.list_conversations().unwrap().len(), 1, "the fresh store stays");
}
