//! Credentials taken out of text before it is logged, shown or stored: the user info of a URL
//! (`https://user:pass@host`), query and fragment parameters named like a credential
//! (`?token=…`, `&X-Amz-Signature=…`, `#access_token=…`), and the values of header-like or
//! field-like pairs with such a name (`Authorization: Bearer …`, `"x-api-key": "…"`,
//! `api_key=…`). What is taken out becomes [`REDACTED`]; everything else stays, so an endpoint
//! shown as `https://host/mcp?token=[redacted]` still says where it points.
//!
//! [`url`] is for a string known to be a URL (an endpoint on a card, a request's target);
//! [`text`] is for free text that may contain URLs and headers anywhere: error messages (an
//! HTTP client's errors name the URL they failed on), stored errors, and every log line (the
//! log writer passes each line through it).

use std::borrow::Cow;

/// What a credential is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Name parts that mean "this carries a credential" wherever they appear in a name, whole
/// (`key`, `x-api-key`, `sessionToken`) or as the end of a part (`apikey`, `clientsecret`).
const SECRET_ENDINGS: &[&str] = &[
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "signature",
    "credential",
    "credentials",
    "cookie",
];

/// Name parts that mean a credential only as a whole part (`sig`, but not `config`).
const SECRET_PARTS: &[&str] = &[
    "pwd",
    "pass",
    "sig",
    "auth",
    "authorization",
    "jwt",
    "bearer",
    "session",
    "sessionid",
];

/// Whether a query parameter, header or field called `name` carries a credential:
/// case-insensitive, by its parts (split at `-`, `_`, `.`, spaces and camelCase humps), so
/// `token`, `access_token`, `accessToken`, `api_key`, `apikey`, `x-api-key`, `X-Amz-Signature`,
/// `sig`, `client_secret`, `password` and `Authorization` all do, and `max_tokens`, `keyword`,
/// `author` or `page` do not.
pub fn is_sensitive_name(name: &str) -> bool {
    name_parts(name)
        .iter()
        .any(|part| SECRET_PARTS.contains(&part.as_str()) || SECRET_ENDINGS.iter().any(|ending| part.ends_with(ending)))
}

/// A name's parts, lower case: split at non-alphanumerics and where a lower-case letter or
/// digit is followed by an upper-case one.
fn name_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Whether a URL's query or fragment parameter called `name` carries a credential: a
/// [sensitive name](is_sensitive_name), or an OAuth redirect's `code`.
fn is_sensitive_parameter(name: &str) -> bool {
    is_sensitive_name(name) || name.eq_ignore_ascii_case("code")
}

/// `url` with its user info and every credential-named query or fragment parameter's value
/// replaced by [`REDACTED`]: `https://u:p@host/mcp?token=abc&x=1` →
/// `https://[redacted]@host/mcp?token=[redacted]&x=1`. Anything after the URL (it need not be a
/// valid one) is treated as part of it.
pub fn url(url: &str) -> String {
    match url.find("://") {
        Some(at) => {
            let (scheme, rest) = url.split_at(at + 3);
            let mut out = String::with_capacity(url.len());
            out.push_str(scheme);
            redact_after_scheme(rest, &mut out);
            out
        }
        None => {
            let mut out = String::with_capacity(url.len());
            redact_path_query_fragment(url, &mut out);
            out
        }
    }
}

/// `rest` = what follows `scheme://`.
fn redact_after_scheme(rest: &str, out: &mut String) {
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(REDACTED);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    redact_path_query_fragment(tail, out);
}

/// The path is kept; the query's and fragment's credential-named parameters are redacted.
fn redact_path_query_fragment(tail: &str, out: &mut String) {
    let (before_fragment, fragment) = match tail.find('#') {
        Some(at) => (&tail[..at], Some(&tail[at + 1..])),
        None => (tail, None),
    };
    match before_fragment.find('?') {
        Some(at) => {
            out.push_str(&before_fragment[..=at]);
            redact_parameters(&before_fragment[at + 1..], out);
        }
        None => out.push_str(before_fragment),
    }
    if let Some(fragment) = fragment {
        out.push('#');
        redact_parameters(fragment, out);
    }
}

