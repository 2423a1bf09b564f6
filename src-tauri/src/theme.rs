//! The window's theme: the person's preference (system, light or dark, the `theme` setting),
//! the theme it comes to, and what views are told about it — `theme` and the spec's 76
//! standard style variables, in that theme's colours.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The setting (in the store) that holds the [`ThemePreference`].
pub const THEME_SETTING: &str = "theme";

/// What the person chose in the settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// A theme as shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
}

impl Theme {
    pub fn from_dark(dark: bool) -> Theme {
        if dark { Theme::Dark } else { Theme::Light }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
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

    /// The person chose `preference`; [`WindowTheme::known`] says what views are to be told.
    pub fn set_preference(&mut self, preference: ThemePreference) {
        self.preference = preference;
    }

    /// The system's theme is `system` now: the theme views are to be told when it changes what
    /// they show (only while the preference is "system"), else `None`.
    pub fn system_changed(&mut self, system: Theme) -> Option<Theme> {
        let before = self.known();
        self.system = Some(system);
        let after = self.preference.resolve(system);
        (self.preference == ThemePreference::System && before != Some(after)).then_some(after)
    }
}

/// The part of a view's host context that follows the theme: `theme` and `styles.variables`.
pub fn theme_context(theme: Theme) -> Value {
    json!({
        "theme": theme.as_str(),
        "styles": { "variables": style_variables(theme) },
    })
}

/// A tone of a colour role: (tone, light value, dark value).
type ColourTone = (&'static str, &'static str, &'static str);

/// The spec's 76 standard style variables in `theme`'s colours, matching Porthole's own look.
pub fn style_variables(theme: Theme) -> Value {
    let mut vars = serde_json::Map::new();
    let mut put = |k: String, v: &str| {
        vars.insert(k, Value::String(v.to_string()));
    };
    let dark = theme == Theme::Dark;
    let roles: [(&str, [ColourTone; 10]); 3] = [
        (
            "background",
            [
                ("primary", "#ffffff", "#1c1d21"),
                ("secondary", "#f5f6f8", "#25262b"),
                ("tertiary", "#eceef2", "#2d2f35"),
                ("inverse", "#1c1d21", "#f5f6f8"),
                ("ghost", "transparent", "transparent"),
                ("info", "#e8f0fe", "#1d2b45"),
                ("danger", "#fdecec", "#46201f"),
                ("success", "#e7f6ec", "#1b3a26"),
                ("warning", "#fff6e0", "#43361a"),
                ("disabled", "#f0f1f3", "#2a2b30"),
            ],
        ),
        (
            "text",
            [
                ("primary", "#1c1d21", "#ececf1"),
                ("secondary", "#555a64", "#b4b7c0"),
                ("tertiary", "#6b707a", "#8d919b"),
                ("inverse", "#ffffff", "#1c1d21"),
                ("info", "#1a56c4", "#8ab4f8"),
                ("danger", "#b42318", "#f28b82"),
                ("success", "#1e7a3c", "#81c995"),
                ("warning", "#8a5a00", "#fdd663"),
                ("disabled", "#a0a4ab", "#6b6f78"),
                ("ghost", "#6b707a", "#8d919b"),
            ],
        ),
        (
            "border",
            [
                ("primary", "#d5d8de", "#3a3d44"),
                ("secondary", "#e4e6ea", "#30333a"),
                ("tertiary", "#eceef2", "#2a2c31"),
                ("inverse", "#1c1d21", "#f5f6f8"),
                ("ghost", "transparent", "transparent"),
                ("info", "#9bb9f0", "#3b5a8f"),
                ("danger", "#f3b1ab", "#7a3a36"),
                ("success", "#a6d9b6", "#3a6b48"),
                ("warning", "#f0d28a", "#7a6430"),
                ("disabled", "#e4e6ea", "#30333a"),
            ],
        ),
    ];
    for (role, tones) in roles {
        for (tone, light_value, dark_value) in tones {
            put(
                format!("--color-{role}-{tone}"),
                if dark { dark_value } else { light_value },
            );
        }
    }
    for (tone, light_value, dark_value) in [
        ("primary", "#1a56c4", "#8ab4f8"),
        ("secondary", "#6b707a", "#8d919b"),
        ("inverse", "#ffffff", "#1c1d21"),
        ("info", "#1a56c4", "#8ab4f8"),
        ("danger", "#b42318", "#f28b82"),
        ("success", "#1e7a3c", "#81c995"),
        ("warning", "#8a5a00", "#fdd663"),
    ] {
        put(
            format!("--color-ring-{tone}"),
            if dark { dark_value } else { light_value },
        );
    }
    put(
        "--font-sans".into(),
        "system-ui, -apple-system, 'Segoe UI', Cantarell, sans-serif",
    );
    put(
        "--font-mono".into(),
        "ui-monospace, 'DejaVu Sans Mono', Menlo, monospace",
    );
    for (k, v) in [
        ("normal", "400"),
        ("medium", "500"),
        ("semibold", "600"),
        ("bold", "700"),
    ] {
        put(format!("--font-weight-{k}"), v);
    }
    for (k, size, line) in [("xs", 11, 16), ("sm", 13, 18), ("md", 14, 20), ("lg", 16, 24)] {
        put(format!("--font-text-{k}-size"), &format!("{size}px"));
        put(format!("--font-text-{k}-line-height"), &format!("{line}px"));
    }
    for (k, size, line) in [
        ("xs", 12, 16),
        ("sm", 14, 20),
        ("md", 16, 22),
        ("lg", 18, 24),
        ("xl", 22, 28),
        ("2xl", 26, 32),
        ("3xl", 32, 38),
    ] {
        put(format!("--font-heading-{k}-size"), &format!("{size}px"));
        put(format!("--font-heading-{k}-line-height"), &format!("{line}px"));
    }
    for (k, v) in [
        ("xs", "2px"),
        ("sm", "4px"),
        ("md", "8px"),
        ("lg", "12px"),
        ("xl", "16px"),
        ("full", "9999px"),
    ] {
        put(format!("--border-radius-{k}"), v);
    }
    put("--border-width-regular".into(), "1px");
    // Shadows are darker on a dark background, or they would not show.
    let shadow_alpha: [f32; 4] = if dark {
        [0.4, 0.4, 0.5, 0.6]
    } else {
        [0.06, 0.08, 0.12, 0.16]
    };
    for ((k, geometry), alpha) in [
        ("hairline", "0 0 0 1px"),
        ("sm", "0 1px 2px"),
        ("md", "0 2px 8px"),
        ("lg", "0 8px 24px"),
    ]
    .into_iter()
    .zip(shadow_alpha)
    {
        put(format!("--shadow-{k}"), &format!("{geometry} rgb(0 0 0 / {alpha})"));
    }
    Value::Object(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn style_variables_are_the_76_standard_keys_in_each_theme() {
        let light = style_variables(Theme::Light);
        let dark = style_variables(Theme::Dark);
        for vars in [&light, &dark] {
            let vars = vars.as_object().unwrap();
            assert_eq!(vars.len(), 76);
            assert!(vars.keys().all(|k| k.starts_with("--")));
            for key in [
                "--color-ring-warning",
                "--font-heading-3xl-line-height",
                "--shadow-hairline",
                "--border-radius-full",
            ] {
                assert!(vars.get(key).is_some(), "{key}");
            }
        }
        assert_eq!(light["--color-background-primary"], "#ffffff");
        assert_eq!(dark["--color-background-primary"], "#1c1d21");
        assert_eq!(light["--color-text-primary"], "#1c1d21");
        assert_eq!(dark["--color-text-primary"], "#ececf1");
        assert_eq!(
            light["--font-sans"], dark["--font-sans"],
            "only colours and shadows differ"
        );
    }

    /// WCAG contrast of two `#rrggbb` colours.
    fn contrast(a: &str, b: &str) -> f64 {
        let luminance = |hex: &str| {
            let channel = |i: usize| {
                let c = u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap() as f64 / 255.0;
                if c <= 0.03928 {
                    c / 12.92
                } else {
                    ((c + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2)
        };
        let (la, lb) = (luminance(a), luminance(b));
        (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
    }

    #[test]
    fn text_colours_are_readable_on_the_primary_and_secondary_backgrounds() {
        for theme in [Theme::Light, Theme::Dark] {
            let vars = style_variables(theme);
            let colour = |k: &str| vars[k].as_str().unwrap().to_string();
            for background in ["--color-background-primary", "--color-background-secondary"] {
                for text in [
                    "--color-text-primary",
                    "--color-text-secondary",
                    "--color-text-tertiary",
                    "--color-text-info",
                    "--color-text-danger",
                    "--color-text-success",
                    "--color-text-warning",
                ] {
                    let ratio = contrast(&colour(text), &colour(background));
                    assert!(ratio >= 4.5, "{theme:?}: {text} on {background} is {ratio:.2}:1");
                }
            }
            for tone in ["info", "danger", "success", "warning"] {
                let text = colour(&format!("--color-text-{tone}"));
                let background = colour(&format!("--color-background-{tone}"));
                let ratio = contrast(&text, &background);
                assert!(ratio >= 4.5, "{theme:?}: {tone} text on its background is {ratio:.2}:1");
            }
        }
    }

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
        // Back to "system": the system's latest theme counts.
        theme.set_preference(ThemePreference::System);
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
