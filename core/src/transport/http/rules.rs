//! The strict request rules of the HTTP server transport: a `Host` header or request authority
//! split into host and port (RFC 9110 §7.2, RFC 3986 §3.2.2), and the `Content-Type` media type
//! (RFC 9110 §8.3.1).

use std::net::Ipv6Addr;

/// The host and port of a `Host` header or request authority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority<'a> {
    /// The host: a name or IPv4 address as written, or an IPv6 address without its brackets.
    pub host: &'a str,
    /// The port, when one is given.
    pub port: Option<u16>,
}

/// Parses `host [":" port]` strictly: a bracketed IPv6 literal must be a valid address, closed,
/// and followed by nothing or `:port`; a port is 1 to 5 digits up to 65535 (an empty port, as
/// in `localhost:`, is refused); a name holds letters, digits, `-`, `.`, `_` and `~` only (no
/// user info, no percent-encoding). `None` when the text is not such an authority.
pub(crate) fn parse_authority(text: &str) -> Option<Authority<'_>> {
    let (host, rest) = match text.strip_prefix('[') {
        Some(inner) => {
            let (literal, rest) = inner.split_once(']')?;
            literal.parse::<Ipv6Addr>().ok()?;
            (literal, rest)
        }
        None => {
            let end = text.find(':').unwrap_or(text.len());
            let (host, rest) = text.split_at(end);
            let name_ok = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
            if !name_ok {
                return None;
            }
            (host, rest)
        }
    };
    let port = match rest {
        "" => None,
        _ => {
            let digits = rest.strip_prefix(':')?;
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse::<u16>().ok()?)
        }
    };
    Some(Authority { host, port })
}

/// Why a `Content-Type` is not a JSON-RPC body's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContentTypeError {
    /// Not the media type `application/json` (e.g. `text/plain`, `application/jsonp`).
    NotJson,
    /// `application/json` with a parameter that is not `name=value` (token or quoted string).
    Malformed,
    /// `application/json` with a `charset` other than UTF-8 (RFC 8259 §8.1: JSON is UTF-8).
    Charset(String),
}

/// Checks a `Content-Type` value as a media type: the type and subtype must be
/// `application/json` (compared case-insensitively, around optional whitespace), then each
/// parameter must be well formed; a `charset`, if given, must be `utf-8`. Other parameters
/// are ignored. `application/json; charset=utf-8` is JSON; `application/jsonp` and
/// `application/json-seq` are not.
pub(crate) fn check_json_content_type(value: &str) -> Result<(), ContentTypeError> {
    let (media, mut params) = value.split_once(';').unwrap_or((value, ""));
    if !media.trim_matches([' ', '\t']).eq_ignore_ascii_case("application/json") {
        return Err(ContentTypeError::NotJson);
    }
    // parameters = *( OWS ";" OWS [ parameter ] ); parameter = token "=" ( token / quoted-string )
    while !params.is_empty() {
        let rest = params.trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with(';') {
            params = rest.strip_prefix(';').unwrap_or(rest);
            continue;
        }
        let (name, after) = rest.split_once('=').ok_or(ContentTypeError::Malformed)?;
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(ContentTypeError::Malformed);
        }
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => quoted_string(quoted).ok_or(ContentTypeError::Malformed)?,
            None => {
                let end = after.find([';', ' ', '\t']).unwrap_or(after.len());
                let (token, after) = after.split_at(end);
                if token.is_empty() || !token.bytes().all(is_tchar) {
                    return Err(ContentTypeError::Malformed);
                }
                (token.to_owned(), after)
            }
        };
        if name.eq_ignore_ascii_case("charset") && !value.eq_ignore_ascii_case("utf-8") {
            return Err(ContentTypeError::Charset(value));
        }
        let after = after.trim_start_matches([' ', '\t']);
        params = match after.strip_prefix(';') {
            Some(next) => next,
            None if after.is_empty() => after,
            None => return Err(ContentTypeError::Malformed),
        };
    }
    Ok(())
}

/// The unescaped content of a quoted string whose opening quote is already consumed, and what
/// follows its closing quote.
fn quoted_string(text: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &text[i + 1..])),
            '\\' => out.push(chars.next()?.1),
            c if c == '\t' || (' '..='~').contains(&c) => out.push(c),
            _ => return None,
        }
    }
    None
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(text: &str) -> Option<(&str, Option<u16>)> {
        parse_authority(text).map(|a| (a.host, a.port))
    }

    #[test]
    fn authorities_parse_strictly() {
        assert_eq!(hp("[::1]:8080"), Some(("::1", Some(8080))));
        assert_eq!(hp("[::1]"), Some(("::1", None)));
        assert_eq!(hp("[2001:db8::7]:443"), Some(("2001:db8::7", Some(443))));
        assert_eq!(hp("localhost"), Some(("localhost", None)));
        assert_eq!(hp("127.0.0.1:3000"), Some(("127.0.0.1", Some(3000))));
        assert_eq!(hp("app.example.com:65535"), Some(("app.example.com", Some(65535))));
        for bad in [
            "[::1",
            "[::1]x",
            "[::1]:",
            "[::1]:99999",
            "[::1]:8080x",
            "[not-v6]",
            "[]",
            "[::1]]",
            "::1",
            "::1:8080",
            "localhost:",
            "localhost:80:80",
            "localhost:+80",
            "localhost:123456",
            "",
            ":80",
            "user@localhost",
            "local host",
            "evil.com%2F",
            "a/b",
            "localhost\0",
        ] {
            assert_eq!(hp(bad), None, "{bad:?} must not parse");
        }
    }

    #[test]
    fn content_type_is_matched_as_a_media_type() {
        for ok in [
            "application/json",
            "Application/JSON",
            " application/json ",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
            "application/json; charset=\"utf-8\"",
            "application/json;",
            "application/json; ; charset=utf-8",
            "application/json; profile=\"a;b\"; charset=utf-8",
            "application/json; v=1 ",
        ] {
            assert_eq!(check_json_content_type(ok), Ok(()), "{ok:?}");
        }
        for not_json in [
            "application/jsonp",
            "application/json-seq",
            "application/json5",
            "text/json",
            "application/*",
            "",
            "application/ json",
            "application/vnd.api+json",
        ] {
            assert_eq!(check_json_content_type(not_json), Err(ContentTypeError::NotJson), "{not_json:?}");
        }
        for malformed in [
            "application/json; charset",
            "application/json; =utf-8",
            "application/json; charset=",
            "application/json; a=\"open",
            "application/json; a=b c",
            "application/json; a b=c",
        ] {
            assert_eq!(check_json_content_type(malformed), Err(ContentTypeError::Malformed), "{malformed:?}");
        }
        assert_eq!(
            check_json_content_type("application/json; charset=latin1"),
            Err(ContentTypeError::Charset("latin1".into()))
        );
        assert_eq!(
            check_json_content_type("application/json; charset=\"utf-16\""),
            Err(ContentTypeError::Charset("utf-16".into()))
        );
    }
}
