//! Text helpers the low layers share; this module imports nothing from the crate.

/// `msg` with its control characters escaped (`\n`, `\u{85}`), so a message that quotes text from a file stays one
/// line (issue 13: serde quotes YAML keys, which may hold newlines).
pub fn one_line(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    for c in msg.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
