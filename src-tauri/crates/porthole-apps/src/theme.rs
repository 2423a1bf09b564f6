//! What views are told about the theme the window shows: `theme` and the spec's 76 standard
//! style variables (`styles.variables`), in that theme's colours. Which theme is shown (the
//! person's setting, the system's appearance) is the app's business.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A theme as shown: what a view's `hostContext.theme` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    Light,
    Dark,
}

impl Theme {
    /// The theme for a dark (`true`) or light appearance.
    pub fn from_dark(dark: bool) -> Theme {
        if dark { Theme::Dark } else { Theme::Light }
    }

    /// The spec's name for the theme: `"light"` or `"dark"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

impl fmt::Display for Theme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The part of a view's host context that follows the theme: `theme` and `styles.variables`.
pub fn theme_context(theme: Theme) -> Value {
    json!({
        "theme": theme.as_str(),
        "styles": { "variables": style_variables(theme), "css": { "fonts": HOST_FONTS } },
    })
}

/// `styles.css.fonts`: the faces Porthole's own text uses, under the names `--font-sans` and
/// `--font-mono` start with, from the fonts installed (a view that applies these rules gets the
/// host's faces; one that does not falls back along the same stacks).
pub const HOST_FONTS: &str = "@font-face { font-family: \"Porthole Sans\"; src: local(\"Cantarell\"), \
local(\"Noto Sans\"), local(\"Segoe UI\"), local(\"SF Pro Text\"), local(\"DejaVu Sans\"); }\n\
@font-face { font-family: \"Porthole Mono\"; src: local(\"DejaVu Sans Mono\"), local(\"Noto Sans Mono\"), \
local(\"Menlo\"), local(\"Consolas\"); }";

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
        "'Porthole Sans', system-ui, -apple-system, 'Segoe UI', Cantarell, sans-serif",
    );
    put(
        "--font-mono".into(),
        "'Porthole Mono', ui-monospace, 'DejaVu Sans Mono', Menlo, monospace",
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
    fn the_theme_context_is_the_theme_and_its_variables() {
        assert_eq!(Theme::from_dark(true), Theme::Dark);
        assert_eq!(Theme::from_dark(false), Theme::Light);
        assert_eq!(serde_json::to_value(Theme::Dark).unwrap(), json!("dark"));
        assert_eq!(serde_json::from_value::<Theme>(json!("light")).unwrap(), Theme::Light);
        assert!(serde_json::from_value::<Theme>(json!("system")).is_err());
        assert_eq!(Theme::Light.to_string(), "light");
        let context = theme_context(Theme::Dark);
        assert_eq!(context.as_object().unwrap().len(), 2, "{context}");
        assert_eq!(context["theme"], "dark");
        assert_eq!(
            context["styles"],
            json!({ "variables": style_variables(Theme::Dark), "css": { "fonts": HOST_FONTS } })
        );
        // The faces named first in the font stacks are the ones the rules define.
        assert!(HOST_FONTS.contains("font-family: \"Porthole Sans\""));
        assert!(HOST_FONTS.contains("font-family: \"Porthole Mono\""));
        let vars = style_variables(Theme::Dark);
        assert!(vars["--font-sans"].as_str().unwrap().starts_with("'Porthole Sans',"));
        assert!(vars["--font-mono"].as_str().unwrap().starts_with("'Porthole Mono',"));
        assert_ne!(style_variables(Theme::Dark), style_variables(Theme::Light));
    }
}
