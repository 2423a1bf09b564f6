//! The folders servers are given as their roots (`roots/list`): the app's list, kept in the
//! general settings, or a server's own (its config's `roots`). Servers are told when the app's
//! list changes (`notifications/roots/list_changed`); a server whose own list changes
//! reconnects, as after any change of its config.

use std::path::PathBuf;
use std::sync::Arc;

use porthole_mcp::RootsSource;
use porthole_mcp::connection::root_of;
use porthole_store::Store;
use serde_json::Value;

use crate::error::{AppError, AppResult};

/// Where the app's roots are kept: a JSON array of absolute paths.
pub const ROOTS_SETTING: &str = "roots";

/// The app's roots, as stored.
pub fn app_roots(store: Option<&Store>) -> Vec<String> {
    match store.and_then(|s| s.setting(ROOTS_SETTING).ok().flatten()) {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Answers `roots/list` from the app's roots as stored when asked.
pub fn source(store: Option<Store>) -> RootsSource {
    RootsSource(Arc::new(move |_server: &str| {
        app_roots(store.as_ref())
            .iter()
            .map(|folder| root_of(std::path::Path::new(folder)))
            .collect()
    }))
}

/// Checks a list of folders from the form: each an absolute path of a folder that exists;
/// blank entries and repeats are dropped.
pub fn check_roots(list: &[String]) -> AppResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for entry in list.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let path = PathBuf::from(entry);
        if !path.is_absolute() {
            return Err(AppError::invalid(format!("roots: {entry} is not an absolute path")));
        }
        if !path.is_dir() {
            return Err(AppError::invalid(format!("roots: {entry} is not a folder")));
        }
        if !out.iter().any(|o| o == entry) {
            out.push(entry.to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_must_be_absolute_and_exist() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().to_string_lossy().into_owned();
        assert_eq!(
            check_roots(&[folder.clone(), " ".into(), folder.clone()]).unwrap(),
            [folder.as_str()]
        );
        let e = check_roots(&["notes".into()]).unwrap_err();
        assert_eq!(e.message, "roots: notes is not an absolute path");
        let missing = format!("{folder}/missing");
        let e = check_roots(std::slice::from_ref(&missing)).unwrap_err();
        assert_eq!(e.message, format!("roots: {missing} is not a folder"));
    }
}
