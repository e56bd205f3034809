//! `.dockerignore`, read the way the docker CLI reads it (moby/patternmatcher): one pattern per line, `#` comments,
//! `!` re-includes, `*` and `?` stop at `/`, `**` spans directories, a pattern that matches a directory excludes what is
//! under it, and the last matching line wins. `Dockerfile` and `.dockerignore` are always sent, as docker sends them.

use std::path::Path;

/// One piece of a compiled pattern.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Char(char),
    /// `*`: any run of characters but `/`.
    Star,
    /// `?`: one character but `/`.
    One,
    /// `**` at the end: anything, `/` included.
    Rest,
    /// `**` or `**/` before more pattern: zero or more whole directories.
    Dirs,
    /// `[...]`: ranges, negated with a leading `^`.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Pattern {
    tokens: Vec<Token>,
    /// A `!` line: matching files are sent after all.
    exception: bool,
}

/// The patterns of one `.dockerignore`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DockerIgnore {
    patterns: Vec<Pattern>,
    /// The file has `!` lines of its own (the two built-in exceptions name top-level files and never force a walk).
    exceptions: bool,
}

impl DockerIgnore {
    /// Parses the file's text; the error names the 1-based line and what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut patterns = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let mut p = line.trim();
            if p.is_empty() || p.starts_with('#') {
                continue;
            }
            let exception = p.starts_with('!');
            if exception {
                p = p[1..].trim();
            }
            let cleaned = clean(p);
            if cleaned.is_empty() {
                continue;
            }
            let tokens = compile(&cleaned).map_err(|why| format!("line {}: {why}", n + 1))?;
            patterns.push(Pattern { tokens, exception });
        }
        let exceptions = patterns.iter().any(|p| p.exception);
        // What docker does too: the daemon needs these two whatever the file says.
        for keep in ["Dockerfile", ".dockerignore"] {
            patterns.push(Pattern {
                tokens: keep.chars().map(Token::Char).collect(),
                exception: true,
            });
        }
        Ok(DockerIgnore {
            patterns,
            exceptions,
        })
    }

    /// True when `path` (relative to the context, `/`-separated) is left out of the context.
    pub fn excludes(&self, path: &Path) -> bool {
        let file = path.to_string_lossy().replace('\\', "/");
        let parts: Vec<&str> = file.split('/').filter(|s| !s.is_empty()).collect();
        let mut excluded = false;
        for p in &self.patterns {
            // An exclusion cannot change an excluded file, nor an exception an included one.
            if p.exception != excluded {
                continue;
            }
            let hit = (1..=parts.len()).any(|i| matches(&p.tokens, &parts[..i].join("/")));
            if hit {
                excluded = !p.exception;
            }
        }
        excluded
    }

    /// True when a directory that matches may still hold files an exception brings back, so it must be walked.
    pub fn has_exceptions(&self) -> bool {
        self.exceptions
    }
}

/// What Go's `filepath.Clean` does to a pattern, then the leading `/` dropped (patterns are relative to the context).
fn clean(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out.join("/")
}

fn compile(p: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = p.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                if chars.get(i) == Some(&'/') {
                    i += 1;
                }
                tokens.push(if i >= chars.len() {
                    Token::Rest
                } else {
                    Token::Dirs
                });
                continue;
            }
            '*' => tokens.push(Token::Star),
            '?' => tokens.push(Token::One),
            '\\' => {
                i += 1;
                let c = *chars
                    .get(i)
                    .ok_or_else(|| format!("`{p}` ends with a lone backslash"))?;
                tokens.push(Token::Char(c));
            }
            '[' => {
                let mut j = i + 1;
                let negated = chars.get(j) == Some(&'^');
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    let c = *chars
                        .get(j)
                        .ok_or_else(|| format!("`{p}` has an unclosed `[`"))?;
                    if c == ']' && (!ranges.is_empty()) {
                        break;
                    }
                    let lo = if c == '\\' {
                        j += 1;
                        *chars
                            .get(j)
                            .ok_or_else(|| format!("`{p}` has an unclosed `[`"))?
                    } else {
                        c
                    };
                    if chars.get(j + 1) == Some(&'-') && chars.get(j + 2).is_some_and(|c| *c != ']')
                    {
                        let hi = chars[j + 2];
                        if hi < lo {
                            return Err(format!("`{p}` has the reversed range {lo}-{hi}"));
                        }
                        ranges.push((lo, hi));
                        j += 3;
                    } else {
                        ranges.push((lo, lo));
                        j += 1;
                    }
                }
                tokens.push(Token::Class { negated, ranges });
                i = j;
            }
            c => tokens.push(Token::Char(c)),
        }
        i += 1;
    }
    Ok(tokens)
}

