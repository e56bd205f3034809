//! `collect --redact`: host names and user names become stable placeholders (`host1`, `user1`) wherever they stand
//! as a word, in every file, path, link target and value of a bundle; environment values that look like secrets
//! become `[redacted]`. What was replaced is counted in `REDACTED.txt`, without the original values.

use std::collections::{BTreeMap, BTreeSet};

/// What stands for a secret value.
pub const SECRET: &str = "[redacted]";

/// Names of variables whose values are secrets, whatever they look like (matched in upper case).
const SECRET_NAMES: [&str; 8] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
];

/// A secret value this long or longer is also replaced wherever else it appears (a shorter one, like `1`, would
/// hit every number; it is replaced in the environment only).
const SECRET_MIN_GLOBAL: usize = 8;

/// Why an environment value was redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretWhy {
    /// The variable's name says it holds a secret.
    Name,
    /// The value looks like a token or a key (long hex or base64).
    Value,
    /// The value is a URL with a user and password in it.
    UrlCredentials,
}

/// The replacements of one bundle.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    /// (original, placeholder), longest first so `node1.example.com` goes before `node1`.
    words: Vec<(String, String)>,
    hosts: usize,
    users: BTreeSet<String>,
    /// Secret values replaced everywhere (long enough not to hit other text).
    literals: Vec<String>,
    /// Variables whose values were replaced, and why.
    pub env: BTreeMap<String, SecretWhy>,
    /// How many variables were left out of the bundle because doctor does not read them.
    pub env_left_out: usize,
}

