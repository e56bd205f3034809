//! `matrices/variables.yaml`: the variables ROCm, CUDA, the NVIDIA container toolkit and PyTorch read, which
//! release reads each, and the prefixes listed completely enough that an unlisted name is read by nothing. It is
//! data, with a source per record, embedded like the other matrices; lint loads it only when it runs.

use serde::Deserialize;

/// The file as the binary embeds it.
const EMBEDDED: &str = include_str!("../../matrices/variables.yaml");

use crate::vendor::Vendor;

/// `amd`, `nvidia`, or `any` (PyTorch's own variables, build tools): whose stack reads it, `None` for both.
fn reader<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vendor>, D::Error> {
    let s = String::deserialize(d)?;
    match s.as_str() {
        "amd" => Ok(Some(Vendor::Amd)),
        "nvidia" => Ok(Some(Vendor::Nvidia)),
        "any" => Ok(None),
        other => Err(serde::de::Error::custom(format!(
            "vendor `{other}` is not amd, nvidia or any"
        ))),
    }
}

/// A prefix whose variables are all listed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// `HSA_`.
    pub prefix: String,
    /// Whose stack reads it; `None` for any.
    #[serde(deserialize_with = "reader")]
    pub vendor: Option<Vendor>,
    /// The component (`ROCr runtime`).
    pub reader: String,
    /// Where the complete list comes from.
    pub source: String,
    /// Fields the source does not confirm.
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// One variable.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variable {
    /// `HSA_OVERRIDE_GFX_VERSION`.
    pub name: String,
    /// Whose stack reads it; `None` for any.
    #[serde(deserialize_with = "reader")]
    pub vendor: Option<Vendor>,
    /// The component that reads it.
    pub reader: String,
    /// The first release whose sources show it, when known.
    #[serde(default)]
    pub since: Option<String>,
    /// The last release that read it (a retired variable).
    #[serde(default)]
    pub until: Option<String>,
    /// What to use instead of a retired one.
    #[serde(default)]
    pub replaced_by: Option<String>,
    /// Where it comes from.
    pub source: String,
    /// Fields the source does not confirm.
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// The whole file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variables {
    /// Prefixes listed completely.
    pub families: Vec<Family>,
    /// Every variable.
    pub variables: Vec<Variable>,
}

impl Variables {
    /// The embedded list.
    pub fn embedded() -> Result<Variables, String> {
        Self::parse(EMBEDDED)
    }

    /// Parses and checks `text`: every record names a source with a public reference, and no name is listed twice.
    pub fn parse(text: &str) -> Result<Variables, String> {
        let v: Variables =
            serde_yaml_ng::from_str(text).map_err(|e| format!("matrices/variables.yaml: {e}"))?;
        let sources = v
            .families
            .iter()
            .map(|f| (f.prefix.as_str(), f.source.as_str()))
            .chain(
                v.variables
                    .iter()
                    .map(|x| (x.name.as_str(), x.source.as_str())),
            );
        for (what, source) in sources {
            if !crate::matrix::has_public_reference(source) {
                return Err(format!(
                    "matrices/variables.yaml: {what}: source \"{source}\" names no public reference (an https:// URL or owner/repo@commit:path)"
                ));
            }
        }
        let mut names: Vec<&str> = v.variables.iter().map(|x| x.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("matrices/variables.yaml: {} is listed twice", w[0]));
        }
        Ok(v)
    }

    /// The record of `name`.
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// The family whose prefix `name` has (the longest prefix).
    pub fn family_of(&self, name: &str) -> Option<&Family> {
        self.families
            .iter()
            .filter(|f| name.starts_with(&f.prefix))
            .max_by_key(|f| f.prefix.len())
    }

    /// The listed name nearest to `name` (a typo's likely intent), when it is close.
    pub fn nearest(&self, name: &str) -> Option<&str> {
        let limit = (name.len() / 4).max(2);
        self.variables
            .iter()
            .map(|v| (strsim::levenshtein(name, &v.name), v.name.as_str()))
            .filter(|(d, _)| *d <= limit)
            .min()
            .map(|(_, n)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_list_loads() {
        let v = Variables::embedded().unwrap();
        assert!(v.get("HSA_OVERRIDE_GFX_VERSION").is_some());
        assert!(!v.families.is_empty());
    }

    #[test]
    fn refuses_a_record_without_a_public_source() {
        let t = "families: []\nvariables:\n- {name: A_B, vendor: amd, reader: x, source: \"seen in a forum\"}\n";
        assert!(Variables::parse(t).unwrap_err().contains("A_B"));
        let t = "families: []\nvariables:\n- {name: A_B, vendor: amd, reader: x, source: \"https://rocm.docs.amd.com/x\", colour: red}\n";
        assert!(Variables::parse(t).unwrap_err().contains("colour"));
        let t = "families: []\nvariables:\n- {name: A, vendor: amd, reader: x, source: \"https://rocm.docs.amd.com/x\"}\n- {name: A, vendor: amd, reader: x, source: \"https://rocm.docs.amd.com/x\"}\n";
        assert!(Variables::parse(t).unwrap_err().contains("twice"));
    }

    #[test]
    fn nearest_names() {
        let t = "families: []\nvariables:\n- {name: HIP_VISIBLE_DEVICES, vendor: amd, reader: HIP, source: \"https://rocm.docs.amd.com/x\"}\n";
        let v = Variables::parse(t).unwrap();
        assert_eq!(v.nearest("HIP_VISIBLE_DEVICE"), Some("HIP_VISIBLE_DEVICES"));
        assert_eq!(v.nearest("HCC_OPT_LEVEL"), None);
    }
}