/// `a=1&token=x;sig=y` → `a=1&token=[redacted];sig=[redacted]`.
fn redact_parameters(parameters: &str, out: &mut String) {
    let mut rest = parameters;
    loop {
        let end = rest.find(['&', ';']).unwrap_or(rest.len());
        let pair = &rest[..end];
        match pair.split_once('=') {
            Some((name, _)) if is_sensitive_parameter(&percent_decoded(name)) => {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(pair),
        }
        if end == rest.len() {
            break;
        }
        out.push_str(&rest[end..=end]);
        rest = &rest[end + 1..];
    }
}

/// `%5F` → `_`, `+` → space, as far as it decodes (names only; enough to recognise them).
fn percent_decoded(name: &str) -> Cow<'_, str> {
    if !name.contains(['%', '+']) {
        return Cow::Borrowed(name);
    }
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = name.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                decoded.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
            (b'+', _, _) => decoded.push(b' '),
            (b, _, _) => decoded.push(b),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&decoded).into_owned())
}

/// Characters that end a URL inside free text: whitespace, quotes, angle brackets, a closing
/// parenthesis, and the backslash of an escaped quote.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | ')' | '\\')
}

/// Characters that end an unquoted value in free text (`token=abc, next`).
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ';' | '&' | '}' | ')' | ']' | '\\')
}

