//! The window's theme: the person's preference (system, light or dark, the `theme` setting)
//! and the theme it comes to. What views are told about a theme (its 76 standard style
//! variables) is `porthole_apps::theme`.

use std::fmt;
use std::str::FromStr;

use porthole_apps::theme::Theme;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// The setting (in the store) that holds the [`ThemePreference`].
pub const THEME_SETTING: &str = "theme";

/// What the person chose in the settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ThemePreference {
    /// Follow the system's light or dark appearance.
    #[default]
    System,
    Light,
    Dark,
}

impl ThemePreference {
    pub fn as_str(self) -> &'static str {
        match self {
            ThemePreference::System => "system",
            ThemePreference::Light => "light",
            ThemePreference::Dark => "dark",
        }
    }

    /// The theme this preference comes to while the system's is `system`.
    pub fn resolve(self, system: Theme) -> Theme {
        match self {
            ThemePreference::System => system,
            ThemePreference::Light => Theme::Light,
            ThemePreference::Dark => Theme::Dark,
        }
    }

    /// The theme the person chose, when it is not the system's.
    pub fn explicit(self) -> Option<Theme> {
        match self {
            ThemePreference::System => None,
            ThemePreference::Light => Some(Theme::Light),
            ThemePreference::Dark => Some(Theme::Dark),
        }
    }

    /// The stored setting's preference; a missing or unreadable one is "system".
    pub fn from_setting(value: Option<&Value>) -> ThemePreference {
        value
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .unwrap_or_default()
    }
}

impl fmt::Display for ThemePreference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ThemePreference {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "system" => Ok(ThemePreference::System),
            "light" => Ok(ThemePreference::Light),
            "dark" => Ok(ThemePreference::Dark),
            other => Err(format!("the theme must be system, light or dark, not {other:?}")),
        }
    }
}

/// The preference and the system's theme as far as it is known: which theme views get, and
/// when a change has to reach them.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowTheme {
    preference: ThemePreference,
    /// `None` until the window or the page said.
    system: Option<Theme>,
}

impl WindowTheme {
    /// Starts from the stored preference; the system's theme is not known yet.
    pub fn new(preference: ThemePreference) -> WindowTheme {
        WindowTheme {
            preference,
            system: None,
        }
    }

    /// The theme shown, when it is known without asking the window for the system's.
    pub fn known(&self) -> Option<Theme> {
        match self.preference {
            ThemePreference::System => self.system,
            explicit => Some(explicit.resolve(Theme::Light)),
        }
    }

    /// What the person chose.
    pub fn preference(&self) -> ThemePreference {
        self.preference
    }

    /// The person chose `preference`; [`WindowTheme::known`] says what views are to be told.
    pub fn set_preference(&mut self, preference: ThemePreference) {
        self.preference = preference;
    }

    /// The system's theme is `system` now: the theme views are to be told when it changes what
    /// they show (only while the preference is "system"), else `None`.
    pub fn system_changed(&mut self, system: Theme) -> Option<Theme> {
        if self.preference != ThemePreference::System {
            // The windows are made to appear in the chosen theme, so what they report now is
            // that choice, not the system's: the system's is asked again once it counts.
            self.system = None;
            return None;
        }
        let before = self.known();
        self.system = Some(system);
        let after = self.preference.resolve(system);
        (self.preference == ThemePreference::System && before != Some(after)).then_some(after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_preference_reads_and_resolves() {
        assert_eq!("dark".parse::<ThemePreference>(), Ok(ThemePreference::Dark));
        let refused = "blue".parse::<ThemePreference>().unwrap_err();
        assert!(refused.contains("system, light or dark"), "{refused}");
        assert_eq!(ThemePreference::from_setting(None), ThemePreference::System);
        assert_eq!(
            ThemePreference::from_setting(Some(&json!("light"))),
            ThemePreference::Light
        );
        assert_eq!(ThemePreference::from_setting(Some(&json!(3))), ThemePreference::System);
        assert_eq!(ThemePreference::System.resolve(Theme::Dark), Theme::Dark);
        assert_eq!(ThemePreference::Light.resolve(Theme::Dark), Theme::Light);
        assert_eq!(serde_json::to_value(ThemePreference::Dark).unwrap(), json!("dark"));
    }

    #[test]
    fn an_explicit_theme_is_not_overridden_by_the_system() {
        let mut theme = WindowTheme::default();
        assert_eq!(theme.known(), None, "the system's theme is not known yet");
        theme.set_preference(ThemePreference::Dark);
        assert_eq!(theme.known(), Some(Theme::Dark));
        assert_eq!(theme.system_changed(Theme::Light), None);
        assert_eq!(theme.system_changed(Theme::Dark), None);
        assert_eq!(theme.system_changed(Theme::Light), None);
        assert_eq!(theme.known(), Some(Theme::Dark));
        // Back to "system": what the windows said meanwhile was the chosen theme, not the
        // system's, so the system's is not known until it is asked or said again.
        theme.set_preference(ThemePreference::System);
        assert_eq!(theme.known(), None);
        assert_eq!(theme.system_changed(Theme::Light), Some(Theme::Light));
        assert_eq!(theme.known(), Some(Theme::Light));
    }

    #[test]
    fn following_the_system_tells_views_only_about_real_changes() {
        let mut theme = WindowTheme::default();
        assert_eq!(theme.system_changed(Theme::Light), Some(Theme::Light), "first news");
        assert_eq!(theme.system_changed(Theme::Light), None, "nothing changed");
        assert_eq!(theme.system_changed(Theme::Dark), Some(Theme::Dark));
        assert_eq!(theme.known(), Some(Theme::Dark));
        theme.set_preference(ThemePreference::Light);
        assert_eq!(theme.known(), Some(Theme::Light));
    }
}
