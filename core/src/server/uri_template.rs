//! RFC 6570 URI templates (levels 1 to 4), as used by MCP resource templates
//! (`resources/templates/list`): parsing, expansion, and the server's question "does this
//! concrete URI of a `resources/read` match this template, and with which variables?".
//!
//! Expressions are [`iri_string::template`]'s: each `{…}` is valid when that crate accepts it,
//! and [`UriTemplate::expand`] expands each with it. What is ours is the matcher (the inverse of
//! expansion, which no crate offers), the structural reading of the template it needs (which
//! also says where a rejected template goes wrong), and literal text: RFC 6570 allows non-ASCII
//! characters there (`ucschar`), which the crate refuses, so literals are checked and copied here.
//!
//! Matching is the inverse of expansion, which is ambiguous in general, so it follows these
//! rules, chosen so that a URI a server hands out matches back to the same variables:
//!
//! - The whole URI must match; literals compare byte for byte.
//! - A simple `{var}` (and `{.var}`, `{/var}`, `{;var}`) value never contains a raw `/`, `?`,
//!   `#`, `[` or `]`; `{+var}` and `{#var}` may contain any reserved character. A value may
//!   contain a percent-encoded `%2F`, which decodes to `/`, except in `{+var}` and `{#var}`:
//!   these write reserved and unreserved characters raw, so such a triplet there is the
//!   value's own text (`%2C` stays `%2C`); other triplets (`%20`, UTF-8) are decoded. A split that expansion itself could
//!   have produced is preferred; failing that, a value may also hold the other characters
//!   RFC 3986 allows in a path segment (`notes(1).txt`) and raw non-ASCII text.
//! - `{var}` and `{+var}` must match at least one character; expressions with a leading
//!   operator character (`{/var}`, `{?var}`, …) may match nothing, leaving their variables out.
//! - Values are percent-decoded strings; text that is not UTF-8 once decoded does not match.
//!   An exploded variable (`{/path*}`, `{?tag*}`) becomes an array, or an object when its
//!   parts are `key=value` pairs (`{?params*}` meeting parameters the template does not name).
//! - Trailing `{?…}`/`{&…}` expressions form one query section whose parameters may come in
//!   any order and may be absent; a parameter the template does not name makes the URI not
//!   match, unless an exploded variable is there to collect it.
//! - A variable named by several expressions (`{x}/{x:3}`, `{/id}{?id}`) is defined in all of
//!   them or in none, with the same value in each (or, under a `:N` prefix modifier, the
//!   start of it): other splits are tried until one agrees.
//! - A URI longer than [`MAX_URI_LENGTH`] never matches, and the search gives up (no match)
//!   after a fixed amount of work, so adversarial input cannot make matching slow. A template
//!   that names one variable twice costs up to the cube of the URI's length (every value of the
//!   first occurrence starts the rest again; the square when that occurrence opens the
//!   template), so there URIs past about a hundred bytes may run out of that work and not match;
//!   other templates match URIs of kilobytes.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use iri_string::spec::UriSpec;
use iri_string::template::context::{AssocVisitor, ListVisitor, Visitor};
use iri_string::template::{Context, UriTemplateStr};
use serde_json::{Map, Value};

/// Longest URI that [`UriTemplate::match_uri`] considers (8 KiB); longer ones do not match.
pub const MAX_URI_LENGTH: usize = 8 * 1024;
/// Longest template that [`UriTemplate::parse`] accepts (8 KiB).
pub const MAX_TEMPLATE_LENGTH: usize = 8 * 1024;
/// Most `{…}` expressions in one template.
pub const MAX_EXPRESSIONS: usize = 128;
/// Units of work (bytes examined, split points tried) one match may spend before giving up.
const MATCH_BUDGET: usize = 1 << 18;

/// A template that is not valid RFC 6570: what is wrong and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    template: String,
    position: usize,
    message: String,
}

impl TemplateError {
    /// Byte offset in the template where the problem is.
    pub fn position(&self) -> usize {
        self.position
    }

    /// What is wrong, without the template and position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid URI template {:?} at byte {}: {}", self.template, self.position, self.message)
    }
}

impl std::error::Error for TemplateError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryContinuation,
}

impl Operator {
    /// The operator as written after `{` (empty for a simple expression).
    fn symbol(self) -> &'static str {
        match self {
            Operator::Simple => "",
            Operator::Reserved => "+",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParam => ";",
            Operator::Query => "?",
            Operator::QueryContinuation => "&",
        }
    }

    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// The character that starts a non-empty expansion.
    fn prefix(self) -> Option<char> {
        match self {
            Operator::Simple | Operator::Reserved => None,
            Operator::Fragment => Some('#'),
            Operator::Label => Some('.'),
            Operator::Path => Some('/'),
            Operator::PathParam => Some(';'),
            Operator::Query => Some('?'),
            Operator::QueryContinuation => Some('&'),
        }
    }

    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParam => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Operator::PathParam | Operator::Query | Operator::QueryContinuation)
    }

    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }

    /// Whether raw ASCII `b` (other than unreserved characters and `%XX`) may appear in the
    /// expression's match: `strict` for what expansion emits, otherwise the lenient set.
    fn allows(self, b: u8, strict: bool) -> bool {
        if self.allows_reserved() {
            return is_reserved(b);
        }
        let structural = match self {
            Operator::Path => b"/,=".as_slice(),
            Operator::PathParam => b";,=",
            Operator::Query | Operator::QueryContinuation => b"&,=",
            _ => b",=",
        };
        if structural.contains(&b) {
            return true;
        }
        if strict {
            return false;
        }
        let extra: &[u8] = match self {
            Operator::Path => b"/",
            Operator::Query | Operator::QueryContinuation => b"/?",
            _ => b"",
        };
        is_pchar_delim(b) || extra.contains(&b)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    Prefix(usize),
    Explode,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    modifier: Modifier,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    operator: Operator,
    vars: Vec<VarSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(Expression),
    /// The trailing `{?…}{&…}` expressions, matched as one order-free set of parameters.
    Query(Vec<Expression>),
}

/// A parsed RFC 6570 URI template, such as `file:///{+path}` or
/// `weather://{city}/current{?units,lang}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    template: String,
    parts: Vec<Part>,
    /// The names that more than one variable specification uses (their bindings must agree).
    repeated: HashSet<String>,
}

impl UriTemplate {
    /// Parses `template`: literals with `{…}` expressions using any RFC 6570 operator
    /// (`+ # . / ; ? &`), several comma-separated variables, and the `:N` prefix and `*`
    /// explode modifiers. Literal text is kept as written.
    ///
    /// # Errors
    /// A [`TemplateError`] with the byte position of an unbalanced brace, an empty expression,
    /// a reserved operator (`= , ! @ |`), an invalid variable name, a bad modifier, or a
    /// character that RFC 6570 does not allow in literal text (space, `"'<>\^`|`, a `%` that
    /// starts no `%XX` triplet, control characters); or when the template passes
    /// [`MAX_TEMPLATE_LENGTH`] or [`MAX_EXPRESSIONS`].
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let error =
            |position: usize, message: String| TemplateError { template: template.to_owned(), position, message };
        if template.len() > MAX_TEMPLATE_LENGTH {
            return Err(error(MAX_TEMPLATE_LENGTH, format!("the template is longer than {MAX_TEMPLATE_LENGTH} bytes")));
        }
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut expressions = 0;
        let mut pos = 0;
        while let Some(open) = template[pos..].find(['{', '}']).map(|i| i + pos) {
            check_literal(&template[pos..open], pos).map_err(|(position, message)| error(position, message))?;
            literal.push_str(&template[pos..open]);
            if template.as_bytes()[open] == b'}' {
                return Err(error(open, "'}' without a matching '{'".to_owned()));
            }
            let close = match template[open + 1..].find(['{', '}']).map(|i| i + open + 1) {
                Some(close) if template.as_bytes()[close] == b'}' => close,
                Some(nested) => {
                    return Err(error(nested, format!("'{{' inside the expression opened at byte {open}")));
                }
                None => return Err(error(open, "'{' is never closed".to_owned())),
            };
            expressions += 1;
            if expressions > MAX_EXPRESSIONS {
                return Err(error(open, format!("the template has more than {MAX_EXPRESSIONS} expressions")));
            }
            let expression = parse_expression(&template[open + 1..close], open + 1)
                .map_err(|(position, message)| error(position, message))?;
            // The reading above explains a bad expression; the crate is the authority on a good one.
            if let Err(e) = UriTemplateStr::new(&template[open..=close]) {
                return Err(error(open, format!("not an RFC 6570 expression: {e}")));
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(Part::Expression(expression));
            pos = close + 1;
        }
        check_literal(&template[pos..], pos).map_err(|(position, message)| error(position, message))?;
        literal.push_str(&template[pos..]);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        let is_query = |part: &Part| {
            matches!(part, Part::Expression(e)
                if matches!(e.operator, Operator::Query | Operator::QueryContinuation))
        };
        let start = parts.iter().rposition(|p| !is_query(p)).map_or(0, |i| i + 1);
        if start < parts.len() {
            let section = parts
                .drain(start..)
                .filter_map(|part| match part {
                    Part::Expression(e) => Some(e),
                    _ => None,
                })
                .collect();
            parts.push(Part::Query(section));
        }
        let mut parsed = UriTemplate { template: template.to_owned(), parts, repeated: HashSet::new() };
        parsed.repeated = parsed.repeated_variables();
        Ok(parsed)
    }