/// `text` with every credential in it replaced by [`REDACTED`]: the user info and
/// credential-named parameters of each URL in it (anything of the form `scheme://…`), the token
/// after `Bearer`, and the value of each `name=value`, `name: value` or `"name": "value"` whose
/// name [is sensitive](is_sensitive_name). Text with nothing to redact comes back borrowed.
pub fn text(text: &str) -> Cow<'_, str> {
    let urls = redact_urls(text);
    let pairs = match redact_pairs(&urls) {
        Cow::Borrowed(_) => urls,
        Cow::Owned(s) => Cow::Owned(s),
    };
    match redact_bearer(&pairs) {
        Cow::Borrowed(_) => pairs,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// Every `scheme://…` in `text`, through [`url`].
fn redact_urls(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        redact_after_scheme(&after[..end], &mut out);
        rest = &after[end..];
    }
    out.push_str(rest);
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// `Bearer abc` → `Bearer [redacted]` (any case).
fn redact_bearer(text: &str) -> Cow<'_, str> {
    const WORD: &str = "bearer ";
    let lower = text.to_ascii_lowercase();
    if !lower.contains(WORD) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find(WORD) {
        let start = search + found + WORD.len();
        let value_start = start + text[start..].len() - text[start..].trim_start_matches(' ').len();
        let value_end = text[value_start..]
            .find(ends_value)
            .map_or(text.len(), |e| value_start + e);
        search = value_end.max(start);
        if value_end == value_start || text[value_start..].starts_with(REDACTED) {
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(REDACTED);
        copied = value_end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The value of each `name=value`, `name: value`, `"name": "value"` pair whose name is
/// sensitive. An unquoted value that is one short word followed by a space and more (a scheme,
/// as in `Authorization: Basic dXNlcg==`) is redacted with its next word.
fn redact_pairs(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let is_name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_name_byte(bytes[i]) || (i > 0 && is_name_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let name_end = (i..bytes.len())
            .find(|&j| !is_name_byte(bytes[j]))
            .unwrap_or(bytes.len());
        let name = &text[i..name_end];
        let mut j = name_end;
        // `"name": …` in JSON or Debug output: step over the name's closing quote.
        if bytes.get(j) == Some(&b'"') && i > 0 && bytes[i - 1] == b'"' {
            j += 1;
        }
        j = skip_spaces_and_colours(bytes, j);
        if !matches!(bytes.get(j), Some(b'=' | b':')) || !is_sensitive_name(name) {
            i = name_end;
            continue;
        }
        j = skip_spaces_and_colours(bytes, j + 1);
        // A Rust `Debug` value such as `String("…")`: the quoted part is the value.
        let wrapper = bytes[j..].iter().take_while(|b| b.is_ascii_alphabetic()).count();
        if wrapper > 0 && bytes[j + wrapper..].starts_with(b"(\"") {
            j += wrapper + 1;
        }
        let (value_start, value_end) = if bytes.get(j) == Some(&b'"') {
            let start = j + 1;
            let mut k = start;
            while k < bytes.len() && bytes[k] != b'"' {
                k += if bytes[k] == b'\\' { 2 } else { 1 };
            }
            (start, k.min(bytes.len()))
        } else {
            let start = j;
            let mut end = text[start..].find(ends_value).map_or(text.len(), |e| start + e);
            let word = &text[start..end];
            let scheme_like = !word.is_empty() && word.len() <= 10 && word.bytes().all(|b| b.is_ascii_alphabetic());
            if scheme_like
                && bytes.get(end) == Some(&b' ')
                && bytes.get(end + 1).is_some_and(|b| !b.is_ascii_whitespace())
            {
                end = text[end + 1..].find(ends_value).map_or(text.len(), |e| end + 1 + e);
            }
            (start, end)
        };
        let value = &text[value_start..value_end];
        if !value.is_empty() && !text[value_start..].starts_with(REDACTED) {
            out.push_str(&text[copied..value_start]);
            out.push_str(REDACTED);
            copied = value_end;
        }
        i = value_end.max(name_end);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The index of the first byte from `at` that is neither a space nor part of a terminal colour
/// sequence (`ESC [ … m`, as in a coloured log line's `name=value`).
fn skip_spaces_and_colours(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match bytes.get(at) {
            Some(b' ') => at += 1,
            Some(0x1b) if bytes.get(at + 1) == Some(&b'[') => {
                let length = bytes[at + 2..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || **b == b';')
                    .count();
                if bytes.get(at + 2 + length) != Some(&b'm') {
                    return at;
                }
                at += length + 3;
            }
            _ => return at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_carry_credentials() {
        for name in [
            "token",
            "TOKEN",
            "access_token",
            "accessToken",
            "refresh-token",
            "id_token",
            "api_key",
            "apikey",
            "apiKey",
            "API-KEY",
            "x-api-key",
            "X-Goog-Api-Key",
            "key",
            "secret",
            "client_secret",
            "password",
            "passwd",
            "pwd",
            "sig",
            "signature",
            "X-Amz-Signature",
            "X-Amz-Credential",
            "auth",
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "session",
            "subscription-key",
        ] {
            assert!(is_sensitive_name(name), "{name} carries a credential");
        }
        for name in [
            "max_tokens",
            "tokens",
            "keyword",
            "keys",
            "author",
            "page",
            "model",
            "url",
            "city",
            "design",
            "signal",
            "config",
        ] {
            assert!(!is_sensitive_name(name), "{name} is not a credential");
        }
    }

    #[test]
    fn a_urls_user_info_and_credential_parameters_are_redacted() {
        assert_eq!(
            url("https://user:pa55@host.example:8443/v1"),
            "https://[redacted]@host.example:8443/v1"
        );
        assert_eq!(url("https://tok3n@github.com/x"), "https://[redacted]@github.com/x");
        assert_eq!(url("https://host/mcp?token=abc"), "https://host/mcp?token=[redacted]");
        assert_eq!(
            url("https://host/mcp?a=1&ACCESS_TOKEN=abc&b=2;sig=zz&x-api-key=k#frag"),
            "https://host/mcp?a=1&ACCESS_TOKEN=[redacted]&b=2;sig=[redacted]&x-api-key=[redacted]#frag"
        );
        assert_eq!(
            url("https://host/cb#access_token=abc&state=s"),
            "https://host/cb#access_token=[redacted]&state=s"
        );
        assert_eq!(
            url("https://host/cb?code=abc&state=s"),
            "https://host/cb?code=[redacted]&state=s"
        );
        assert_eq!(
            url("https://host/s?api%5Fkey=abc"),
            "https://host/s?api%5Fkey=[redacted]"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1?api_key=QK/chat/completions"),
            "http://127.0.0.1:9/v1?api_key=[redacted]"
        );
        // Nothing to hide: unchanged (an `@` in the path is not user info).
        for plain in [
            "https://host/mcp",
            "https://host/users/@me?page=2&q=key",
            "http://[::1]:8080/v1",
            "not a url",
        ] {
            assert_eq!(url(plain), plain);
        }
    }

    #[test]
    fn urls_in_free_text_are_redacted_where_they_stand() {
        let error = r#"Client(reqwest::Error { kind: Request, url: "http://u:p@127.0.0.1:9/mcp?access_token=T0K&x=1", source: Connect })"#;
        assert_eq!(
            text(error),
            r#"Client(reqwest::Error { kind: Request, url: "http://[redacted]@127.0.0.1:9/mcp?access_token=[redacted]&x=1", source: Connect })"#
        );
        assert_eq!(
            text("error sending request for url (https://h/v1?key=K1/models): refused"),
            "error sending request for url (https://h/v1?key=[redacted]): refused"
        );
        assert_eq!(
            text("model API request url=https://h/v1?sig=S attempt=1"),
            "model API request url=https://h/v1?sig=[redacted] attempt=1"
        );
    }

    #[test]
    fn headers_and_fields_named_like_credentials_are_redacted() {
        assert_eq!(text("Authorization: Bearer abc.def-ghi"), "Authorization: [redacted]");
        assert_eq!(text("authorization: Basic dXNlcjpwYXNz"), "authorization: [redacted]");
        assert_eq!(
            text(r#"{"authorization": "Bearer sk-1", "x-api-key": "k2", "accept": "text/event-stream"}"#),
            r#"{"authorization": "[redacted]", "x-api-key": "[redacted]", "accept": "text/event-stream"}"#
        );
        assert_eq!(
            text("connecting api_key=k3 password=\"p4\" tools=9"),
            "connecting api_key=[redacted] password=\"[redacted]\" tools=9"
        );
        assert_eq!(
            text(r#"Object {"api_key": String("k5"), "city": String("Bergen")}"#),
            r#"Object {"api_key": String("[redacted]"), "city": String("Bergen")}"#
        );
        assert_eq!(
            text("\x1b[3mapi_key\x1b[0m\x1b[2m=\x1b[0mk6 \x1b[3mtools\x1b[0m\x1b[2m=\x1b[0m9"),
            "\x1b[3mapi_key\x1b[0m\x1b[2m=\x1b[0m[redacted] \x1b[3mtools\x1b[0m\x1b[2m=\x1b[0m9"
        );
        assert_eq!(text("sent with bearer t0k, then"), "sent with bearer [redacted], then");
        assert_eq!(text(r#"MY_SECRET: "s \" 5""#), r#"MY_SECRET: "[redacted]""#);
    }

    #[test]
    fn ordinary_text_is_left_alone_and_borrowed() {
        for plain in [
            "connected server=stdio tools=9",
            "the reply used max_tokens=1024 and 300 tokens",
            "the base URL must not carry a user name or password; save the API key instead",
            "no API key for openai: set OPENAI_API_KEY",
            "https://host/mcp?page=2",
            "already redacted: https://host/mcp?token=[redacted] Authorization: [redacted]",
        ] {
            assert!(matches!(text(plain), Cow::Borrowed(_)), "{plain} → {}", text(plain));
        }
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let once = text("GET https://u:p@h/x?token=t&key=k Authorization: Bearer b api_key=\"c\"").into_owned();
        assert!(
            !once.contains("u:p") && !once.contains("=t") && !once.contains(" b") && !once.contains("\"c\""),
            "{once}"
        );
        assert_eq!(text(&once), once);
    }
}
