//! One app per profile: the first app started on a profile listens on a socket in the profile's
//! data folder (`app.sock`); an app started again on the same profile hands its launch (its
//! install link, if any) to the first one, which comes forward, and exits. Another profile has
//! another socket, so it starts its own app. The command-line tools never take part: they run
//! beside the app (the conversation store keeps two writers off one conversation).
//!
//! Unix only (a Unix domain socket); elsewhere every launch starts its own app.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a second launch hands the running app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handover {
    /// The install link it was launched with.
    pub link: Option<String>,
}

/// The socket of the app running on the profile whose data folder is `data_dir`.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("app.sock")
}

/// How a launch went.
pub enum Launch {
    /// This is the profile's only app: it listens for later launches.
    First(Listener),
    /// An app already runs on the profile and was handed this launch.
    HandedOver,
}

/// The first app's end of the socket.
pub struct Listener {
    #[cfg(unix)]
    listener: std::os::unix::net::UnixListener,
    path: PathBuf,
}

#[cfg(unix)]
impl Listener {
    /// Calls `handed` with each later launch's handover, on a thread of its own, for as long
    /// as the app runs. `handed` says whether the app took it: an app that is ending does not,
    /// and the launch then starts an app of its own.
    pub fn serve(self, handed: impl Fn(Handover) -> bool + Send + 'static) {
        std::thread::Builder::new()
            .name("porthole-single-instance".into())
            .spawn(move || {
                for stream in self.listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    if let Err(e) = answer_handover(stream, &handed) {
                        tracing::warn!("a launch on this profile could not be read: {e}");
                    }
                }
            })
            .map(drop)
            .unwrap_or_else(|e| tracing::warn!("later launches cannot be heard: {e}"));
    }
}

#[cfg(not(unix))]
impl Listener {
    pub fn serve(self, _handed: impl Fn(Handover) -> bool + Send + 'static) {}
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The largest handover read (an install link is at most 16 KiB).
#[cfg(unix)]
const MAX_HANDOVER: u64 = 64 * 1024;

#[cfg(unix)]
fn answer_handover(stream: std::os::unix::net::UnixStream, handed: &impl Fn(Handover) -> bool) -> std::io::Result<()> {
    use std::io::{Read, Write};
    stream.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
    let mut text = String::new();
    (&stream).take(MAX_HANDOVER).read_to_string(&mut text)?;
    let handover = serde_json::from_str(&text).map_err(std::io::Error::other)?;
    // The launch waits for this, so it exits only once the app has taken its link.
    let answer: &[u8] = if handed(handover) { b"ok" } else { b"ending" };
    (&stream).write_all(answer)
}

/// Claims the profile whose data folder is `data_dir` for this app, or hands `handover` to the
/// app that already has it.
#[cfg(unix)]
pub fn claim(data_dir: &Path, handover: &Handover) -> std::io::Result<Launch> {
    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::net::{UnixListener, UnixStream};
    let path = socket_path(data_dir);
    // Two tries: a socket left by an app that crashed is removed, and a launch racing this one
    // for the profile may win the bind.
    for _ in 0..2 {
        match UnixStream::connect(&path) {
            Ok(mut stream) => {
                stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
                stream.write_all(serde_json::to_string(handover)?.as_bytes())?;
                stream.shutdown(std::net::Shutdown::Write)?;
                let mut answer = String::new();
                stream.read_to_string(&mut answer)?;
                if answer == "ok" {
                    return Ok(Launch::HandedOver);
                }
                // The app there is ending: this launch takes the profile.
                let _ = std::fs::remove_file(&path);
            }
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionRefused) => {
                // Nobody listens: an app that ended without removing it.
                let _ = std::fs::remove_file(&path);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        match UnixListener::bind(&path) {
            Ok(listener) => return Ok(Launch::First(Listener { listener, path })),
            Err(e) if e.kind() == ErrorKind::AddrInUse => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "{} is in use by another launch",
        path.display()
    )))
}

#[cfg(not(unix))]
pub fn claim(data_dir: &Path, _handover: &Handover) -> std::io::Result<Launch> {
    Ok(Launch::First(Listener {
        path: socket_path(data_dir),
    }))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_launch_is_handed_to_the_first_and_another_profile_is_its_own() {
        let profile = tempfile::tempdir().unwrap();
        let Launch::First(listener) = claim(profile.path(), &Handover { link: None }).unwrap() else {
            panic!("the first launch must get the profile");
        };
        let (tx, rx) = mpsc::channel();
        listener.serve(move |h| tx.send(h).is_ok());
        let link = Handover {
            link: Some("porthole://install-server?name=a&config=e30".into()),
        };
        assert!(matches!(claim(profile.path(), &link).unwrap(), Launch::HandedOver));
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap(), link);
        let other = tempfile::tempdir().unwrap();
        assert!(matches!(
            claim(other.path(), &Handover { link: None }).unwrap(),
            Launch::First(_)
        ));
    }

    #[test]
    fn an_app_that_is_ending_lets_the_launch_start_its_own() {
        let profile = tempfile::tempdir().unwrap();
        let Launch::First(listener) = claim(profile.path(), &Handover { link: None }).unwrap() else {
            panic!("the first launch must get the profile");
        };
        listener.serve(|_| false);
        assert!(matches!(
            claim(profile.path(), &Handover { link: None }).unwrap(),
            Launch::First(_)
        ));
    }

    #[test]
    fn a_socket_left_by_a_crashed_app_is_taken_over() {
        let profile = tempfile::tempdir().unwrap();
        // A socket file nobody listens on.
        drop(std::os::unix::net::UnixListener::bind(socket_path(profile.path())).unwrap());
        assert!(socket_path(profile.path()).exists());
        assert!(matches!(
            claim(profile.path(), &Handover { link: None }).unwrap(),
            Launch::First(_)
        ));
    }
}