    /// The template text as given to [`parse`](Self::parse).
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The distinct variable names, in order of first appearance, as written (a name may hold
    /// `%XX` triplets: `{%41}` is named `%41`). These are the keys of
    /// [`match_uri`](Self::match_uri)'s variables; bindings that map them to handler parameters
    /// take them from here rather than reading the template themselves.
    pub fn variable_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for var in self.expressions().flat_map(|e| &e.vars) {
            if !names.contains(&var.name.as_str()) {
                names.push(&var.name);
            }
        }
        names
    }

    /// The variables whose values may span several path segments: those that appear only in
    /// `{+…}` and `{#…}` expressions, whose matches may hold a raw `/`.
    pub(crate) fn multi_segment_variables(&self) -> Vec<&str> {
        let mut reserved: Vec<&str> = Vec::new();
        let mut single: Vec<&str> = Vec::new();
        for expression in self.expressions() {
            let list = if expression.operator.allows_reserved() { &mut reserved } else { &mut single };
            list.extend(expression.vars.iter().map(|v| v.name.as_str()));
        }
        reserved.retain(|name| !single.contains(name));
        reserved
    }

    fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.parts.iter().flat_map(|part| match part {
            Part::Literal(_) => <&[Expression]>::default().iter(),
            Part::Expression(e) => std::slice::from_ref(e).iter(),
            Part::Query(section) => section.iter(),
        })
    }

    /// Expands the template per RFC 6570. Strings, numbers and booleans are single values;
    /// arrays are lists and objects are key/value pairs (the `:N` prefix modifier does not apply
    /// to them). A variable that is missing, `null`, or an empty array or object is undefined
    /// and left out; list items and object members that are arrays or objects themselves are
    /// written as JSON text.
    pub fn expand(&self, vars: &Map<String, Value>) -> String {
        let mut out = String::with_capacity(self.template.len());
        for part in &self.parts {
            match part {
                Part::Literal(literal) => out.push_str(literal),
                Part::Expression(expression) => expand_expression(expression, vars, &mut out),
                Part::Query(section) => {
                    for expression in section {
                        expand_expression(expression, vars, &mut out);
                    }
                }
            }
        }
        out
    }

    /// Whether `uri` matches the template, and if so the variables it carries (see the module
    /// documentation for the rules). Variables whose expressions matched nothing are absent.
    pub fn match_uri(&self, uri: &str) -> Option<Map<String, Value>> {
        if uri.len() > MAX_URI_LENGTH {
            return None;
        }
        let mut matcher = Matcher {
            parts: &self.parts,
            uri,
            failed: HashSet::new(),
            budget: MATCH_BUDGET,
            repeated: &self.repeated,
            bound: Vec::new(),
            states: HashMap::new(),
            extents: HashMap::new(),
        };
        if !matcher.run(0, 0) {
            return None;
        }
        let mut vars = Map::new();
        // A variable named twice has consistent bindings (the search checked): its value is
        // the one no prefix modifier cut, else the longest prefix.
        for binding in &matcher.bound {
            let Some(value) = &binding.value else { continue };
            let better = match (vars.get(binding.name), value) {
                (None, _) => true,
                (Some(Value::String(held)), Value::String(text)) => {
                    binding.whole() || text.chars().count() > held.chars().count()
                }
                // A list of one, read by an exploded expression, was that string.
                (Some(Value::Array(_)), Value::String(_)) => true,
                _ => false,
            };
            if better {
                vars.insert(binding.name.to_owned(), value.clone());
            }
        }
        Some(vars)
    }

    /// Whether more than one variable specification names the same variable (`{x}/{x:3}`): the
    /// search then costs up to the cube of the URI's length.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn repeats_a_variable(&self) -> bool {
        !self.repeated.is_empty()
    }

    /// The names that more than one variable specification of the template uses.
    fn repeated_variables(&self) -> HashSet<String> {
        let mut seen = HashSet::new();
        self.expressions()
            .flat_map(|e| &e.vars)
            .filter(|v| !seen.insert(v.name.as_str()))
            .map(|v| v.name.clone())
            .collect()
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(template: &str) -> Result<UriTemplate, TemplateError> {
        UriTemplate::parse(template)
    }
}

fn parse_expression(body: &str, offset: usize) -> Result<Expression, (usize, String)> {
    let Some(first) = body.chars().next() else {
        return Err((offset - 1, "empty expression '{}'".to_owned()));
    };
    let (operator, list, mut at) = match Operator::from_char(first) {
        Some(operator) => (operator, &body[1..], offset + 1),
        None if "=,!@|".contains(first) => {
            return Err((offset, format!("operator '{first}' is reserved by RFC 6570 for future extensions")));
        }
        None => (Operator::Simple, body, offset),
    };
    let mut vars = Vec::new();
    for spec in list.split(',') {
        vars.push(parse_varspec(spec, at)?);
        at += spec.len() + 1;
    }
    Ok(Expression { operator, vars })
}

fn parse_varspec(spec: &str, at: usize) -> Result<VarSpec, (usize, String)> {
    let (name, modifier) = if let Some((name, length)) = spec.split_once(':') {
        let valid =
            (1..=4).contains(&length.len()) && !length.starts_with('0') && length.bytes().all(|b| b.is_ascii_digit());
        if !valid {
            return Err((
                at + name.len() + 1,
                format!("prefix length {length:?} of {name:?} must be a number from 1 to 9999"),
            ));
        }
        (name, Modifier::Prefix(length.parse().unwrap_or(1)))
    } else if let Some(name) = spec.strip_suffix('*') {
        (name, Modifier::Explode)
    } else {
        (spec, Modifier::None)
    };
    if name.is_empty() {
        return Err((at, "missing variable name".to_owned()));
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
            i += 3;
            continue;
        }
        let dot_ok = b == b'.' && i > 0 && i + 1 < bytes.len() && bytes[i - 1] != b'.';
        if !(b.is_ascii_alphanumeric() || b == b'_' || dot_ok) {
            let c = name[i..].chars().next().unwrap_or('?');
            return Err((
                at + i,
                format!(
                    "invalid character {c:?} in variable name {name:?} (use letters, digits, '_', \
                     inner '.' and %XX escapes)"
                ),
            ));
        }
        i += 1;
    }
    Ok(VarSpec { name: name.to_owned(), modifier })
}

/// The first character of `literal` (at byte `at` of the template) that RFC 6570 does not
/// allow in literal text, if any.
fn check_literal(literal: &str, at: usize) -> Result<(), (usize, String)> {
    let bytes = literal.as_bytes();
    for (i, c) in literal.char_indices() {
        let bad = match c {
            '%' => !is_pct_triplet(bytes, i),
            ' ' | '"' | '\'' | '<' | '>' | '\\' | '^' | '`' | '|' => true,
            c => c.is_control(),
        };
        if bad {
            let what = if c == '%' { "a '%' that starts no %XX triplet".to_owned() } else { format!("{c:?}") };
            return Err((at + i, format!("{what} is not allowed in literal text (percent-encode it)")));
        }
    }
    Ok(())
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    b":/?#[]@!$&'()*+,;=".contains(&b)
}

/// The characters besides unreserved ones that RFC 3986 allows in a path segment.
fn is_pchar_delim(b: u8) -> bool {
    b"!$&'()*+,;=:@".contains(&b)
}

fn is_defined(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Array(items) => items.iter().any(|v| !v.is_null()),
        Value::Object(members) => members.values().any(|v| !v.is_null()),
        _ => true,
    }
}

fn scalar_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// Expands one expression with the crate. RFC 6570 says a prefix does not apply to a composite
/// value and the crate refuses to expand one; here such a prefix is left out, as if the
/// expression had none.
fn expand_expression(expression: &Expression, vars: &Map<String, Value>, out: &mut String) {
    let reserved = expression.operator.allows_reserved();
    let mut text = String::from("{");
    text.push_str(expression.operator.symbol());
    // Values a prefix cut here rather than in the crate (see `reserved_prefix`).
    let mut cut = Map::new();
    for (i, var) in expression.vars.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&var.name);
        match (var.modifier, vars.get(&var.name)) {
            (Modifier::Explode, _) => text.push('*'),
            (Modifier::Prefix(_), Some(Value::Array(_) | Value::Object(_))) => {}
            (Modifier::Prefix(max), Some(value))
                if reserved && expression.vars.iter().filter(|v| v.name == var.name).count() == 1 =>
            {
                cut.insert(var.name.clone(), Value::String(reserved_prefix(&scalar_text(value), max).to_owned()));
            }
            (Modifier::Prefix(max), _) => text.push_str(&format!(":{max}")),
            (Modifier::None, _) => {}
        }
    }
    text.push('}');
    // Cannot fail: `parse` checked the expression with the crate, and no prefix is left on a
    // composite value.
    let context = JsonContext { vars, cut: &cut, reserved };
    if let Ok(expanded) = UriTemplateStr::new(&text).and_then(|t| t.expand::<UriSpec, _>(&context)) {
        out.push_str(&expanded.to_string());
    }
}

