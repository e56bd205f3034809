//! ASCII output where the locale is not UTF-8: `✓ ✗` become `+ x`, `≥` becomes `>=`, and so on, so a terminal in
//! the C locale (a bare container, a serial console, an old CI runner) shows the report instead of mojibake.
//!
//! Only human output is transliterated; JSON, Dockerfiles and other data keep their UTF-8.

use std::borrow::Cow;
use std::io::{self, Write};

/// True when the locale's character set is UTF-8, as POSIX picks the locale for LC_CTYPE: the first non-empty of
/// `LC_ALL`, `LC_CTYPE`, `LANG`; with none set the locale is "C", which is ASCII.
pub fn locale_is_utf8() -> bool {
    locale_is_utf8_in(|k| std::env::var(k).ok())
}

fn locale_is_utf8_in(var: impl Fn(&str) -> Option<String>) -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| var(k).filter(|v| !v.is_empty()));
    match locale {
        // `C.UTF-8`, `en_US.utf8`, `de_DE.UTF-8@euro`.
        Some(l) => {
            let l = l.to_ascii_lowercase();
            l.contains("utf-8") || l.contains("utf8")
        }
        None => false,
    }
}

/// The ASCII stand-in for one character, or `None` when it is ASCII already.
fn ascii_for(c: char) -> Option<&'static str> {
    if c.is_ascii() {
        return None;
    }
    Some(match c {
        '✓' | '✔' => "+",
        '✗' | '✘' => "x",
        '≥' => ">=",
        '≤' => "<=",
        '≠' => "!=",
        '≈' => "~",
        '→' => "->",
        '←' => "<-",
        '↔' => "<->",
        '—' => "--",
        '–' | '‐' | '−' => "-",
        '…' => "...",
        '×' => "x",
        '·' | '•' => "*",
        '±' => "+/-",
        'µ' | 'μ' => "u",
        '°' => " deg",
        '²' => "^2",
        '“' | '”' | '„' => "\"",
        '‘' | '’' | '‚' => "'",
        '\u{a0}' | '\u{2009}' | '\u{202f}' => " ",
        _ => "?",
    })
}

/// `text` with every character outside ASCII replaced by its stand-in.
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match ascii_for(c) {
            Some(a) => s.push_str(a),
            None => s.push(c),
        }
    }
    Cow::Owned(s)
}

/// A writer that transliterates UTF-8 text to ASCII on its way to `inner`. A character split across two writes is
/// held until its last byte arrives; bytes that are not UTF-8 at all become `?`.
pub struct AsciiWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> AsciiWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        AsciiWriter {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for AsciiWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(&to_ascii(s));
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // Valid by construction: `valid_up_to` says so.
                    out.push_str(&to_ascii(std::str::from_utf8(good).unwrap_or_default()));
                    match e.error_len() {
                        // An incomplete character at the end: wait for the rest of it.
                        None => {
                            rest = bad;
                            break;
                        }
                        Some(n) => {
                            out.push('?');
                            rest = &bad[n..];
                        }
                    }
                }
            }
        }
        let keep = rest.to_vec();
        self.inner.write_all(out.as_bytes())?;
        self.pending = keep;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for AsciiWriter<W> {
    fn drop(&mut self) {
        // A character cut off for good.
        if !self.pending.is_empty() {
            let _ = self.inner.write_all(b"?");
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locale_follows_posix_precedence() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(!locale_is_utf8_in(env(&[])));
        assert!(locale_is_utf8_in(env(&[("LANG", "C.UTF-8")])));
        assert!(locale_is_utf8_in(env(&[("LANG", "en_US.utf8")])));
        assert!(!locale_is_utf8_in(env(&[("LANG", "C")])));
        assert!(!locale_is_utf8_in(env(&[
            ("LANG", "en_US.UTF-8"),
            ("LC_ALL", "C")
        ])));
        assert!(!locale_is_utf8_in(env(&[
            ("LANG", "C.UTF-8"),
            ("LC_CTYPE", "POSIX")
        ])));
        assert!(locale_is_utf8_in(env(&[
            ("LANG", "C"),
            ("LC_CTYPE", "de_DE.UTF-8@euro")
        ])));
        // An empty variable does not count.
        assert!(locale_is_utf8_in(env(&[
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "")
        ])));
    }

    #[test]
    fn marks_and_symbols_become_ascii() {
        assert_eq!(
            to_ascii("✓ driver ≥ 550.54.15 — ok → next… ✗"),
            "+ driver >= 550.54.15 -- ok -> next... x"
        );
        assert_eq!(to_ascii("plain"), "plain");
        assert_eq!(to_ascii("日本"), "??");
    }

    #[test]
    fn a_character_split_across_writes_is_joined() {
        let mut out = Vec::new();
        {
            let mut w = AsciiWriter::new(&mut out);
            let bytes = "a ✓ b\n".as_bytes();
            for b in bytes {
                w.write_all(std::slice::from_ref(b)).unwrap();
            }
            w.write_all(b"\xff!").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "a + b\n?!");
    }
}
