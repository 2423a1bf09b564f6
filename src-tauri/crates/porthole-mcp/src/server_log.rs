//! A stdio server's own log file, `logs/servers/<name>.log`: what the server writes to stderr,
//! kept under a size cap. When the next line would take the file past the cap, the file becomes
//! `<name>.log.1` (replacing the one before) and a new `<name>.log` starts, so a chatty server
//! uses at most twice the cap on disk however long it runs.

use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use crate::connection::log_file_name;

/// The size a server's log file is kept under.
pub const LOG_CAP_BYTES: u64 = 10 * 1024 * 1024;

/// One server's log file, open for appending.
pub struct ServerLog {
    path: PathBuf,
    file: tokio::fs::File,
    /// The file's size, counted as lines are written (from its size when opened).
    size: u64,
    cap: u64,
}

impl ServerLog {
    /// Opens (or creates) `server`'s log file in `dir`, creating `dir` if needed; the file is
    /// kept under `cap` bytes.
    pub async fn open(dir: &Path, server: &str, cap: u64) -> std::io::Result<ServerLog> {
        tokio::fs::create_dir_all(dir).await?;
        let path = dir.join(log_file_name(server));
        let file = append_to(&path).await?;
        let size = file.metadata().await?.len();
        Ok(ServerLog { path, file, size, cap })
    }

    /// Where the log is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line (a newline is added), first moving the file to `<name>.log.1` when the
    /// line would take it past the cap. A line longer than the cap on its own is cut to fit.
    pub async fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let room = usize::try_from(self.cap.saturating_sub(1)).unwrap_or(usize::MAX);
        let mut end = line.len().min(room);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        let line = &line[..end];
        let needed = line.len() as u64 + 1;
        if self.size > 0 && self.size + needed > self.cap {
            self.rotate().await?;
        }
        self.file.write_all(line.as_bytes()).await?;
        self.file.write_all(b"\n").await?;
        // tokio writes in the background: flushed, the line is in the file for whoever reads it.
        self.file.flush().await?;
        self.size += needed;
        Ok(())
    }

    /// `<name>.log` becomes `<name>.log.1`; a new, empty `<name>.log` is opened.
    async fn rotate(&mut self) -> std::io::Result<()> {
        self.file.flush().await?;
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        tokio::fs::rename(&self.path, &old).await?;
        self.file = append_to(&self.path).await?;
        self.size = 0;
        Ok(())
    }
}

/// UTC date and time, `2026-12-01 07:45:12Z`, for the line that marks each start of a server.
pub fn utc_date_time(at: std::time::SystemTime) -> String {
    let secs = at
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// UTC time of day with milliseconds, `07:45:12.345`, for each line a server writes.
pub fn utc_time(at: std::time::SystemTime) -> String {
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        since.subsec_millis()
    )
}

async fn append_to(path: &Path) -> std::io::Result<tokio::fs::File> {
    tokio::fs::OpenOptions::new().create(true).append(true).open(path).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(path: &Path) -> u64 {
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
    }

    #[tokio::test]
    async fn a_chatty_server_keeps_one_capped_file_and_one_older_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ServerLog::open(dir.path(), "chatty/server", 1000).await.unwrap();
        assert_eq!(log.path(), dir.path().join("chatty_server.log"));
        for n in 0..500 {
            log.write_line(&format!("line {n:04} of a server that talks a lot"))
                .await
                .unwrap();
            assert!(size(log.path()) <= 1000, "at line {n}: {}", size(log.path()));
        }
        let current = std::fs::read_to_string(log.path()).unwrap();
        let older = std::fs::read_to_string(dir.path().join("chatty_server.log.1")).unwrap();
        assert!(
            current.ends_with("line 0499 of a server that talks a lot\n"),
            "{current}"
        );
        assert!(older.len() <= 1000 && older.len() > 900, "{}", older.len());
        // The two files are the latest lines, without a gap between them.
        let first_current: u32 = current[5..9].parse().unwrap();
        let last_older: u32 = older.lines().last().unwrap()[5..9].parse().unwrap();
        assert_eq!(last_older + 1, first_current);
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 2, "no third file");
    }

    #[test]
    fn times_are_utc() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_796_110_712_345);
        assert_eq!(utc_date_time(at), "2026-12-01 07:38:32Z");
        assert_eq!(utc_time(at), "07:38:32.345");
        assert_eq!(utc_date_time(std::time::UNIX_EPOCH), "1970-01-01 00:00:00Z");
        let leap = std::time::UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(utc_date_time(leap), "2000-02-29 00:00:00Z");
    }

    #[tokio::test]
    async fn the_cap_counts_what_an_earlier_run_wrote_and_cuts_a_huge_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.log"), "x".repeat(990)).unwrap();
        let mut log = ServerLog::open(dir.path(), "s", 1000).await.unwrap();
        log.write_line("twenty bytes of text").await.unwrap();
        assert_eq!(size(&dir.path().join("s.log.1")), 990);
        log.write_line(&"é".repeat(5000)).await.unwrap();
        assert!(size(log.path()) <= 1000);
        assert!(std::fs::read_to_string(log.path()).unwrap().ends_with("é\n"));
    }
}