/// The variables of [`UriTemplate::expand`] as the crate's expansion context: JSON scalars are
/// strings, arrays lists and objects key/value pairs; `null` (as a value, an item or a member)
/// and empty composites are undefined.
///
/// For `{+…}` and `{#…}` (`reserved`), non-ASCII and control characters are percent-encoded
/// here, before the crate sees them: iri-string 0.7.14 panics on a non-ASCII character in a
/// reserved expansion (found by the uri_template fuzz target, `{+x}` with x = "é"). Its output
/// is the same: a reserved expansion encodes those characters as their UTF-8 triplets and
/// passes triplets through, counting one encoded character as one under a `:N` prefix.
struct JsonContext<'a> {
    vars: &'a Map<String, Value>,
    /// Values already cut to their prefix, which take the place of those in `vars`.
    cut: &'a Map<String, Value>,
    reserved: bool,
}

impl JsonContext<'_> {
    fn text<'v>(&self, value: &'v Value) -> Cow<'v, str> {
        let text = scalar_text(value);
        if !self.reserved || text.bytes().all(|b| b.is_ascii() && !b.is_ascii_control()) {
            return text;
        }
        Cow::Owned(percent_encoding::utf8_percent_encode(&text, percent_encoding::CONTROLS).to_string())
    }
}

impl Context for JsonContext<'_> {
    fn visit<V: Visitor>(&self, visitor: V) -> V::Result {
        let name = visitor.var_name();
        let value = self.cut.get(name.as_str()).or_else(|| self.vars.get(name.as_str()));
        let Some(value) = value.filter(|v| is_defined(v)) else {
            return visitor.visit_undefined();
        };
        match value {
            Value::Array(items) => visitor
                .visit_list()
                .visit_items_and_finish(items.iter().filter(|v| !v.is_null()).map(|item| self.text(item))),
            Value::Object(members) => visitor.visit_assoc().visit_entries_and_finish(
                members
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(key, member)| (self.text(&Value::String(key.clone())).into_owned(), self.text(member))),
            ),
            scalar => visitor.visit_string(self.text(scalar)),
        }
    }
}

/// The start of a `{+…}`/`{#…}` value that a `:max` prefix keeps: `max` characters, where a
/// percent-encoded character (one triplet, or the triplets of one UTF-8 sequence) counts once,
/// so a prefix never splits it (RFC 6570 section 2.4.1). Done here because iri-string 0.7.14
/// miscounts such prefixes once a value holds a triplet.
fn reserved_prefix(text: &str, max: usize) -> &str {
    let (mut end, mut kept) = (0, 0);
    while end < text.len() && kept < max {
        end += reserved_char_len(text, end);
        kept += 1;
    }
    &text[..end]
}

/// How many characters of a `{+…}`/`{#…}` value a prefix counts (see [`reserved_prefix`]).
fn reserved_chars(text: &str) -> usize {
    let (mut at, mut count) = (0, 0);
    while at < text.len() {
        at += reserved_char_len(text, at);
        count += 1;
    }
    count
}

/// The length in bytes of the character of a reserved value at byte `at`: a triplet, the
/// triplets of one UTF-8 sequence, or one character.
fn reserved_char_len(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let byte_at = |i: usize| {
        is_pct_triplet(bytes, i)
            .then(|| std::str::from_utf8(&bytes[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
    };
    let Some(lead) = byte_at(at) else {
        return text[at..].chars().next().map_or(1, char::len_utf8);
    };
    let len = match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    let continued =
        (1..len).all(|k| at + 3 * k < bytes.len() && byte_at(at + 3 * k).is_some_and(|b| (0x80..=0xBF).contains(&b)));
    if continued { 3 * len } else { 3 }
}

/// Whether the triplet at `i` encodes an unreserved character (`%2E` for `.`).
fn encodes_unreserved(bytes: &[u8], i: usize) -> bool {
    std::str::from_utf8(&bytes[i + 1..i + 3])
        .ok()
        .and_then(|h| u8::from_str_radix(h, 16).ok())
        .is_some_and(is_unreserved)
}

fn is_pct_triplet(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'%' && bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
}

/// Percent-decodes `text`; `None` when the result is not UTF-8 or a `%` is not a triplet.
fn decode(text: &str) -> Option<String> {
    decode_keeping(text, |_, _| false)
}

/// The value text of a `{+…}` or `{#…}` match: as [`decode`], except that the triplet of a
/// character such an expansion writes raw (an unreserved or reserved one, or a `%` before two
/// hex digits) stays as it is, since only a value holding that triplet itself expands to it
/// (`{+x}` writes a `,` of x raw, and passes x's own `%2C` through).
fn decode_reserved(text: &str) -> Option<String> {
    decode_keeping(text, |b, after| {
        is_unreserved(b)
            || is_reserved(b)
            || (b == b'%' && after.len() >= 2 && after[..2].iter().all(u8::is_ascii_hexdigit))
    })
}

/// Percent-decodes `text` (`None` when a `%` starts no triplet or the result is not UTF-8),
/// leaving the triplets for which `keep(byte, rest of the text)` holds encoded.
fn decode_keeping(text: &str, keep: impl Fn(u8, &[u8]) -> bool) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            let b = u8::from_str_radix(hex, 16).ok()?;
            if keep(b, &bytes[i + 3..]) {
                decoded.extend_from_slice(&bytes[i..i + 3]);
            } else {
                decoded.push(b);
            }
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// How far the characters an expression of `op` may match reach from `start`, as
/// `(strict end, lenient end)`.
fn extent(op: Operator, bytes: &[u8], start: usize) -> (usize, usize) {
    let mut i = start;
    let mut strict_end = None;
    while i < bytes.len() {
        let b = bytes[i];
        let (width, strict) = if is_unreserved(b) {
            (1, true)
        } else if b == b'%' {
            if !is_pct_triplet(bytes, i) {
                break;
            }
            // Only a reserved expansion passes a triplet of an unreserved character (`%2E`)
            // through: the others write the character itself.
            (3, op.allows_reserved() || !encodes_unreserved(bytes, i))
        } else if b >= 0x80 {
            (1, false)
        } else if op.allows(b, true) {
            (1, true)
        } else if op.allows(b, false) {
            (1, false)
        } else {
            break;
        };
        if !strict && strict_end.is_none() {
            strict_end = Some(i);
        }
        i += width;
    }
    (strict_end.unwrap_or(i), i)
}

/// [`extent`] for one expression: in `{x}`, `{.x}` and `{/x}` only an exploded object expands
/// to a raw `=`, so without an explode modifier a `=` ends the strict part; and a raw `,` only
/// comes from a list or, in `{x,y,…}`, between the variables, so the strict part ends at the
/// comma past those separators: the first in `{x}`, `{.x,y}` and `{/x,y}`, the n-th in a simple
/// expression of n variables (the split that expansion of strings makes is tried first; a list
/// still matches leniently). In `{.x*}` and `{/x*}` (every variable exploded) and in named
/// expressions (`?`, `&`, `;`) no raw `,` is strict.
fn expression_extent(expression: &Expression, bytes: &[u8], start: usize) -> (usize, usize) {
    let op = expression.operator;
    let (strict, lenient) = extent(op, bytes, start);
    let first_comma =
        |strict: usize| bytes[start..strict].iter().position(|&b| b == b',').map_or(strict, |i| start + i);
    // A raw `=` only separates a name from its value (`x=1`, an exploded member `k=v`), once per
    // item between two of the operator's separators: a second one is a value's, which expansion
    // encodes (`%3D`).
    let second_equals = |strict: usize| {
        let mut seen = false;
        let separator = op.separator() as u8;
        bytes[start..strict]
            .iter()
            .position(|&b| {
                if b == separator {
                    seen = false;
                } else if b == b'=' {
                    if seen {
                        return true;
                    }
                    seen = true;
                }
                false
            })
            .map_or(strict, |i| start + i)
    };
    if op.named() {
        // `?x=a&y=b`, `;x=a;y=b`: variables (and exploded items) are separated by `&` or `;`, so
        // a raw `,` comes only from a list value.
        return (second_equals(first_comma(strict)), lenient);
    }
    if !matches!(op, Operator::Simple | Operator::Label | Operator::Path) {
        return (strict, lenient);
    }
    let exploded = expression.vars.iter().filter(|v| v.modifier == Modifier::Explode).count();
    if exploded == expression.vars.len() && op != Operator::Simple {
        // Exploded, `{.x*}` and `{/x*}` separate items with their operator's own character: a
        // raw `,` comes only from a variable of the expression that is not exploded.
        return (second_equals(first_comma(strict)), lenient);
    }
    if exploded > 0 {
        return (second_equals(strict), lenient);
    }
    let separators = if expression.operator == Operator::Simple { expression.vars.len() - 1 } else { 0 };
    let mut commas = 0;
    let mut ends_strict = |b: u8| {
        b == b'=' || {
            commas += usize::from(b == b',');
            b == b',' && commas > separators
        }
    };
    let strict = bytes[start..strict].iter().position(|&b| ends_strict(b)).map_or(strict, |i| start + i);
    (strict, lenient)
}

/// What one variable specification matched: its value, or `None` when it expanded to nothing
/// (undefined), and the prefix length it was cut to, if any.
struct Binding<'a> {
    name: &'a str,
    value: Option<Value>,
    prefix: Option<usize>,
    /// The number of the repeated variables' bindings up to and with this one
    /// ([`Matcher::state`]).
    state: usize,
}

impl Binding<'_> {
    /// Whether the value is the variable's whole value: no prefix modifier, or one longer than
    /// the text it kept.
    fn whole(&self) -> bool {
        match (self.prefix, &self.value) {
            (Some(max), Some(Value::String(text))) => text.chars().count() < max,
            _ => true,
        }
    }

    /// Whether one variable could have expanded to both: defined in both or in neither, and
    /// with values that agree where a prefix modifier cut one of them.
    fn agrees_with(&self, other: &Binding<'_>) -> bool {
        let (a, b) = match (&self.value, &other.value) {
            (None, None) => return true,
            (Some(a), Some(b)) => match (text_of(a), text_of(b)) {
                (Some(a), Some(b)) => (a, b),
                _ => return a == b,
            },
            _ => return false,
        };
        let (short, long, short_whole) =
            if a.chars().count() <= b.chars().count() { (a, b, self.whole()) } else { (b, a, other.whole()) };
        if short_whole { a == b } else { long.starts_with(short) }
    }
}

/// The text of a string, or of a list of one string: an exploded expression reads a string
/// (`{/x*}` with x = "a" expands like ["a"]) as such a list.
fn text_of(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => Some(text),
        Value::Array(items) if items.len() == 1 => items[0].as_str(),
        _ => None,
    }
}

