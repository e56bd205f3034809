//! Where in a YAML text a key or value sits, for errors that name the line: serde_yaml_ng locates only what it
//! fails to parse, while the checks after parsing know a value, not a position, and serde_yaml_ng keeps no
//! positions in the values it makes, so this reads the lines of the text.

/// The line (1-based, as editors and `str::lines` count it) a serde_yaml error `e` with `message` is about.
pub(crate) fn error_line(text: &str, e: &serde_yaml_ng::Error, message: &str) -> Option<usize> {
    // YAML also breaks lines at a lone CR, NEL, LS and PS, which made errors name a line past the end of the file
    // (issue 13, found by the matrices fuzz target).
    let at = e.location().map(|l| match text.get(..l.index()) {
        Some(before) => before.matches('\n').count() + 1,
        None => l.line(),
    })?;
    // serde_yaml_ng places most errors at the key or value they are about, a missing field at the start of its
    // record (whose backticked name is no value to look for), and an error from a type of ours (a version) where
    // the value starts: find the offending key or value from there, within that record.
    let found = match unknown_field(message) {
        _ if message.contains("missing field `") => None,
        Some(key) => record_line(text, at, |l| !key_values(l, key).is_empty()),
        None => {
            offending_value(message).and_then(|v| record_line(text, at, |l| contains_token(l, v)))
        }
    };
    Some(found.unwrap_or(at))
}

/// The key named by serde's "unknown field `key`" message.
fn unknown_field(message: &str) -> Option<&str> {
    let rest = &message[message.find("unknown field `")? + "unknown field `".len()..];
    Some(&rest[..rest.find('`')?]).filter(|k| !k.is_empty())
}

/// The value serde complains about: the first `backticked` text, or N in "version N must be quoted".
fn offending_value(message: &str) -> Option<&str> {
    if let Some(i) = message.find('`') {
        let rest = &message[i + 1..];
        return Some(&rest[..rest.find('`')?]).filter(|v| !v.is_empty());
    }
    let rest = &message[message.find("version ")? + "version ".len()..];
    rest.strip_suffix(" must be quoted (YAML reads an unquoted 6.10 as 6.1)")
        .or_else(|| rest.split(' ').next())
        .filter(|v| !v.is_empty())
}

/// True when `line` holds `token` delimited as a YAML scalar (not as part of a longer word).
pub(crate) fn contains_token(line: &str, token: &str) -> bool {
    if token.is_empty() {
        return false;
    }
    let mut start = 0;
    while let Some(pos) = line[start..].find(token) {
        let at = start + pos;
        let before = line[..at].chars().next_back();
        let after = line[at + token.len()..].chars().next();
        let edge =
            |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '.' || c == '_'));
        if edge(before) && edge(after) {
            return true;
        }
        start = at + token.len();
    }
    false
}

/// The first line of the record starting at line `at` (1-based) that `hit` accepts; the record
/// ends at the next non-blank line indented no deeper than its first line.
pub(crate) fn record_line(text: &str, at: usize, hit: impl Fn(&str) -> bool) -> Option<usize> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut lines = text.lines().enumerate().skip(at.saturating_sub(1));
    let (i0, first) = lines.next()?;
    if hit(strip_comment(first)) {
        return Some(i0 + 1);
    }
    let depth = indent(first);
    for (i, l) in lines {
        let code = strip_comment(l);
        if code.trim().is_empty() {
            continue;
        }
        if indent(l) <= depth {
            break;
        }
        if hit(code) {
            return Some(i + 1);
        }
    }
    None
}

/// serde_yaml's message without its " at line L column C" (the line is reported on its own).
pub(crate) fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// `line` without a trailing `# comment` (a `#` after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The values written for `key` on one line, in block (`key: v`, `- key: v`) or flow (`{a: 1, key: v}`) style.
pub(crate) fn key_values<'a>(line: &'a str, key: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    // An empty key matches everywhere without moving on: the search below would never end (a hang the matrices
    // fuzz target found, an unknown field with an empty name from `&aa: &a [x, x]*b, *b]`).
    if key.is_empty() {
        return out;
    }
    let mut start = 0;
    while let Some(pos) = line[start..].find(key) {
        let at = start + pos;
        start = at + key.len();
        let before = line[..at].trim_end();
        let boundary = before.is_empty()
            || before.ends_with('{')
            || before.ends_with(',')
            || before.ends_with('-');
        let Some(rest) = line[at + key.len()..].strip_prefix(':') else {
            continue;
        };
        if !boundary || !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        let rest = rest.trim_start();
        let end = if rest.starts_with('"') || rest.starts_with('\'') {
            let q = rest.as_bytes()[0] as char;
            rest[1..].find(q).map(|e| e + 2).unwrap_or(rest.len())
        } else {
            rest.find([',', '}']).unwrap_or(rest.len())
        };
        out.push(rest[..end].trim().trim_matches(|c| c == '"' || c == '\''));
    }
    out
}

/// The line of the `nth` (0-based) occurrence of `key: value` (quoted or not, block or flow style),
/// for errors found after parsing.
pub(crate) fn line_of(text: &str, key: &str, value: &str, nth: usize) -> Option<usize> {
    let mut seen = 0;
    for (i, line) in text.lines().enumerate() {
        for v in key_values(strip_comment(line), key) {
            if v == value {
                if seen == nth {
                    return Some(i + 1);
                }
                seen += 1;
            }
        }
    }
    None
}

/// The 1-based line of the list item whose first key is `key: value` (`- version: "7.2.4"`, `- {name: "…", …}`).
pub(crate) fn item_line(text: &str, key: &str, value: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(i, l)| {
        let code = strip_comment(l)
            .trim_start()
            .strip_prefix("- ")?
            .trim_start();
        let code = code.strip_prefix('{').unwrap_or(code).trim_start();
        let first_key = code.strip_prefix(key)?.starts_with(':');
        (first_key && key_values(code, key).first() == Some(&value)).then_some(i + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line_of_the_key_or_the_record() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Record {
            version: String,
            #[serde(default)]
            source: Option<String>,
            #[serde(default)]
            notes: Vec<Note>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Note {
            version: String,
        }
        let line = |text: &str| {
            let e = serde_yaml_ng::from_str::<Vec<Record>>(text).unwrap_err();
            error_line(text, &e, &e.to_string())
        };
        // An unknown key, in block and in flow style, is found where it is written.
        assert_eq!(
            line("- version: \"1\"\n  source: x\n  colour: red\n"),
            Some(3)
        );
        assert_eq!(
            line("- version: \"1\"\n- {version: \"2\", colour: red}\n"),
            Some(2)
        );
        // A wrong type for `source` is named at its line, not the record's first.
        assert_eq!(line("- version: \"1\"\n  source: [a, b]\n"), Some(2));
        // A missing field is the record's: not a nested key of the same name.
        assert_eq!(
            line("- source: x\n  notes:\n    - version: \"2\"\n"),
            Some(1)
        );
    }

    #[test]
    fn line_of_finds_quoted_and_bare_values() {
        let text = "releases:\n  - version: \"6.2.0\"\n  - version: 6.2.0\n";
        assert_eq!(line_of(text, "version", "6.2.0", 0), Some(2));
        assert_eq!(line_of(text, "version", "6.2.0", 1), Some(3));
        assert_eq!(line_of(text, "version", "6.3.0", 0), None);
    }
}
