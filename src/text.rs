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

/// `8× NVIDIA H100 SXM5 80GB, AMD Radeon 780M`: equal names counted once each, in first-seen order.
pub fn counted(names: impl IntoIterator<Item = String>) -> String {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for n in names {
        match counted.iter_mut().find(|(m, _)| *m == n) {
            Some((_, c)) => *c += 1,
            None => counted.push((n, 1)),
        }
    }
    counted
        .into_iter()
        .map(|(n, c)| if c > 1 { format!("{c}× {n}") } else { n })
        .collect::<Vec<_>>()
        .join(", ")
}