/// A backtracking search over the template's parts that spends from a fixed budget, so its work
/// is bounded whatever the input. Whether the rest of the template matches from a part and a
/// position depends only on them and on what the repeated variables were bound to so far (every
/// later expression naming one must agree with those bindings), so failed (part, position,
/// repeated bindings) triples are remembered and never searched twice; the repeated bindings are
/// named by a number ([`Binding::state`]), so remembering costs the same whatever their length.
/// Without repeated variables that number is always 0.
///
/// A template that repeats a variable makes the search one level deeper (each binding of the
/// first occurrence starts the rest afresh), so there the work that does not depend on the
/// bindings is done once per part and position (`extents`), an expression that names no repeated
/// variable is read only once the rest matched after it, and a later occurrence of a variable
/// bound to a whole string is tried only where its text can have that length.
struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    failed: HashSet<(usize, usize, usize)>,
    budget: usize,
    /// The variables more than one specification names (usually none).
    repeated: &'a HashSet<String>,
    /// What the specifications matched so far, in template order.
    bound: Vec<Binding<'a>>,
    /// The numbers of the repeated bindings met so far: (the state before, the binding) -> state.
    states: HashMap<(usize, String), usize>,
    /// The ends an expression may reach from a position: (part, position) -> (shortest,
    /// strict, lenient).
    extents: HashMap<(usize, usize), (usize, usize, usize)>,
}

impl<'a> Matcher<'a> {
    fn charge(&mut self, cost: usize) -> bool {
        match self.budget.checked_sub(cost) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => {
                self.budget = 0;
                false
            }
        }
    }

    fn run(&mut self, index: usize, pos: usize) -> bool {
        let parts = self.parts;
        let Some(part) = parts.get(index) else {
            return pos == self.uri.len();
        };
        let state = (index, pos, self.state());
        if self.budget == 0 || self.failed.contains(&state) {
            return false;
        }
        let matched = match part {
            Part::Literal(literal) => {
                self.charge(literal.len())
                    && self.uri[pos..].starts_with(literal.as_str())
                    && self.run(index + 1, pos + literal.len())
            }
            Part::Query(section) => {
                self.charge(self.uri.len() - pos)
                    && match extract_query(section, &self.uri[pos..]) {
                        Some(values) => self.bind(section.iter().flat_map(|e| &e.vars), values),
                        None => false,
                    }
            }
            Part::Expression(expression) => self.run_expression(index, expression, pos),
        };
        if !matched {
            self.failed.insert(state);
        }
        matched
    }

    /// The number of what the repeated variables were bound to so far: equal for equal
    /// bindings (0 when the template repeats no variable).
    fn state(&self) -> usize {
        self.bound.last().map_or(0, |b| b.state)
    }

    /// Binds `values` (one per specification of `vars`), or, when a repeated variable disagrees
    /// with an earlier binding, binds nothing and answers false.
    fn bind(&mut self, vars: impl Iterator<Item = &'a VarSpec>, values: Vec<Option<Value>>) -> bool {
        let mark = self.bound.len();
        for (var, value) in vars.zip(values) {
            let prefix = match var.modifier {
                Modifier::Prefix(max) => Some(max),
                _ => None,
            };
            let mut binding = Binding { name: &var.name, value, prefix, state: self.state() };
            if self.repeated.contains(binding.name) {
                let agrees = self.bound.iter().filter(|b| b.name == binding.name).all(|b| b.agrees_with(&binding));
                if !self.charge(self.bound.len()) || !agrees {
                    self.bound.truncate(mark);
                    return false;
                }
                let value = binding.value.as_ref().map_or_else(|| "-".to_owned(), Value::to_string);
                let key = (binding.state, format!("{}\0{}\0{value}", binding.name, prefix.unwrap_or(0)));
                let next = self.states.len() + 1;
                binding.state = *self.states.entry(key).or_insert(next);
            }
            self.bound.push(binding);
        }
        true
    }

    /// The ends `expression` may reach from `pos`: (shortest, strict, lenient), computed once
    /// per (part, position).
    fn extent(&mut self, index: usize, expression: &Expression, pos: usize) -> Option<(usize, usize, usize)> {
        if let Some(&known) = self.extents.get(&(index, pos)) {
            return Some(known);
        }
        let bytes = self.uri.as_bytes();
        let extent = match expression.operator.prefix() {
            None => {
                let (strict, lenient) = expression_extent(expression, bytes, pos);
                (pos + 1, strict, lenient)
            }
            Some(prefix) if self.uri[pos..].starts_with(prefix) => {
                let (strict, lenient) = expression_extent(expression, bytes, pos + 1);
                (pos, strict, lenient)
            }
            Some(_) => (pos, pos, pos),
        };
        if !self.charge(extent.2 - pos) {
            return None;
        }
        // Without repeated variables each (part, position) is searched once: nothing to reuse.
        if !self.repeated.is_empty() {
            self.extents.insert((index, pos), extent);
        }
        Some(extent)
    }

    /// Whether `region` may be the text of `expression` given what is bound: false only when the
    /// expression is one variable, bound before to a whole string of B bytes, and the region's
    /// value text is shorter than B or longer than 3B bytes (each byte of a value is written as
    /// itself or as a `%XX` triplet).
    fn may_agree(&mut self, expression: &Expression, region: &str) -> bool {
        let [var] = expression.vars.as_slice() else { return true };
        if var.modifier != Modifier::None || expression.operator.named() || !self.repeated.contains(&var.name) {
            return true;
        }
        if !self.charge(self.bound.len()) {
            return false;
        }
        let Some(known) = self
            .bound
            .iter()
            .filter(|b| b.name == var.name && b.whole())
            .find_map(|b| b.value.as_ref().and_then(text_of))
            .map(str::len)
        else {
            return true;
        };
        let body = match expression.operator.prefix() {
            Some(_) if region.is_empty() => return true,
            Some(_) => region.len() - 1,
            None => region.len(),
        };
        (known..=known.saturating_mul(3)).contains(&body)
    }

    fn run_expression(&mut self, index: usize, expression: &'a Expression, pos: usize) -> bool {
        let uri = self.uri;
        let bytes = uri.as_bytes();
        let Some((min_end, strict_end, lenient_end)) = self.extent(index, expression, pos) else {
            return false;
        };
        let next = self.parts.get(index + 1);
        // Splits that expansion could have produced first, longest first; then lenient ones. The
        // last part must reach the end of the URI.
        let (low, high) = if next.is_none() { (uri.len(), uri.len()) } else { (0, usize::MAX) };
        let strict = (min_end.max(low)..=strict_end.min(high)).rev();
        let lenient = ((strict_end.max(min_end.saturating_sub(1)) + 1).max(low)..=lenient_end.min(high)).rev();
        // Its variables bound or not, the rest matches the same when the expression names no
        // repeated variable: with repeated variables elsewhere, the rest is tried first.
        let read_after = !self.repeated.is_empty() && expression.vars.iter().all(|v| !self.repeated.contains(&v.name));
        for end in strict.chain(lenient) {
            if !self.charge(1) {
                return false;
            }
            let inside_triplet = (end >= 1 && bytes[end - 1] == b'%') || (end >= 2 && bytes[end - 2] == b'%');
            if !uri.is_char_boundary(end) || inside_triplet {
                continue;
            }
            if let Some(Part::Literal(literal)) = next
                && !uri[end..].starts_with(literal.as_str())
            {
                continue;
            }
            if !self.may_agree(expression, &uri[pos..end]) {
                continue;
            }
            let mark = self.bound.len();
            if read_after && !self.run(index + 1, end) {
                continue;
            }
            if !self.charge(end - pos) {
                return false;
            }
            let values = extract_expression(expression, &uri[pos..end]);
            if read_after {
                let Some(values) = values else {
                    self.bound.truncate(mark);
                    continue;
                };
                let state = self.state_at(mark);
                let bindings = expression.vars.iter().zip(values).map(|(var, value)| Binding {
                    name: &var.name,
                    value,
                    prefix: match var.modifier {
                        Modifier::Prefix(max) => Some(max),
                        _ => None,
                    },
                    state,
                });
                self.bound.splice(mark..mark, bindings);
                return true;
            }
            let Some(values) = values else { continue };
            if !self.bind(expression.vars.iter(), values) {
                continue;
            }
            if self.run(index + 1, end) {
                return true;
            }
            self.bound.truncate(mark);
        }
        false
    }

    /// [`Matcher::state`] when only the first `len` bindings were made.
    fn state_at(&self, len: usize) -> usize {
        len.checked_sub(1).map_or(0, |i| self.bound[i].state)
    }
}