/// A byte that continues a word: a name next to one of these is part of a longer name, not this one.
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Replaces `from` by `to`: everywhere, or with `whole_word` only where it stands as a word.
fn replace(hay: &[u8], from: &[u8], to: &[u8], whole_word: bool) -> Vec<u8> {
    if from.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from)
            && (!whole_word
                || ((i == 0 || !word_byte(hay[i - 1]))
                    && hay.get(i + from.len()).is_none_or(|b| !word_byte(*b))))
        {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// True when a host name is worth hiding: not empty, not `localhost`, not the kernel's `(none)`.
fn real_host(name: &str) -> bool {
    let n = name.trim();
    !n.is_empty() && n != "localhost" && n != "(none)" && !n.starts_with("localhost.")
}

/// True for the value of a variable named like a secret holder.
fn secret_name(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    SECRET_NAMES.iter().any(|s| up.contains(s))
}

/// True when a run of characters looks like a token or key: 32+ hex digits, or 32+ base64 characters with upper
/// case, lower case and digits mixed (paths start with `/` and break at `.`, so they do not look like this).
fn token_like(run: &str) -> bool {
    if run.len() < 32 {
        return false;
    }
    if run.bytes().all(|b| b.is_ascii_hexdigit()) {
        return true;
    }
    !run.starts_with('/')
        && run.bytes().any(|b| b.is_ascii_uppercase())
        && run.bytes().any(|b| b.is_ascii_lowercase())
        && run.bytes().any(|b| b.is_ascii_digit())
}

/// Why a value looks secret, or `None`.
fn secret_value(value: &str) -> Option<SecretWhy> {
    let b64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-');
    if value.split(|c: char| !b64(c)).any(token_like) {
        return Some(SecretWhy::Value);
    }
    // scheme://user:password@host
    if let Some(i) = value.find("://") {
        let rest = &value[i + 3..];
        let auth = rest.split('/').next().unwrap_or("");
        if auth.contains('@') && auth.split('@').next().is_some_and(|u| u.contains(':')) {
            return Some(SecretWhy::UrlCredentials);
        }
    }
    None
}

impl Redactor {
    /// Placeholders for these host names (`host1`, …) and user names (`user1`, …), in the order given.
    pub fn new(hosts: &[String], users: &[String]) -> Self {
        let mut r = Redactor::default();
        let mut seen = BTreeSet::new();
        for h in hosts.iter().map(|h| h.trim()).filter(|h| real_host(h)) {
            // A fully qualified name also hides its first label (`node1` of `node1.example.com`).
            for name in [h, h.split('.').next().unwrap_or(h)] {
                if seen.insert(name.to_string()) {
                    r.hosts += 1;
                    r.words.push((name.to_string(), format!("host{}", r.hosts)));
                }
            }
        }
        for u in users.iter().map(|u| u.trim()).filter(|u| !u.is_empty()) {
            if seen.insert(u.to_string()) {
                r.users.insert(u.to_string());
                r.words
                    .push((u.to_string(), format!("user{}", r.users.len())));
            }
        }
        r.words.sort_by_key(|w| std::cmp::Reverse(w.0.len()));
        r
    }

    /// The placeholder of a user name, when it is one that is hidden.
    pub fn user(&self, name: &str) -> Option<&str> {
        self.words
            .iter()
            .find(|(w, p)| w == name && p.starts_with("user"))
            .map(|(_, p)| p.as_str())
    }

    /// Redacts the secret values of an environment in place and remembers them, so they are replaced elsewhere too.
    pub fn environment(&mut self, env: &mut BTreeMap<String, String>) {
        for (k, v) in env.iter_mut() {
            let why = if secret_name(k) && !v.is_empty() {
                Some(SecretWhy::Name)
            } else {
                secret_value(v)
            };
            if let Some(why) = why {
                if v.len() >= SECRET_MIN_GLOBAL && !self.literals.contains(v) {
                    self.literals.push(v.clone());
                }
                self.env.insert(k.clone(), why);
                *v = SECRET.to_string();
            }
        }
        self.literals.sort_by_key(|l| std::cmp::Reverse(l.len()));
    }

    /// The bytes with every secret value, host name and user name replaced.
    pub fn bytes(&self, b: &[u8]) -> Vec<u8> {
        let mut out = b.to_vec();
        for l in &self.literals {
            out = replace(&out, l.as_bytes(), SECRET.as_bytes(), false);
        }
        for (w, p) in &self.words {
            out = replace(&out, w.as_bytes(), p.as_bytes(), true);
        }
        out
    }

    /// The text with every secret value, host name and user name replaced.
    pub fn text(&self, s: &str) -> String {
        // Only ASCII words are put in and taken out at ASCII boundaries, so the text stays UTF-8.
        String::from_utf8(self.bytes(s.as_bytes()))
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Every string value of a JSON document, redacted. Keys (the schema, variable and tool names) and the fields
    /// that name a check are kept: a host called `gpu` must not turn `gpu.supported` into `host1.supported`.
    pub fn json(&self, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => *s = self.text(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            Value::Object(o) => {
                for (k, x) in o.iter_mut() {
                    if !matches!(k.as_str(), "id" | "area" | "status" | "mode") {
                        self.json(x);
                    }
                }
            }
            _ => {}
        }
    }

    /// `/etc/passwd` with the full names (GECOS) of hidden users emptied; the names themselves go with `bytes`.
    pub fn passwd(&self, text: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(text);
        let mut out = String::new();
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches('\n');
            let mut f: Vec<&str> = body.split(':').collect();
            if f.len() >= 5 && self.users.contains(f[0]) {
                f[4] = "";
                out.push_str(&f.join(":"));
                out.push_str(&line[body.len()..]);
            } else {
                out.push_str(line);
            }
        }
        out.into_bytes()
    }

    /// One line: how many of each were replaced.
    pub fn summary(&self) -> String {
        let n =
            |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        format!(
            "{}, {}, {}",
            n(self.hosts, "host name", "host names"),
            n(self.users.len(), "user name", "user names"),
            n(self.env.len(), "environment value", "environment values")
        )
    }

    /// What `REDACTED.txt` says: what was replaced, by what, and never the original values.
    pub fn report(&self) -> String {
        let mut s = String::from(
            "rocmenv collect --redact replaced these in every file, path and value of this bundle:\n",
        );
        let placeholders = |prefix: &str| {
            let mut p: Vec<&str> = self
                .words
                .iter()
                .filter(|(_, p)| p.starts_with(prefix))
                .map(|(_, p)| p.as_str())
                .collect();
            p.sort();
            p.dedup();
            p.join(", ")
        };
        s.push_str(&format!(
            "- host names: {} ({})\n",
            self.hosts,
            if self.hosts == 0 {
                "none found".to_string()
            } else {
                format!("now {}", placeholders("host"))
            }
        ));
        s.push_str(&format!(
            "- user names: {} ({}); their full names in /etc/passwd are emptied; root and system accounts are kept\n",
            self.users.len(),
            if self.users.is_empty() {
                "none but root and system accounts".to_string()
            } else {
                format!("now {}", placeholders("user"))
            }
        ));
        let list = |why: SecretWhy| {
            self.env
                .iter()
                .filter(|(_, w)| **w == why)
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
        };
        let by_name = list(SecretWhy::Name);
        let by_value = list(SecretWhy::Value);
        let by_url = list(SecretWhy::UrlCredentials);
        s.push_str(&format!(
            "- environment values: {} (now {SECRET})\n",
            self.env.len()
        ));
        for (what, names) in [
            (
                "named like a secret (TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL, AUTH, COOKIE)",
                by_name,
            ),
            (
                "looking like a token or key (32+ hex or mixed base64 characters)",
                by_value,
            ),
            ("URLs with a user and password", by_url),
        ] {
            if !names.is_empty() {
                s.push_str(&format!("  - {what}: {}\n", names.join(", ")));
            }
        }
        s.push_str(&format!(
            "- environment variables left out: {} (only those doctor reads are kept: the GPU ones and PATH)\n",
            self.env_left_out
        ));
        s.push_str(
            "Everything else (device ids, paths, versions, group names) is as rocmenv read it.\n",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_replaced_as_words_only() {
        let r = Redactor::new(&["vm".into()], &["alice".into()]);
        let t = r.text("vm kvm vmx /home/alice/bin alice2 USER=alice vm.example.com");
        assert_eq!(
            t,
            "host1 kvm vmx /home/user1/bin alice2 USER=user1 host1.example.com"
        );
        let r = Redactor::new(&["node7.example.com".into()], &[]);
        assert_eq!(
            r.text("node7.example.com node7 node70"),
            "host1 host2 node70"
        );
        assert_eq!(r.user("alice"), None);
        assert!(Redactor::new(&["localhost".into(), "(none)".into()], &[])
            .words
            .is_empty());
    }

    #[test]
    fn secrets_are_found_by_name_and_by_look() {
        let mut env: BTreeMap<String, String> = [
            ("GITHUB_TOKEN", "ghp_short"),
            (
                "PATH",
                "/usr/local/bin:/usr/bin:/home/alice/miniconda3/envs/torch_2024_rocm/bin",
            ),
            ("HF_HUB_CACHE", "/data/hf"),
            ("SOME_ID", "0123456789abcdef0123456789abcdef"),
            ("BLOB", "aGVsbG8gd29ybGQgdGhpcyBpcyBBIHNlY3JldCAxMjM0NQ=="),
            ("HTTPS_PROXY", "http://bob:hunter2@proxy:3128"),
            ("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),
            ("XAUTHORITY", "/run/user/1000/gdm/Xauthority"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut r = Redactor::new(&[], &[]);
        r.environment(&mut env);
        assert_eq!(env["GITHUB_TOKEN"], SECRET);
        assert_eq!(env["SOME_ID"], SECRET);
        assert_eq!(env["BLOB"], SECRET);
        assert_eq!(env["HTTPS_PROXY"], SECRET);
        assert_eq!(env["XAUTHORITY"], SECRET);
        assert!(env["PATH"].starts_with("/usr/local/bin"));
        assert_eq!(env["HF_HUB_CACHE"], "/data/hf");
        assert_eq!(env["HSA_OVERRIDE_GFX_VERSION"], "11.0.0");
        assert_eq!(r.env["HTTPS_PROXY"], SecretWhy::UrlCredentials);
        // Long secret values go wherever they appear; the report names the variables, not the values.
        assert_eq!(
            r.text("id 0123456789abcdef0123456789abcdef here"),
            "id [redacted] here"
        );
        let report = r.report();
        assert!(report.contains("GITHUB_TOKEN"), "{report}");
        assert!(!report.contains("ghp_short") && !report.contains("hunter2"));
    }

    #[test]
    fn passwd_loses_the_full_names_of_hidden_users() {
        let r = Redactor::new(&[], &["alice".into()]);
        let p = b"root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice Liddell,,,:/home/alice:/bin/bash\n";
        let out = String::from_utf8(r.bytes(&r.passwd(p))).unwrap();
        assert_eq!(
            out,
            "root:x:0:0:root:/root:/bin/bash\nuser1:x:1000:1000::/home/user1:/bin/bash\n"
        );
    }

    #[test]
    fn json_values_are_redacted_and_the_schema_kept() {
        let r = Redactor::new(&["gpu".into()], &["alice".into()]);
        let mut v = serde_json::json!({
            "node": "gpu", "user": {"name": "alice"}, "gpu": 1, "n": 3,
            "checks": [{"id": "gpu.supported", "area": "gpu", "summary": "gpu has 1 GPU"}]
        });
        r.json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "node": "host1", "user": {"name": "user1"}, "gpu": 1, "n": 3,
                "checks": [{"id": "gpu.supported", "area": "gpu", "summary": "host1 has 1 GPU"}]
            })
        );
    }
}
