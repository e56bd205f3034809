//! How a check, a test or a device probe ended: the one status type of every report.

use serde::{Deserialize, Deserializer, Serialize};

/// The outcome of a check (doctor), a test (smoke, bench), a device probe (`rocmenv probe`) or a report's entry
/// (`report merge`). Tests and probes never warn: the suites' result reader refuses `warn`
/// ([`Status::deserialize_test`]), and `runtime::Check` keeps its status private, set only by its `pass`/`fail`/`skip`
/// constructors. `report merge` admits per report kind only the statuses that kind writes.
/// The order (`Ord`) is the declaration order; [`Status::rank`] orders by how bad it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It holds, or passed.
    Pass,
    /// It works, with a caveat worth acting on.
    Warn,
    /// It will not work as is, or failed.
    Fail,
    /// It could not be checked or run here; the summary says why.
    Skip,
}

impl Status {
    /// `pass`, `warn`, `fail`, `skip`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }

    /// How bad it is, for picking the worst of several: fail > warn > pass > skip.
    pub fn rank(self) -> u8 {
        match self {
            Status::Skip => 0,
            Status::Pass => 1,
            Status::Warn => 2,
            Status::Fail => 3,
        }
    }

    /// A test's status as a suite's result document gives it: `pass`, `skip` or `fail`, never `warn` (the message
    /// for anything else is the one serde gives an enum of those three).
    pub fn deserialize_test<'de, D: Deserializer<'de>>(d: D) -> Result<Status, D::Error> {
        const TEST: &[&str] = &["pass", "skip", "fail"];
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        match s.as_ref() {
            "pass" => Ok(Status::Pass),
            "skip" => Ok(Status::Skip),
            "fail" => Ok(Status::Fail),
            other => Err(serde::de::Error::unknown_variant(other, TEST)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Test {
        #[serde(deserialize_with = "Status::deserialize_test")]
        status: Status,
    }

    #[test]
    fn serialized_names_are_the_lowercase_words() {
        for s in [Status::Pass, Status::Warn, Status::Fail, Status::Skip] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(
                serde_json::from_value::<Status>(s.name().into()).unwrap(),
                s
            );
        }
    }

    #[test]
    fn a_test_never_warns() {
        let t: Test = serde_json::from_str(r#"{"status": "skip"}"#).unwrap();
        assert_eq!(t.status, Status::Skip);
        let e = serde_json::from_str::<Test>(r#"{"status": "warn"}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown variant `warn`, expected one of `pass`, `skip`, `fail`"),
            "{e}"
        );
    }

    #[test]
    fn rank_puts_fail_first_and_skip_last() {
        let mut all = [Status::Skip, Status::Fail, Status::Pass, Status::Warn];
        all.sort_by_key(|s| std::cmp::Reverse(s.rank()));
        assert_eq!(
            all,
            [Status::Fail, Status::Warn, Status::Pass, Status::Skip]
        );
    }
}