/// The values of one expression's variables (`None`: undefined) from the text it matched.
fn extract_expression(expression: &Expression, region: &str) -> Option<Vec<Option<Value>>> {
    let op = expression.operator;
    let body = match op.prefix() {
        Some(_) if region.is_empty() => return Some(vec![None; expression.vars.len()]),
        // A named expression (`?`, `&`, `;`) never expands to its bare prefix: all undefined
        // is nothing, an empty value still names its variable (`?x=`, `;x`).
        Some(prefix) if op.named() && region.strip_prefix(prefix) == Some("") => return None,
        Some(prefix) => region.strip_prefix(prefix)?,
        None if region.is_empty() => return None,
        None => region,
    };
    if op.named() {
        let vars: Vec<&VarSpec> = expression.vars.iter().collect();
        extract_named(&vars, op.separator(), body)
    } else {
        extract_unnamed(expression, body)
    }
}

fn extract_unnamed(expression: &Expression, body: &str) -> Option<Vec<Option<Value>>> {
    let op = expression.operator;
    let separator = op.separator();
    let segments: Vec<&str> = body.split(separator).collect();
    let vars = &expression.vars;
    let mut values = Vec::new();
    let mut next = 0;
    for (index, var) in vars.iter().enumerate() {
        if next >= segments.len() {
            break;
        }
        let later = vars.len() - index - 1;
        let take = match var.modifier {
            Modifier::Explode => (segments.len() - next).saturating_sub(later).max(1),
            // A ',' (list) or '.' (unreserved) may also sit inside the last value; '/' not.
            _ if later == 0 && separator != '/' => segments.len() - next,
            _ => 1,
        };
        let chunk = &segments[next..next + take];
        next += take;
        let decode = if op.allows_reserved() { decode_reserved } else { decode };
        let value = match var.modifier {
            Modifier::Explode => exploded_value(chunk, op.allows_reserved())?,
            Modifier::Prefix(max) => {
                let text = decode(&chunk.join(&separator.to_string()))?;
                let count = if op.allows_reserved() { reserved_chars(&text) } else { text.chars().count() };
                if count > max {
                    return None;
                }
                Value::String(text)
            }
            Modifier::None => Value::String(decode(&chunk.join(&separator.to_string()))?),
        };
        values.push(Some(value));
    }
    values.resize(vars.len(), None);
    (next == segments.len()).then_some(values)
}

/// An exploded unnamed value: an object when every part is `key=value` (a raw `=` cannot be
/// inside an encoded list item), otherwise an array.
fn exploded_value(parts: &[&str], allows_reserved: bool) -> Option<Value> {
    if !allows_reserved && parts.iter().all(|p| p.contains('=')) {
        let mut members = Map::new();
        for part in parts {
            let (key, value) = part.split_once('=')?;
            members.insert(decode(key)?, Value::String(decode(value)?));
        }
        return Some(Value::Object(members));
    }
    let decode = if allows_reserved { decode_reserved } else { decode };
    let items = parts.iter().map(|p| decode(p).map(Value::String)).collect::<Option<Vec<_>>>()?;
    Some(Value::Array(items))
}

/// The trailing query section: empty, or `?`/`&` followed by `name=value` pairs in any order.
fn extract_query(section: &[Expression], rest: &str) -> Option<Vec<Option<Value>>> {
    let Some(lead) = rest.chars().next() else {
        return Some(vec![None; section.iter().map(|e| e.vars.len()).sum()]);
    };
    let starts_with_query = section.first()?.operator == Operator::Query;
    // A bare `?` or `&` is not an expansion (see `extract_expression`).
    if !(lead == '&' || (lead == '?' && starts_with_query)) || rest.len() == 1 {
        return None;
    }
    if extent(Operator::Query, rest.as_bytes(), 1).1 != rest.len() {
        return None;
    }
    let vars: Vec<&VarSpec> = section.iter().flat_map(|e| &e.vars).collect();
    extract_named(&vars, '&', &rest[1..])
}

enum Collected {
    Text(String),
    List(Vec<Value>),
    Pairs(Map<String, Value>),
}

