//! The one JUnit XML writer (through quick-junit), shared by `validate --junit`, `smoke`/`bench --junit` and
//! `report merge --format junit`: each builds [`Suite`]s of [`Case`]s, and [`write`] alone decides how a status
//! becomes XML (a failure or a skip carries a message and a text; a warning passes, with it in `system-out`).

use crate::fleet::Merged;
use crate::status::Status;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// One `<testcase>`.
#[derive(Debug, Clone)]
pub struct Case {
    /// `name=`.
    pub name: String,
    /// `classname=`.
    pub classname: String,
    /// How it ended.
    pub status: Status,
    /// A failure's or skip's `message=` (one line), when there is one.
    pub message: Option<String>,
    /// A failure's or skip's text.
    pub text: String,
    /// `system-out`: a warning (written `warning: …`), or a note on a pass.
    pub note: Option<String>,
    /// `time=`, when measured.
    pub time: Option<Duration>,
    /// `<property>` name and value pairs.
    pub properties: Vec<(String, String)>,
}

impl Case {
    /// A case with no message, text, note, time or properties.
    pub fn new(name: impl Into<String>, classname: impl Into<String>, status: Status) -> Case {
        Case {
            name: name.into(),
            classname: classname.into(),
            status,
            message: None,
            text: String::new(),
            note: None,
            time: None,
            properties: Vec::new(),
        }
    }
}

/// One `<testsuite>`.
#[derive(Debug, Clone)]
pub struct Suite {
    /// `name=`.
    pub name: String,
    /// Its cases, in order.
    pub cases: Vec<Case>,
}

/// The `<testsuites>` document named `report`.
pub fn write(report: &str, suites: Vec<Suite>) -> String {
    let mut out = Report::new(report);
    for s in suites {
        let mut suite = TestSuite::new(s.name);
        for c in s.cases {
            suite.add_test_case(test_case(c));
        }
        out.add_test_suite(suite);
    }
    // Serialising owned strings into memory cannot fail.
    out.to_string().unwrap_or_default()
}

fn test_case(c: Case) -> TestCase {
    let mut st = match c.status {
        Status::Pass | Status::Warn => TestCaseStatus::success(),
        Status::Skip => TestCaseStatus::skipped(),
        Status::Fail => TestCaseStatus::non_success(NonSuccessKind::Failure),
    };
    if matches!(c.status, Status::Fail | Status::Skip) {
        if let Some(m) = c.message {
            st.set_message(m);
        }
        st.set_description(c.text);
    }
    let mut case = TestCase::new(c.name, st);
    case.set_classname(c.classname);
    if let Some(t) = c.time {
        case.set_time(t);
    }
    match (c.status, c.note) {
        (Status::Warn, Some(n)) => {
            case.set_system_out(format!("warning: {n}"));
        }
        (_, Some(n)) => {
            case.set_system_out(n);
        }
        (_, None) => {}
    }
    for (k, v) in &c.properties {
        case.add_property((k.as_str(), v.as_str()));
    }
    case
}

/// `report merge` as JUnit: a `<testsuite>` per node, a `<testcase>` per check it reported (classname
/// `rocmenv.<group>`); a failure carries its summary and fix, a warning passes with the warning as its output, a skip
/// says why.
pub fn merge_junit(m: &Merged) -> String {
    let suites = m
        .nodes
        .iter()
        .enumerate()
        .map(|(place, n)| Suite {
            name: n.name.clone(),
            cases: m
                .rows
                .iter()
                .filter_map(|r| {
                    let c = r.cell(place)?;
                    let with_fix = match &c.fix {
                        Some(f) => format!("{}\nfix: {f}", c.summary),
                        None => c.summary.to_string(),
                    };
                    let mut case = Case::new(
                        r.id.as_str(),
                        format!("rocmenv.{}", r.group.replace(' ', ".")),
                        c.status,
                    );
                    case.message = Some(c.summary.to_string());
                    case.note = (c.status == Status::Warn).then(|| with_fix.clone());
                    case.text = with_fix;
                    Some(case)
                })
                .collect(),
        })
        .collect();
    write("rocmenv report merge", suites)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_becomes_its_element() {
        let case = |status, note: Option<&str>| Case {
            message: Some("why".into()),
            text: "why\nfix: do it".into(),
            note: note.map(Into::into),
            ..Case::new("t", "rocmenv.x", status)
        };
        let xml = write(
            "r",
            vec![Suite {
                name: "s".into(),
                cases: vec![
                    case(Status::Fail, None),
                    case(Status::Skip, None),
                    case(Status::Warn, Some("careful")),
                    case(Status::Pass, Some("a note")),
                ],
            }],
        );
        assert!(xml.contains(r#"<failure message="why">why"#), "{xml}");
        assert!(xml.contains(r#"<skipped message="why">why"#), "{xml}");
        assert!(
            xml.contains("<system-out>warning: careful</system-out>"),
            "{xml}"
        );
        assert!(xml.contains("<system-out>a note</system-out>"), "{xml}");
        assert_eq!(xml.matches("message=").count(), 2, "{xml}");
        assert!(xml.contains(r#"tests="4" failures="1""#), "{xml}");
    }
}
