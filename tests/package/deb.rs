//! The packages people install (`make package`): the `.deb` is installed on this machine with
//! `dpkg -i` (and `apt-get install -f`), its `porthole` command and its app window are used on a
//! fresh profile, an install link goes through the OS's URL handler to the running app, and the
//! package is removed again, leaving none of its files; the tarball's `porthole` runs too.
//!
//! Needs root (or password-less sudo), a display (Xvfb), tauri-driver and WebKitWebDriver, and the
//! packages of the debug build, made first by `src-tauri/packaging/build --debug` (`make test`
//! does both; a release build takes minutes, and the bundling is the same).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use porthole_e2e::{App, target_dir};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);
const INSTALLED: &str = "/usr/bin/porthole";

/// `program ARGS…` as root: directly when the test runs as root, else through `sudo -n`.
fn as_root(program: &str, args: &[&str]) -> Command {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let mut command = Command::new(program);
        command.args(args);
        command
    } else {
        let mut command = Command::new("sudo");
        command.arg("-n").arg(program).args(args);
        command
    }
}

fn run(mut command: Command) -> Result<Output> {
    let shown = format!("{command:?}");
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {shown}"))?;
    ensure!(
        output.status.success(),
        "{shown} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(output)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn is_installed() -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "porthole"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// The newest package under `bundle/<kind>/` of the debug build, made after the debug binary.
fn package(kind: &str, extension: &str) -> Result<PathBuf> {
    let debug = target_dir().join("debug");
    let dir = debug.join("bundle").join(kind);
    let newest = std::fs::read_dir(&dir)
        .with_context(|| format!("no {}: run src-tauri/packaging/build --debug", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(extension))
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .with_context(|| format!("no *{extension} in {}", dir.display()))?;
    // The bundler marks the binary with the package's kind and writes it back once the package
    // is made, a moment later: a package made within a minute of the binary is of that build.
    let built = debug.join("porthole").metadata()?.modified()?;
    ensure!(
        newest.metadata()?.modified()? + Duration::from_secs(60) >= built,
        "{} is older than the debug build: run src-tauri/packaging/build --debug",
        newest.display()
    );
    Ok(newest)
}

/// Removes the package when the test ends, however it ends.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        if is_installed() {
            let _ = as_root("dpkg", &["--purge", "porthole"]).output();
        }
    }
}

