//! The TypeScript declaration of what the window gets of a view's download offer (ts-rs).

use porthole_apps::download::DownloadFile;
use ts_rs::{Config, TS};

#[test]
fn a_download_file_reaches_the_window_without_its_bytes() {
    let decl = DownloadFile::decl(&Config::new().with_large_int("number"));
    let fields: String = decl
        .lines()
        .filter(|line| !line.trim_start().starts_with(['/', '*']))
        .collect::<Vec<_>>()
        .join(" ");
    let fields = fields.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        fields,
        "type DownloadFile = { name: string, mime: string | null, size: number, };"
    );
    let file = DownloadFile {
        name: "a.txt".into(),
        mime: None,
        bytes: b"hello".to_vec(),
        size: 5,
    };
    assert_eq!(
        serde_json::to_string(&file).unwrap(),
        r#"{"name":"a.txt","mime":null,"size":5}"#
    );
}
