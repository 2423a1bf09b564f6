//! `ui/download-file`: what a view offers to save, checked and named safely. The app asks the
//! person first and lets them choose where each file goes; nothing is written without that.

use base64::Engine;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// The most a view may offer in one request, all files together.
pub const MAX_DOWNLOAD_BYTES: usize = 50 * 1024 * 1024;
/// Files in one request at most.
pub const MAX_FILES: usize = 20;

/// One file ready to save. Serialized (for the window's "save these files?") without its bytes.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DownloadFile {
    /// A safe file name (no directories, no control characters, not hidden).
    pub name: String,
    pub mime: Option<String>,
    #[serde(skip)]
    pub bytes: Vec<u8>,
    pub size: usize,
}

/// An item of the request that names a resource to read from the view's server first.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkToRead {
    pub uri: String,
    pub name: Option<String>,
    pub mime: Option<String>,
}

/// What a request's `contents` hold: files with their bytes, and links to read.
#[derive(Debug, Default, PartialEq)]
pub struct Offer {
    pub files: Vec<DownloadFile>,
    pub links: Vec<LinkToRead>,
}

/// Splits `contents` (EmbeddedResource and ResourceLink blocks) into files and links.
pub fn read_offer(contents: &[Value]) -> Result<Offer, String> {
    if contents.is_empty() {
        return Err("nothing to download".into());
    }
    if contents.len() > MAX_FILES {
        return Err(format!("{} files in one request; at most {MAX_FILES}", contents.len()));
    }
    let mut offer = Offer::default();
    for item in contents {
        match item.get("type").and_then(Value::as_str) {
            Some("resource") => {
                let resource = item.get("resource").ok_or("a resource item without its resource")?;
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
                let mime = resource.get("mimeType").and_then(Value::as_str).map(String::from);
                let bytes = resource_bytes(resource)?;
                offer.files.push(file(uri, None, mime, bytes));
            }
            Some("resource_link") => {
                let uri = item
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or("a resource link without a uri")?;
                offer.links.push(LinkToRead {
                    uri: uri.to_string(),
                    name: item.get("name").and_then(Value::as_str).map(String::from),
                    mime: item.get("mimeType").and_then(Value::as_str).map(String::from),
                });
            }
            other => return Err(format!("cannot download an item of type {other:?}")),
        }
    }
    check_total(&offer.files)?;
    Ok(offer)
}

/// The file a resources/read result gives for `link`.
pub fn file_from_read(link: &LinkToRead, read: &Value) -> Result<DownloadFile, String> {
    let contents = read
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("the server returned no contents")?;
    let item = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(link.uri.as_str()))
        .or_else(|| contents.first())
        .ok_or("the server returned no contents")?;
    let mime = link
        .mime
        .clone()
        .or_else(|| item.get("mimeType").and_then(Value::as_str).map(String::from));
    Ok(file(&link.uri, link.name.as_deref(), mime, resource_bytes(item)?))
}

/// Refuses an offer whose files are too large together.
pub fn check_total(files: &[DownloadFile]) -> Result<(), String> {
    let total: usize = files.iter().map(|f| f.size).sum();
    if total > MAX_DOWNLOAD_BYTES {
        return Err(format!("{total} bytes offered; at most {MAX_DOWNLOAD_BYTES}"));
    }
    Ok(())
}

fn resource_bytes(resource: &Value) -> Result<Vec<u8>, String> {
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    if let Some(blob) = resource.get("blob").and_then(Value::as_str) {
        let compact: String = blob.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|e| format!("a blob that is not base64: {e}"));
    }
    Err("a resource with neither text nor a blob".into())
}

fn file(uri: &str, name: Option<&str>, mime: Option<String>, bytes: Vec<u8>) -> DownloadFile {
    let from_uri = uri
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let name = safe_file_name(name.filter(|n| !n.trim().is_empty()).unwrap_or(from_uri));
    DownloadFile {
        name,
        mime,
        size: bytes.len(),
        bytes,
    }
}

/// A file name that is only a name: path separators, control and reserved characters become
/// `_`, leading dots are removed, and it is never empty or longer than 120 characters.
pub fn safe_file_name(raw: &str) -> String {
    let decoded = percent_decode(raw);
    let last = decoded.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .collect();
    name = name.trim().trim_start_matches('.').trim().to_string();
    if name.chars().count() > 120 {
        name = name.chars().take(120).collect();
    }
    if name.is_empty() || name.chars().all(|c| c == '_' || c == '.') {
        "download".into()
    } else {
        name
    }
}

fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&raw[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_cannot_escape_the_chosen_folder() {
        assert_eq!(safe_file_name("report.csv"), "report.csv");
        assert_eq!(safe_file_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_file_name("..%2F..%2Fetc%2Fpasswd"), "passwd");
        assert_eq!(safe_file_name("C:\\Windows\\system.ini"), "system.ini");
        assert_eq!(safe_file_name(".bashrc"), "bashrc");
        assert_eq!(safe_file_name("a\u{0}b\nc"), "a_b_c");
        assert_eq!(safe_file_name("what?.txt"), "what_.txt");
        assert_eq!(safe_file_name(""), "download");
        assert_eq!(safe_file_name(".."), "download");
        assert_eq!(safe_file_name(&"x".repeat(500)).len(), 120);
    }

    #[test]
    fn embedded_resources_become_files_and_links_are_read_later() {
        let offer = read_offer(&[
            json!({"type": "resource", "resource": {"uri": "file:///tmp/data/report.csv", "mimeType": "text/csv", "text": "a,b\n1,2\n"}}),
            json!({"type": "resource", "resource": {"uri": "ui://x/chart.png?v=2", "blob": "aGVsbG8="}}),
            json!({"type": "resource_link", "uri": "ui://x/big.json", "name": "big.json"}),
        ])
        .unwrap();
        assert_eq!(offer.files.len(), 2);
        assert_eq!(offer.files[0].name, "report.csv");
        assert_eq!(offer.files[0].bytes, b"a,b\n1,2\n");
        assert_eq!(offer.files[0].mime.as_deref(), Some("text/csv"));
        assert_eq!(offer.files[1].name, "chart.png");
        assert_eq!(offer.files[1].bytes, b"hello");
        assert_eq!(offer.links[0].uri, "ui://x/big.json");
        let file = file_from_read(
            &offer.links[0],
            &json!({"contents": [{"uri": "ui://x/big.json", "mimeType": "application/json", "text": "{}"}]}),
        )
        .unwrap();
        assert_eq!(file.name, "big.json");
        assert_eq!(file.mime.as_deref(), Some("application/json"));
    }

    #[test]
    fn bad_offers_are_refused_with_a_reason() {
        assert!(read_offer(&[]).unwrap_err().contains("nothing"));
        assert!(
            read_offer(&[json!({"type": "text", "text": "x"})])
                .unwrap_err()
                .contains("type")
        );
        assert!(
            read_offer(&[json!({"type": "resource", "resource": {"uri": "a", "blob": "!!"}})])
                .unwrap_err()
                .contains("base64")
        );
        let many: Vec<Value> = (0..21)
            .map(|_| json!({"type": "resource_link", "uri": "ui://a"}))
            .collect();
        assert!(read_offer(&many).unwrap_err().contains("at most"));
        let huge = "x".repeat(MAX_DOWNLOAD_BYTES + 1);
        assert!(
            read_offer(&[json!({"type": "resource", "resource": {"uri": "a", "text": huge}})])
                .unwrap_err()
                .contains("bytes offered")
        );
    }
}