/// A file of the `.deb`, read without installing it.
fn file_in(deb: &Path, path: &str) -> Result<String> {
    let output = run({
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"dpkg-deb --fsys-tarfile "$1" | tar -xO "$2""#)
            .arg("sh")
            .arg(deb)
            .arg(path);
        c
    })?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_deb_installs_runs_takes_install_links_and_removes_cleanly() -> Result<()> {
    use base64::Engine;
    if is_installed() {
        bail!("a porthole package is installed on this machine already; the test installs its own");
    }
    run(as_root("true", &[])).context("the package test needs root or password-less sudo")?;
    let deb = package("deb", ".deb")?;

    // What the package says and holds, before it is installed.
    let field = |name: &str| -> Result<String> {
        let mut c = Command::new("dpkg-deb");
        c.arg("-f").arg(&deb).arg(name);
        Ok(stdout(&run(c)?))
    };
    assert_eq!(field("Package")?, "porthole");
    let depends = field("Depends")?;
    for needed in ["libwebkit2gtk-4.1-0", "libgtk-3-0", "libsoup-3.0-0", "libc6"] {
        assert!(depends.contains(needed), "Depends lacks {needed}: {depends}");
    }
    assert!(!depends.contains("-dev"), "a build-time package in Depends: {depends}");
    let recommends = field("Recommends")?;
    assert!(recommends.contains("gnome-keyring"), "{recommends}");
    assert!(
        !depends.contains("gnome-keyring"),
        "the Secret Service is only recommended"
    );
    let desktop = file_in(&deb, "usr/share/applications/Porthole.desktop")?;
    for line in [
        "Exec=porthole %u",
        "Icon=porthole",
        "Categories=Network;Chat;",
        "MimeType=x-scheme-handler/porthole;",
    ] {
        assert!(desktop.lines().any(|l| l == line), "no {line:?} in:\n{desktop}");
    }

    // Installed as a person would.
    let _installed = Installed;
    run(as_root("dpkg", &["-i", &deb.display().to_string()]))?;
    run({
        let mut c = as_root("apt-get", &["install", "-f", "-y", "-q"]);
        c.env("DEBIAN_FRONTEND", "noninteractive");
        c
    })?;
    assert!(is_installed());
    let validated = run({
        let mut c = Command::new("desktop-file-validate");
        c.arg("/usr/share/applications/Porthole.desktop");
        c
    })?;
    assert!(!stdout(&validated).contains("error"), "{}", stdout(&validated));
    assert!(Path::new("/usr/share/icons/hicolor/128x128/apps/porthole.png").is_file());
    let handler = run({
        let mut c = Command::new("xdg-mime");
        c.args(["query", "default", "x-scheme-handler/porthole"]);
        c
    })?;
    assert_eq!(
        stdout(&handler),
        "Porthole.desktop",
        "porthole: links are not Porthole's"
    );

    // The command on PATH, on a fresh profile.
    let which = run({
        let mut c = Command::new("sh");
        c.args(["-c", "command -v porthole"]);
        c
    })?;
    assert_eq!(stdout(&which), INSTALLED);
    let version = stdout(&run({
        let mut c = Command::new("porthole");
        c.arg("--version");
        c
    })?);
    assert!(version.starts_with("porthole 0.1.0 (commit "), "{version}");
    let fresh = tempfile::tempdir()?;
    let tools = run({
        let mut c = Command::new("porthole");
        c.arg("--profile").arg(fresh.path()).args(["tools", "--json"]);
        for var in porthole_e2e::PORTHOLE_VARIABLES {
            c.env_remove(var);
        }
        c
    })?;
    let tools = String::from_utf8_lossy(&tools.stdout).into_owned();
    let listed: serde_json::Value = serde_json::from_str(&tools).with_context(|| tools.clone())?;
    assert!(
        listed.to_string().contains("\"system_monitor\""),
        "the demo server's tools are missing: {tools}"
    );
    // The demo server ran as the small program installed beside porthole (its log says which).
    let log = std::fs::read_to_string(fresh.path().join("logs/servers/porthole-demo.log"))
        .context("the demo server's log")?;
    assert!(log.contains("porthole-demo-server 0.1.0 on stdio"), "{log}");

    // The installed app's window, and a link opened through the desktop's URL handler (as a
    // browser hands one over) reaching it: the same profile, so the running app takes it.
    let profile = tempfile::tempdir()?;
    let app = App::launch_program(Path::new(INSTALLED), profile.path(), &[], &[])?;
    let s = &app.session;
    let entry = json!({"command": env!("CARGO_BIN_EXE_porthole-test-server")});
    let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(entry.to_string());
    let link = format!("porthole://install-server?name=from-a-page&config={config}");
    run({
        let mut c = Command::new("xdg-open");
        c.arg(&link).env("PORTHOLE_HOME", profile.path());
        c
    })?;
    s.wait_for_element("[data-testid=server-install-dialog]", WAIT)?;
    assert_eq!(s.text(&s.find("[data-testid=server-install-name]")?)?, "from-a-page");
    s.click(&s.find("[data-testid=server-install-add]")?)?;
    s.wait_for_element(
        "[data-testid=server][data-server-name=from-a-page][data-state=connected]",
        WAIT,
    )?;
    let written = std::fs::read_to_string(profile.path().join("config.json"))?;
    assert!(written.contains("from-a-page"), "{written}");
    drop(app);

    // Removed: nothing of it is left.
    run(as_root("dpkg", &["-r", "porthole"]))?;
    assert!(!is_installed());
    for gone in [
        INSTALLED,
        "/usr/share/applications/Porthole.desktop",
        "/usr/share/icons/hicolor/128x128/apps/porthole.png",
    ] {
        assert!(!Path::new(gone).exists(), "{gone} is left after removal");
    }
    let handler = Command::new("xdg-mime")
        .args(["query", "default", "x-scheme-handler/porthole"])
        .output()?;
    assert_eq!(stdout(&handler), "", "porthole: links still have a handler");
    run(as_root("dpkg", &["--purge", "porthole"]))?;
    Ok(())
}

/// The plain tarball holds the same program and desktop files, and its `porthole` runs from
/// wherever it is unpacked.
#[test]
fn the_tarball_unpacks_to_a_porthole_that_runs() -> Result<()> {
    let tarball = package("tar", ".tar.gz")?;
    let dir = tempfile::tempdir()?;
    run({
        let mut c = Command::new("tar");
        c.arg("-xzf").arg(&tarball).arg("-C").arg(dir.path());
        c
    })?;
    let top = dir.path().join("porthole-0.1.0");
    assert!(top.join("share/applications/Porthole.desktop").is_file());
    assert!(top.join("share/icons/hicolor/128x128/apps/porthole.png").is_file());
    assert!(top.join("bin/porthole-demo-server").is_file());
    let version = stdout(&run({
        let mut c = Command::new(top.join("bin/porthole"));
        c.arg("--version");
        c
    })?);
    assert!(version.starts_with("porthole 0.1.0 (commit "), "{version}");
    Ok(())
}