/// Whole-string match of `tokens` against `s`, by dynamic programming (no exponential backtracking on many stars).
fn matches(tokens: &[Token], s: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    // ok[j]: the tokens so far can consume exactly s[..j].
    let mut ok = vec![false; s.len() + 1];
    ok[0] = true;
    for t in tokens {
        let mut next = vec![false; s.len() + 1];
        for j in 0..=s.len() {
            if !ok[j] {
                continue;
            }
            match t {
                Token::Char(c) => {
                    if s.get(j) == Some(c) {
                        next[j + 1] = true;
                    }
                }
                Token::One => {
                    if s.get(j).is_some_and(|c| *c != '/') {
                        next[j + 1] = true;
                    }
                }
                Token::Class { negated, ranges } => {
                    if let Some(c) = s.get(j) {
                        let inside = ranges.iter().any(|(lo, hi)| lo <= c && c <= hi);
                        if inside != *negated {
                            next[j + 1] = true;
                        }
                    }
                }
                Token::Star => {
                    next[j] = true;
                    let mut k = j;
                    while k < s.len() && s[k] != '/' {
                        k += 1;
                        next[k] = true;
                    }
                }
                Token::Rest => next[j..].iter_mut().for_each(|n| *n = true),
                Token::Dirs => {
                    // `(.*/)?`: nothing, or anything that ends in `/`.
                    next[j] = true;
                    for k in j..s.len() {
                        if s[k] == '/' {
                            next[k + 1] = true;
                        }
                    }
                }
            }
        }
        ok = next;
    }
    ok[s.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignore(text: &str) -> DockerIgnore {
        DockerIgnore::parse(text).unwrap()
    }

    fn out(d: &DockerIgnore, path: &str) -> bool {
        d.excludes(Path::new(path))
    }

    #[test]
    fn directories_exclude_what_is_under_them() {
        let d = ignore("# data stays home\ndata\n/build/\nnode_modules\n");
        assert!(out(&d, "data"));
        assert!(out(&d, "data/train/0001.png"));
        assert!(out(&d, "build/x.o"));
        assert!(!out(&d, "src/data.py"));
        assert!(
            !out(&d, "src/data/x"),
            "patterns are anchored at the context root"
        );
        assert!(!out(&d, "run.sh"));
    }

    #[test]
    fn stars_stop_at_slashes_and_double_stars_do_not() {
        let d = ignore("*.ckpt\n**/*.pyc\ndocs/**\nlogs/*/debug.log\n");
        assert!(out(&d, "model.ckpt"));
        assert!(!out(&d, "weights/model.ckpt"), "`*` does not cross `/`");
        assert!(out(&d, "a.pyc") && out(&d, "pkg/sub/a.pyc"));
        assert!(out(&d, "docs/a/b/c.md"));
        assert!(out(&d, "logs/run1/debug.log"));
        assert!(!out(&d, "logs/run1/deep/debug.log"));
    }

    #[test]
    fn the_last_matching_line_wins() {
        let d = ignore("*.md\n!README.md\nREADME-secret.md\n");
        assert!(out(&d, "CHANGES.md"));
        assert!(!out(&d, "README.md"));
        let d = ignore("data\n!data/keep.txt\n");
        assert!(out(&d, "data/big.bin"));
        assert!(!out(&d, "data/keep.txt"));
        assert!(d.has_exceptions());
        assert!(!ignore("data\n").has_exceptions());
    }

    #[test]
    fn dockerfile_and_dockerignore_are_always_sent() {
        let d = ignore("*\n");
        assert!(out(&d, "anything"));
        assert!(!out(&d, "Dockerfile"));
        assert!(!out(&d, ".dockerignore"));
        assert!(!d.has_exceptions());
    }

    #[test]
    fn question_marks_classes_escapes_and_cleaning() {
        let d = ignore("file?.txt\n[a-c]x\n[^0-9]y\n\\*literal\n./tmp/../cache//\n  spaced  \n");
        assert!(out(&d, "file1.txt") && !out(&d, "file10.txt"));
        assert!(out(&d, "bx") && !out(&d, "dx"));
        assert!(out(&d, "zy") && !out(&d, "5y"));
        assert!(out(&d, "*literal") && !out(&d, "xliteral"));
        assert!(out(&d, "cache/x"));
        assert!(out(&d, "spaced"));
    }

    #[test]
    fn malformed_patterns_name_their_line() {
        assert_eq!(
            DockerIgnore::parse("ok\n[abc\n").unwrap_err(),
            "line 2: `[abc` has an unclosed `[`"
        );
        assert!(DockerIgnore::parse("x\\")
            .unwrap_err()
            .starts_with("line 1:"));
        assert!(DockerIgnore::parse("[z-a]").is_err());
    }

    #[test]
    fn many_stars_do_not_explode() {
        let d = ignore(&format!("{}b\n", "*a".repeat(30)));
        assert!(!out(&d, &"a".repeat(200)));
    }
}