/// Named (`;`, `?`, `&`) parameters in any order. A parameter the expression does not name
/// goes to its first exploded variable as an object member, or fails the match.
fn extract_named(vars: &[&VarSpec], separator: char, body: &str) -> Option<Vec<Option<Value>>> {
    let mut collected: Vec<Option<Collected>> = vars.iter().map(|_| None).collect();
    let catch_all = vars.iter().position(|v| v.modifier == Modifier::Explode);
    for pair in body.split(separator).filter(|p| !p.is_empty()) {
        let (raw_name, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(raw_value)?;
        // A name the section repeats (`{?x}{&x}`) fills its expressions in turn;
        // `match_uri` then checks that their values agree.
        let slot = (0..vars.len())
            .filter(|&i| vars[i].name == raw_name)
            .find(|&i| collected[i].is_none() || vars[i].modifier == Modifier::Explode)
            .or_else(|| vars.iter().position(|v| v.name == raw_name));
        match slot {
            Some(i) => {
                collected[i] = Some(match (vars[i].modifier, collected[i].take()) {
                    (Modifier::Explode, None) => Collected::List(vec![Value::String(value)]),
                    (Modifier::Explode, Some(Collected::List(mut items))) => {
                        items.push(Value::String(value));
                        Collected::List(items)
                    }
                    (Modifier::Prefix(max), None) if value.chars().count() <= max => Collected::Text(value),
                    (Modifier::None, None) => Collected::Text(value),
                    _ => return None,
                });
            }
            None => {
                let i = catch_all?;
                let mut members = match collected[i].take() {
                    None => Map::new(),
                    Some(Collected::Pairs(members)) => members,
                    Some(_) => return None,
                };
                members.insert(decode(raw_name)?, Value::String(value));
                collected[i] = Some(Collected::Pairs(members));
            }
        }
    }
    Some(
        collected
            .into_iter()
            .map(|collected| {
                Some(match collected? {
                    Collected::Text(text) => Value::String(text),
                    Collected::List(items) => Value::Array(items),
                    Collected::Pairs(members) => Value::Object(members),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(text: &str) -> UriTemplate {
        UriTemplate::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn vars(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    /// The variables of RFC 6570 section 3.2 (object members iterate in key order here).
    fn rfc_vars() -> Map<String, Value> {
        vars(json!({
            "count": ["one", "two", "three"],
            "dom": ["example", "com"],
            "dub": "me/too",
            "hello": "Hello World!",
            "half": "50%",
            "var": "value",
            "who": "fred",
            "base": "http://example.com/home/",
            "path": "/foo/bar",
            "list": ["red", "green", "blue"],
            "keys": {"semi": ";", "dot": ".", "comma": ","},
            "v": "6",
            "x": "1024",
            "y": "768",
            "empty": "",
            "empty_keys": {},
            "undef": null
        }))
    }

    /// Checks a table of `template expansion` lines (RFC 6570 section 3.2).
    fn check_expansions(table: &str) {
        let vars = rfc_vars();
        for line in table.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let mut words = line.split_whitespace();
            let (text, expected) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            assert_eq!(template(text).expand(&vars), expected, "{text}");
        }
    }

    #[test]
    fn expands_simple_and_reserved() {
        check_expansions(
            "
            {var}               value
            {hello}             Hello%20World%21
            {half}              50%25
            O{empty}X           OX
            O{undef}X           OX
            {x,y}               1024,768
            {x,hello,y}         1024,Hello%20World%21,768
            ?{x,empty}          ?1024,
            ?{x,undef}          ?1024
            ?{undef,y}          ?768
            {var:3}             val
            {var:30}            value
            {list}              red,green,blue
            {list*}             red,green,blue
            {keys}              comma,%2C,dot,.,semi,%3B
            {keys*}             comma=%2C,dot=.,semi=%3B
            {+var}              value
            {+hello}            Hello%20World!
            {+half}             50%25
            {base}index         http%3A%2F%2Fexample.com%2Fhome%2Findex
            {+base}index        http://example.com/home/index
            O{+empty}X          OX
            {+path}/here        /foo/bar/here
            here?ref={+path}    here?ref=/foo/bar
            up{+path}{var}/here up/foo/barvalue/here
            {+x,hello,y}        1024,Hello%20World!,768
            {+path,x}/here      /foo/bar,1024/here
            {+path:6}/here      /foo/b/here
            {+list}             red,green,blue
            {+keys}             comma,,,dot,.,semi,;
            {+keys*}            comma=,,dot=.,semi=;
            ",
        );
    }

    #[test]
    fn expands_fragment_label_and_path() {
        check_expansions(
            "
            {#var}          #value
            {#hello}        #Hello%20World!
            foo{#empty}     foo#
            foo{#undef}     foo
            {#path,x}/here  #/foo/bar,1024/here
            {#path:6}/here  #/foo/b/here
            {#keys*}        #comma=,,dot=.,semi=;
            {.who}          .fred
            {.who,who}      .fred.fred
            {.half,who}     .50%25.fred
            www{.dom*}      www.example.com
            X{.empty}       X.
            X{.undef}       X
            X{.var:3}       X.val
            X{.list}        X.red,green,blue
            X{.list*}       X.red.green.blue
            X{.keys*}       X.comma=%2C.dot=..semi=%3B
            X{.empty_keys}  X
            X{.empty_keys*} X
            {/who,who}      /fred/fred
            {/who,dub}      /fred/me%2Ftoo
            {/var,empty}    /value/
            {/var,undef}    /value
            {/var,x}/here   /value/1024/here
            {/var:1,var}    /v/value
            {/list}         /red,green,blue
            {/list*}        /red/green/blue
            {/list*,path:4} /red/green/blue/%2Ffoo
            {/keys}         /comma,%2C,dot,.,semi,%3B
            {/keys*}        /comma=%2C/dot=./semi=%3B
            ",
        );
    }

    #[test]
    fn expands_named_operators() {
        check_expansions(
            "
            {;who}         ;who=fred
            {;half}        ;half=50%25
            {;empty}       ;empty
            {;v,empty,who} ;v=6;empty;who=fred
            {;v,bar,who}   ;v=6;who=fred
            {;x,y,undef}   ;x=1024;y=768
            {;hello:5}     ;hello=Hello
            {;list}        ;list=red,green,blue
            {;list*}       ;list=red;list=green;list=blue
            {;keys}        ;keys=comma,%2C,dot,.,semi,%3B
            {;keys*}       ;comma=%2C;dot=.;semi=%3B
            {?who}         ?who=fred
            {?x,y,empty}   ?x=1024&y=768&empty=
            {?x,y,undef}   ?x=1024&y=768
            {?var:3}       ?var=val
            {?list}        ?list=red,green,blue
            {?list*}       ?list=red&list=green&list=blue
            {?keys}        ?keys=comma,%2C,dot,.,semi,%3B
            {?keys*}       ?comma=%2C&dot=.&semi=%3B
            {&who}         &who=fred
            ?fixed=yes{&x} ?fixed=yes&x=1024
            {&x,y,empty}   &x=1024&y=768&empty=
            {&list*}       &list=red&list=green&list=blue
            {&keys*}       &comma=%2C&dot=.&semi=%3B
            ",
        );
    }

    #[test]
    fn expands_numbers_booleans_and_unicode() {
        let t = template("q://{n}/{b}/{s}{?f}");
        let v = vars(json!({"n": 42, "b": true, "s": "世界", "f": 1.5}));
        assert_eq!(t.expand(&v), "q://42/true/%E4%B8%96%E7%95%8C?f=1.5");
        assert_eq!(template("{s:1}").expand(&v), "%E4%B8%96");
    }

    fn matched(t: &str, uri: &str) -> Option<Value> {
        template(t).match_uri(uri).map(Value::Object)
    }

    #[test]
    fn matches_simple_segments_only() {
        let t = "test://template/{id}/data";
        assert_eq!(matched(t, "test://template/123/data"), Some(json!({"id": "123"})));
        assert_eq!(matched(t, "test://template/1/2/data"), None);
        assert_eq!(matched(t, "test://template//data"), None);
        assert_eq!(matched(t, "test://template/123/data/"), None);
        assert_eq!(matched(t, "xtest://template/123/data"), None);
        assert_eq!(matched(t, "test://template/a?b/data"), None);
        assert_eq!(matched(t, "test://template/a#b/data"), None);
        assert_eq!(matched(t, "test://template/a%2Fb%20c/data"), Some(json!({"id": "a/b c"})));
        assert_eq!(matched(t, "test://template/%FF/data"), None);
        assert_eq!(matched(t, "test://template/%4/data"), None);
    }

    #[test]
    fn matches_reserved_expansion() {
        let t = "file:///{+path}";
        assert_eq!(matched(t, "file:///a/b/c.txt"), Some(json!({"path": "a/b/c.txt"})));
        assert_eq!(matched(t, "file:///a%20b"), Some(json!({"path": "a b"})));
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/reserved-keeps-
        // an-encoded-comma): `{+x}` writes a `,` raw, so `%2C` came from a value holding `%2C`.
        assert_eq!(matched(t, "file:///a%2Cb%2Fc%41"), Some(json!({"path": "a%2Cb%2Fc%41"})));
        assert_eq!(matched(t, "file:///%D8%9C"), Some(json!({"path": "\u{61c}"})));
        assert_eq!(matched(t, "file:///100%25"), Some(json!({"path": "100%"})));
        assert_eq!(matched(t, "file:///100%2541"), Some(json!({"path": "100%2541"})));
        assert_eq!(matched("page{#s}", "page#a%2Fb%20c"), Some(json!({"s": "a%2Fb c"})));
        assert_eq!(matched("{x}", "a%2Cb"), Some(json!({"x": "a,b"})));
        assert_eq!(matched(t, "file:///"), None);
        assert_eq!(matched(t, "file://a"), None);
        assert_eq!(
            matched("repo://{owner}/{+rest}", "repo://me/src/lib.rs"),
            Some(json!({"owner": "me", "rest": "src/lib.rs"}))
        );
    }

    #[test]
    fn matches_query_parameters_in_any_order() {
        let t = "weather://{city}/current{?units,lang}";
        assert_eq!(matched(t, "weather://paris/current"), Some(json!({"city": "paris"})));
        assert_eq!(
            matched(t, "weather://paris/current?units=metric"),
            Some(json!({"city": "paris", "units": "metric"}))
        );
        assert_eq!(
            matched(t, "weather://new%20york/current?lang=en&units=metric"),
            Some(json!({"city": "new york", "units": "metric", "lang": "en"}))
        );
        assert_eq!(matched(t, "weather://paris/current?lang="), Some(json!({"city": "paris", "lang": ""})));
        assert_eq!(matched(t, "weather://paris/current?other=1"), None);
        assert_eq!(matched(t, "weather://paris/current?units=a&units=b"), None);
        assert_eq!(matched(t, "weather://paris/current#frag"), None);
        assert_eq!(matched(t, "weather://paris/current/?units=a"), None);
        assert_eq!(
            matched("search{?q}{&page,tag*}", "search?tag=a&page=2&q=x%26y&tag=b"),
            Some(json!({"q": "x&y", "page": "2", "tag": ["a", "b"]}))
        );
        assert_eq!(matched("api{?params*}", "api?b=2&a=1"), Some(json!({"params": {"a": "1", "b": "2"}})));
        assert_eq!(matched("/x?fixed=yes{&v}", "/x?fixed=yes&v=1"), Some(json!({"v": "1"})));
    }

    #[test]
    fn matches_path_and_label_expressions() {
        let t = "users/{id}{/sub*}";
        assert_eq!(matched(t, "users/42"), Some(json!({"id": "42"})));
        assert_eq!(matched(t, "users/42/a"), Some(json!({"id": "42", "sub": ["a"]})));
        assert_eq!(matched(t, "users/42/a/b%2Fc"), Some(json!({"id": "42", "sub": ["a", "b/c"]})));
        assert_eq!(matched("users{/id}", "users/a/b"), None);
        assert_eq!(matched("m{/a,b}", "m/1/2"), Some(json!({"a": "1", "b": "2"})));
        assert_eq!(matched("file{.ext}", "file.txt"), Some(json!({"ext": "txt"})));
        assert_eq!(matched("www{.dom*}", "www.example.com"), Some(json!({"dom": ["example", "com"]})));
        assert_eq!(matched("/m{;x,y}", "/m;y=2;x=1"), Some(json!({"x": "1", "y": "2"})));
        assert_eq!(matched("page{#section}", "page#intro"), Some(json!({"section": "intro"})));
        assert_eq!(matched("map?{x,y}", "map?1024,768"), Some(json!({"x": "1024", "y": "768"})));
        assert_eq!(matched("{keys*}", "comma=%2C,dot=."), Some(json!({"keys": {"comma": ",", "dot": "."}})));
    }

    #[test]
    fn prefix_modifier_limits_matched_length() {
        assert_eq!(matched("{var:3}/x", "abc/x"), Some(json!({"var": "abc"})));
        assert_eq!(matched("{var:3}/x", "abcd/x"), None);
        assert_eq!(matched("{var:3}{rest}", "abcdef"), Some(json!({"var": "abc", "rest": "def"})));
    }

    #[test]
    fn prefers_splits_that_expansion_produces() {
        assert_eq!(matched("item/{id}{;ver}", "item/42;ver=2"), Some(json!({"id": "42", "ver": "2"})));
        assert_eq!(
            matched("file:///{name}", "file:///notes(1)+draft.txt"),
            Some(json!({"name": "notes(1)+draft.txt"}))
        );
        assert_eq!(matched("file:///{name}", "file:///文件.txt"), Some(json!({"name": "文件.txt"})));
    }

    #[test]
    fn repeated_variables_must_agree() {
        assert_eq!(matched("{x}/{x}", "a/a"), Some(json!({"x": "a"})));
        assert_eq!(matched("{x}/{x}", "a/b"), None);
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/fragment-repeats-
        // a-variable): the first `{#f}` took everything, leaving the second empty (undefined).
        assert_eq!(template("{#f}{#f}").expand(&vars(json!({"f": "a#b"}))), "#a#b#a#b");
        assert_eq!(matched("{#f}{#f}", "#a#b#a#b"), Some(json!({"f": "a#b"})));
        assert_eq!(matched("{#f}{#f}", "#a#b"), None);
        // A variable is defined in every expression naming it, or in none.
        assert_eq!(matched("{?x}{&x}", "?x=1"), None);
        assert_eq!(matched("p{/x}{?x}", "p"), Some(json!({})));
        assert_eq!(matched("p{/x}{?x}", "p/1?x=1"), Some(json!({"x": "1"})));
        assert_eq!(matched("p{/x}{?x}", "p/1"), None);
        // A prefix modifier keeps the start of the same value.
        assert_eq!(template("{x}{x:3}").expand(&vars(json!({"x": "abcdef"}))), "abcdefabc");
        assert_eq!(matched("{x}{x:3}", "abcdefabc"), Some(json!({"x": "abcdef"})));
        assert_eq!(matched("{x:2}/{x}", "ab/abc"), Some(json!({"x": "abc"})));
        assert_eq!(matched("{x:2}/{x}", "ab/xbc"), None);
        assert_eq!(matched("{x:2}/{x:4}", "ab/abcd"), Some(json!({"x": "abcd"})));
        assert_eq!(matched("{x:5}/{x:4}", "ab/abcd"), None);
        assert_eq!(matched("{x,x}", "a,a"), Some(json!({"x": "a"})));
        assert_eq!(matched("{x,x}", "a,b"), None);
    }

    #[test]
    fn an_exploded_path_or_label_item_holds_no_raw_comma() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/comma-in-an-
        // exploded-path-item): `{/p*}` took a raw `,` that only the next expression expands to.
        let t = "{/p*}{s*}";
        let uri = template(t).expand(&vars(json!({"p": [""], "s": ["\u{456}0", "9"]})));
        assert_eq!(uri, "/%D1%960,9");
        let again = matched(t, &uri).unwrap();
        assert_eq!(template(t).expand(&vars(again)), uri);
        assert_eq!(matched("{/p*}", "/a/b"), Some(json!({"p": ["a", "b"]})));
        // Leniently a raw comma is still read as part of an item.
        assert_eq!(matched("{/p*}", "/a,b"), Some(json!({"p": ["a,b"]})));
        assert_eq!(matched("{/p*,q}", "/a/b,c"), Some(json!({"p": ["a"], "q": "b,c"})));
    }

    #[test]
    fn a_named_value_takes_a_raw_comma_only_leniently() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/comma-in-a-named-
        // value): `{?x}` took the comma that `{f*}` expands to.
        let t = "{?x}{f*}";
        let uri = template(t).expand(&vars(json!({"x": "", "f": ["", "g92"]})));
        assert_eq!(uri, "?x=,g92");
        let again = matched(t, &uri).unwrap();
        assert_eq!(template(t).expand(&vars(again)), uri);
        // A list value still matches.
        assert_eq!(matched("p{?x}", "p?x=a,b"), Some(json!({"x": "a,b"})));
    }

    #[test]
    fn a_triplet_of_an_unreserved_character_comes_from_a_reserved_expansion() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/encoded-unreserved-
        // in-a-plain-value): `{?x}` decoded `%2E%2E1` (which it never writes: it writes `..1`)
        // where `{+o}` had passed `%2E%2E15` through.
        let t = "{?x}{+o}{&y}";
        let uri = template(t).expand(&vars(json!({"x": "", "o": "%2E%2E15"})));
        assert_eq!(uri, "?x=%2E%2E15");
        let again = matched(t, &uri).unwrap();
        assert_eq!(template(t).expand(&vars(again)), uri);
        // Alone, such a triplet still matches (leniently) and is decoded.
        assert_eq!(matched("file:///{name}", "file:///a%2Eb"), Some(json!({"name": "a.b"})));
    }

    #[test]
    fn a_named_expression_never_takes_its_bare_prefix() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/named-expression-
        // takes-a-bare-prefix): `{?a}` took the bare `?`, leaving `x=/+` to `{fs}`.
        assert_eq!(template("{?a}{?x}{fs}").expand(&vars(json!({"x": "/", "fs": "+"}))), "?x=%2F%2B");
        assert_eq!(matched("{?a}{?x}{fs}", "?x=%2F%2B"), Some(json!({"x": "/", "fs": "+"})));
        // Raw reserved characters in a query value are read as themselves.
        assert_eq!(matched("{?a}{?x}{fs}", "?x=/+"), Some(json!({"x": "/", "fs": "+"})));
        assert_eq!(matched("p{;a}", "p;"), None);
        assert_eq!(matched("p{?a}", "p?"), None);
        assert_eq!(matched("p{&a}", "p&"), None);
        assert_eq!(matched("p{?a}", "p?a="), Some(json!({"a": ""})));
        assert_eq!(matched("p{;a}", "p;a"), Some(json!({"a": ""})));
        // Unnamed operators do expand to their bare prefix for an empty value.
        assert_eq!(matched("p{#a}", "p#"), Some(json!({"a": ""})));
        assert_eq!(matched("p{/a}", "p/"), Some(json!({"a": ""})));
    }

    #[test]
    fn a_second_raw_equals_sign_in_an_item_is_a_value_taken_only_leniently() {
        // {"a": "+"} and {"+": "1&&bb"} expand so; `{&key*}` must not read `a=%2B=1…` as one
        // member whose value holds a raw `=` (expansion writes it `%3D`).
        let t = template("{&key*}{?x}{xs*}");
        let uri = "&a=%2B=1%26%26bb";
        let vars = t.match_uri(uri).expect("the expansion of key = {a: \"\"}, xs = {\"+\": \"1&&bb\"}");
        assert_eq!(t.expand(&vars), uri, "{vars:?}");
        // Leniently a value may still hold one.
        assert_eq!(matched("{?x}", "?x=1=2"), Some(json!({ "x": "1=2" })));
    }

    #[test]
    fn a_raw_equals_sign_is_not_what_a_simple_variable_expands_to() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/
        // equals-in-a-simple-variable): `{x}` took the raw `=` that belongs to `{+y}`.
        let uri = template("{x}{+y}").expand(&vars(json!({"x": "a=b", "y": "=c"})));
        assert_eq!(uri, "a%3Db=c");
        assert_eq!(matched("{x}{+y}", &uri), Some(json!({"x": "a=b", "y": "=c"})));
        assert_eq!(matched("{x*}", "a=1,b=2"), Some(json!({"x": {"a": "1", "b": "2"}})));
        assert_eq!(matched("item/{id}", "item/a=b"), Some(json!({"id": "a=b"})));
    }

    #[test]
    fn a_raw_comma_is_not_what_a_single_simple_variable_expands_to_first() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/
        // comma-in-a-simple-variable): `{a}` took the raw `,` that belongs to `{x,y}`.
        let t = "{a}{?%2E%2Eya}{x,y}";
        let uri = template(t).expand(&vars(json!({"a": "a", "x": "+x", "y": "y"})));
        assert_eq!(uri, "a%2Bx,y");
        let again = matched(t, &uri).expect("its own expansion matches");
        assert_eq!(template(t).expand(again.as_object().unwrap()), uri);
        // A raw comma in one variable still matches, leniently, as it did.
        assert_eq!(matched("{a}", "b,c"), Some(json!({"a": "b,c"})));
        assert_eq!(matched("item/{id}.json", "item/a,b.json"), Some(json!({"id": "a,b"})));
        // The same for a simple expression of several variables (fuzz/regressions/uri_template/
        // comma-after-the-separators): `{x,q}` took the `,` that belongs to `{x___,y_}`.
        let t = "{x,q}{x___,y_}";
        let uri = template(t).expand(&vars(json!({"x": "____", "q": "", "x___": "=___0", "y_": "1"})));
        assert_eq!(uri, "____,%3D___0,1");
        let again = matched(t, &uri).expect("its own expansion matches");
        assert_eq!(template(t).expand(again.as_object().unwrap()), uri);
        assert_eq!(matched("{x,y}", "a,b,c"), Some(json!({"x": "a", "y": "b,c"})));
    }

    #[test]
    fn a_query_section_may_repeat_a_variable() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/
        // query-repeats-a-variable): the second `F=` used to fail the match.
        let uri = template("{F}{&F}{&F}").expand(&vars(json!({"F": "c&o"})));
        assert_eq!(uri, "c%26o&F=c%26o&F=c%26o");
        assert_eq!(matched("{F}{&F}{&F}", &uri), Some(json!({"F": "c&o"})));
        assert_eq!(matched("{?x}{&x}", "?x=1&x=1"), Some(json!({"x": "1"})));
        assert_eq!(matched("{?x}{&x}", "?x=1&x=2"), None);
    }

    #[test]
    fn matches_what_it_expands() {
        let cases = [
            ("test://template/{id}/data", json!({"id": "a b/c?d"})),
            ("file:///{+path}", json!({"path": "dir/file name.txt"})),
            ("weather://{city}/current{?units,lang}", json!({"city": "Zürich", "lang": "de"})),
            ("users/{id}{/sub*}", json!({"id": "7", "sub": ["x", "y,z"]})),
            ("db://{table}{;ver}{?cols*}", json!({"table": "t", "ver": "3", "cols": ["a", "b"]})),
            ("page{#section}", json!({"section": "a/b"})),
        ];
        for (text, values) in cases {
            let t = template(text);
            let uri = t.expand(&vars(values.clone()));
            assert_eq!(t.match_uri(&uri).map(Value::Object), Some(values), "{text} -> {uri}");
        }
    }

    #[test]
    fn a_repeated_variable_does_not_make_the_search_exhaustive() {
        // Six expressions over 25 characters, the first and last naming one variable: `{x}`
        // takes the longest value first, which the last `{x}` (`q`) refuses only after the
        // others have split the rest. A search that forgets its failures because `x` is repeated
        // tries every split of the rest for every `x` and gives up (no match) before `x` = `q`.
        let t = template("{x}{b}{c}{d}{e}{f}-{x}");
        let uri = format!("q{}-q", "v".repeat(24));
        let vars = t.match_uri(&uri).expect("the URI is an expansion of the template");
        assert_eq!(vars["x"], json!("q"));
        assert_eq!(t.expand(&vars), uri);
    }

    #[test]
    fn a_repeated_variable_around_a_long_middle_matches_its_expansion() {
        // `{a}` first takes every length, longest first; for each, the middle may end anywhere,
        // and only then does the last `{a}` refuse. Reading the middle after the rest matched,
        // and trying the last `{a}` only where its text has the first one's length, makes this
        // quadratic (it was cubic): the fuzz target's finding and a URI of 248 bytes match.
        let t = template("{a}{m}{a}");
        for middle in [",,1777777777777000000000000000000000057385,7,,,,,,,".to_owned(), ",7".repeat(60)] {
            let vars = vars(json!({"a": ";r", "m": middle}));
            let uri = t.expand(&vars);
            assert_eq!(t.match_uri(&uri), Some(vars), "{uri}");
        }
    }

    #[test]
    fn long_or_adversarial_uris_are_cheap() {
        let t = template("x://{+a}");
        let long = format!("x://{}", "a".repeat(MAX_URI_LENGTH));
        assert_eq!(t.match_uri(&long), None);
        let ok = format!("x://{}", "a".repeat(MAX_URI_LENGTH - 10));
        assert!(t.match_uri(&ok).is_some());

        let started = std::time::Instant::now();
        let t = template("{a}{b}{c}{d}{e}{f}{g}{h}{i}{j}{k}{l}!");
        let uri = "a".repeat(MAX_URI_LENGTH - 1);
        assert_eq!(t.match_uri(&uri), None);
        let t = template("{+a}/{+b}/{+c}/{+d}/{+e}/{+f}.{g}#");
        let uri = "/".repeat(MAX_URI_LENGTH - 1);
        assert_eq!(t.match_uri(&uri), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn reserved_expansion_encodes_non_ascii_text() {
        // Found by the uri_template fuzz target (fuzz/regressions/uri_template/reserved-non-ascii):
        // iri-string 0.7.14 panics on a non-ASCII character in a `{+…}`/`{#…}` expansion.
        let v = vars(json!({"x": "é", "w": "cafés", "k": {"é": "ü"}, "c": "a\u{1}b"}));
        assert_eq!(template("{+x}").expand(&v), "%C3%A9");
        assert_eq!(template("{#w}").expand(&v), "#caf%C3%A9s");
        assert_eq!(template("{+k*}").expand(&v), "%C3%A9=%C3%BC");
        assert_eq!(template("{+c}").expand(&v), "a%01b");
        // A prefix counts an encoded character once (iri-string 0.7.14 miscounts after one).
        assert_eq!(template("{+w:4}").expand(&v), "caf%C3%A9");
        assert_eq!(template("{#w:5}x").expand(&v), "#caf%C3%A9sx");
        let t = vars(json!({"p": "ab%2Ccd", "q": "%C3%A9z"}));
        assert_eq!(template("{+p:3}").expand(&t), "ab%2C");
        assert_eq!(template("{+q:1}").expand(&t), "%C3%A9");
        assert_eq!(matched("{+p:3}", "ab%2C"), Some(json!({"p": "ab%2C"})));
        assert_eq!(matched("{+w:4}", "caf%C3%A9"), Some(json!({"w": "café"})));
        assert_eq!(matched("{+w:3}", "caf%C3%A9"), None);
        assert_eq!(template("{x}").expand(&v), "%C3%A9");
        assert_eq!(matched("{+x}", "%C3%A9"), Some(json!({"x": "é"})));
    }

    #[test]
    fn a_prefix_on_a_composite_value_is_left_out() {
        // RFC 6570 section 2.4.1: a prefix does not apply to lists and pairs; the rest expands.
        let v = vars(json!({"list": ["red", "green"], "keys": {"a": "1"}, "var": "value"}));
        assert_eq!(template("{list:3}/{var:3}").expand(&v), "red,green/val");
        assert_eq!(template("x{?var:2,keys:1}{&list:1}").expand(&v), "x?var=va&keys=a,1&list=red,green");
        assert_eq!(template("{var:3}{list:1}").expand(&v), "valred,green");
    }

    #[test]
    fn variable_names_keep_percent_triplets_and_come_once() {
        let t = template("n://{%41}/{a.b}{?a.b,c_1}{&%41*}");
        assert_eq!(t.variable_names(), vec!["%41", "a.b", "c_1"]);
        let values = json!({"%41": "x", "a.b": "y", "c_1": "z"});
        let uri = t.expand(values.as_object().unwrap());
        assert_eq!(uri, "n://x/y?a.b=y&c_1=z&%41=x");
        assert_eq!(t.match_uri(&uri).map(Value::Object), Some(values));
        // Each variable is named twice: defined in one expression, it is defined in the other.
        assert_eq!(t.match_uri("n://x/y?c_1=z"), None);
    }

    #[test]
    fn variable_names_and_accessors() {
        let t = template("x{a}{+b}{?c,a}{&d*}");
        assert_eq!(t.variable_names(), vec!["a", "b", "c", "d"]);
        assert_eq!(t.as_str(), "x{a}{+b}{?c,a}{&d*}");
        assert_eq!(t.to_string(), t.as_str());
        assert_eq!("{x}".parse::<UriTemplate>().unwrap(), template("{x}"));
        assert!(template("plain://text").variable_names().is_empty());
        assert_eq!(template("plain://text").match_uri("plain://text"), Some(Map::new()));
        assert_eq!(template("plain://text").match_uri("plain://text2"), None);
    }

    #[test]
    fn parse_errors_say_where() {
        let cases = [
            ("test://{id", 7, "never closed"),
            ("test://id}", 9, "without a matching"),
            ("a{}b", 1, "empty expression"),
            ("{a{b}}", 2, "inside the expression"),
            ("{=x}", 1, "reserved"),
            ("{|x}", 1, "reserved"),
            ("x{a b}", 3, "invalid character ' '"),
            ("{user-id}", 5, "invalid character '-'"),
            ("{.}", 2, "missing variable name"),
            ("{x,}", 3, "missing variable name"),
            ("{x:0}", 3, "prefix length"),
            ("{x:10000}", 3, "prefix length"),
            ("{x:3*}", 3, "prefix length"),
            ("{x.}", 2, "invalid character '.'"),
            ("file:///a b/{x}", 9, "' ' is not allowed in literal text"),
            ("x/{a}/<{b}>", 6, "'<' is not allowed in literal text"),
            ("x/50%/{a}", 4, "'%' that starts no %XX triplet"),
            ("x/{a}^", 5, "'^' is not allowed"),
        ];
        for (text, position, words) in cases {
            let error = UriTemplate::parse(text).unwrap_err();
            assert_eq!(error.position(), position, "{text}: {error}");
            assert!(error.message().contains(words), "{text}: {error}");
            assert!(error.to_string().contains(text), "{error}");
        }
        assert!(UriTemplate::parse("{a.b,c_1,%41}").is_ok());
        assert!(UriTemplate::parse("x/{a}\t").unwrap_err().message().contains("'\\t' is not allowed"));
        for ok in ["x://%41/é(1)!$&*+,;=:@~/{a}", "x://%41/(1)!$&*+,;=:@~/{a}", "x://é/{a}"] {
            assert!(UriTemplate::parse(ok).is_ok(), "{ok}: {:?}", UriTemplate::parse(ok));
        }
        let many = "{x}".repeat(MAX_EXPRESSIONS + 1);
        assert!(UriTemplate::parse(&many).unwrap_err().message().contains("expressions"));
        let long = "a".repeat(MAX_TEMPLATE_LENGTH + 1);
        assert!(UriTemplate::parse(&long).is_err());
    }
}
