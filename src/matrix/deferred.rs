//! The built-in matrices kept as JSON until first read: each file (`Matrices`' fields), and some fields of rocm.yaml.
//!
//! Most of rocm.yaml is each release's distributions with their kernels, and its images, wheels and library
//! targets; a doctor run reads the distributions of the one release it checks against and none of the rest, yet
//! building every release's took three fifths of parsing the file (2026-12-07, this VM: the file 328 µs, without
//! those fields 81 µs). build.rs (`defer`) therefore takes those fields out of the embedded JSON: each one's value
//! goes, as JSON text, into one string beside it, and the field holds its index. Reading the field parses its text
//! then, once.
//!
//! A number where a list belongs is only read so while the built-in JSON is parsed (`while_built_in`); from a
//! `--matrices` directory every field is parsed as it comes, and a number there is the type error it always was.

use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize, Serializer};
use std::cell::Cell;
use std::sync::OnceLock;

/// The deferred values of the built-in rocm.yaml, one after another (build.rs, `defer`).
static TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/rocm.deferred.json"));

/// Where each deferred value is in `TEXT`: start and end byte.
static SPANS: &[(u32, u32)] = include!(concat!(env!("OUT_DIR"), "/rocm.deferred.rs"));

thread_local! {
    /// Set while the built-in JSON is parsed: a field's number is then the index of its deferred value.
    static BUILT_IN: Cell<bool> = const { Cell::new(false) };
}

/// Runs `parse` with deferred fields read as indexes into the built-in text.
pub(super) fn while_built_in<R>(parse: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            BUILT_IN.with(|b| b.set(self.0));
        }
    }
    let _reset = Reset(BUILT_IN.with(|b| b.replace(true)));
    parse()
}

/// A matrix file or field: its value, or (built in) its JSON text, parsed on first read. Reads through `Deref` as
/// the value itself. The built-in text is what build.rs wrote from the YAML that
/// `embedded_json_is_the_validated_yaml` validates in every test run, so it cannot fail to parse in a tested build;
/// should it, that is a build defect, said as such.
pub struct Deferred<T> {
    /// Set once parsed (matrix::load's tests ask whether a file was).
    pub(super) value: OnceLock<T>,
    json: Option<Text<T>>,
}

/// Built-in JSON not parsed yet: what it is (`embedded:rocm.yaml`), the text, and how to parse it.
struct Text<T> {
    name: &'static str,
    json: &'static str,
    parse: fn(&'static str, &'static str) -> T,
}

impl<T> Clone for Text<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Text<T> {}

impl<T> Deferred<T> {
    /// A value parsed already.
    pub fn ready(value: T) -> Self {
        Deferred {
            value: OnceLock::from(value),
            json: None,
        }
    }

    /// Built-in JSON named `name`, parsed by `parse(name, json)` when first read.
    pub(super) fn built_in(
        name: &'static str,
        json: &'static str,
        parse: fn(&'static str, &'static str) -> T,
    ) -> Self {
        Deferred {
            value: OnceLock::new(),
            json: Some(Text { name, json, parse }),
        }
    }
}

/// How a deferred field of rocm.yaml is parsed when read.
fn parse_field<T: DeserializeOwned>(name: &'static str, json: &'static str) -> T {
    serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("rocmenv was built with a defective embedded {name} field: {e}"))
}

impl<T: Default> Default for Deferred<T> {
    fn default() -> Self {
        Deferred::ready(T::default())
    }
}

impl<T> std::ops::Deref for Deferred<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value.get_or_init(|| {
            let t = self.json.expect("a Deferred without a value has its JSON");
            (t.parse)(t.name, t.json)
        })
    }
}

impl<T> std::ops::DerefMut for Deferred<T> {
    fn deref_mut(&mut self) -> &mut T {
        let _ = std::ops::Deref::deref(self);
        self.value.get_mut().expect("parsed just above")
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Deferred<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if !BUILT_IN.with(Cell::get) {
            return T::deserialize(d).map(Deferred::ready);
        }
        let at = usize::deserialize(d)?;
        let &(start, end) = SPANS
            .get(at)
            .ok_or_else(|| D::Error::custom(format!("no deferred value {at} in the build")))?;
        let json = TEXT
            .get(start as usize..end as usize)
            .ok_or_else(|| D::Error::custom(format!("deferred value {at} is outside the text")))?;
        Ok(Deferred::built_in("rocm.yaml", json, parse_field))
    }
}

impl<T: Serialize> Serialize for Deferred<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// `for d in &release.distros`, as over the value.
impl<'a, T> IntoIterator for &'a Deferred<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (&**self).into_iter()
    }
}

impl<T: Clone> Clone for Deferred<T> {
    fn clone(&self) -> Self {
        Deferred {
            value: self.value.clone(),
            json: self.json,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Deferred<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Record {
        id: u32,
        list: Deferred<Vec<String>>,
    }

    /// Built in, a number is an index into the deferred text, parsed when read; elsewhere the value is parsed as
    /// it comes, and a number is the type error it always was.
    #[test]
    fn built_in_fields_are_parsed_when_read_and_others_as_they_come() {
        let first = SPANS
            .first()
            .expect("build.rs deferred some rocm.yaml fields");
        let text = &TEXT[first.0 as usize..first.1 as usize];
        let r: Record = while_built_in(|| serde_json::from_str(r#"{"id": 1, "list": 0}"#)).unwrap();
        assert_eq!(r.id, 1);
        assert!(r.list.value.get().is_none(), "not parsed before it is read");
        assert_eq!(r.list.json.map(|t| t.json), Some(text));
        assert!(!BUILT_IN.with(Cell::get), "the flag is reset");
        let r: Record = serde_json::from_str(r#"{"id": 2, "list": ["a", "b"]}"#).unwrap();
        assert_eq!(*r.list, vec!["a".to_string(), "b".to_string()]);
        let e = serde_json::from_str::<Record>(r#"{"id": 3, "list": 0}"#)
            .err()
            .expect("a number is no list outside the built-in JSON");
        assert!(e.to_string().contains("expected a sequence"), "{e}");
        let e = while_built_in(|| serde_json::from_str::<Record>(r#"{"id": 4, "list": 999999}"#))
            .err()
            .expect("an index past the spans");
        assert!(e.to_string().contains("no deferred value 999999"), "{e}");
    }
}
