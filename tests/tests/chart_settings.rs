//! The Helm chart writes IRIS_* settings by name (helm/iris-cluster): its values schema
//! admits a list of them per component and its templates set others. A name the binary
//! does not read would be silently ignored in production; this test holds the chart to the
//! settings the binaries' `--help` lists.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use iris_tests::binaries::{binary, workspace_root, GATEWAY, WORKER};

/// Env names a binary reads, from the `[env: NAME=...]` notes of its `--help`.
fn accepted(binary_name: &str) -> BTreeSet<String> {
    let output = Command::new(binary(binary_name))
        .arg("--help")
        .output()
        .expect("running --help");
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    help.split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split(['=', ']']).next())
        .map(str::to_owned)
        .collect()
}

/// Every word of `text` that is an `IRIS_*` name.
fn names_in(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("IRIS_"))
        .map(str::to_owned)
        .collect()
}

/// The `IRIS_*` names the templates of one component write.
fn written_by_templates(component: &str) -> BTreeSet<String> {
    let dir = workspace_root()
        .join("helm/iris-cluster/templates")
        .join(component);
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("reading the chart's templates") {
        let path = entry.expect("template entry").path();
        let text = std::fs::read_to_string(&path).expect("reading a template");
        names.extend(names_in(&text));
    }
    names
}

/// The `IRIS_*` keys the values schema admits under `<component>.config`.
fn admitted_by_schema(schema: &serde_json::Value, component: &str) -> BTreeSet<String> {
    schema["properties"][component]["properties"]["config"]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("values.schema.json has no {component}.config properties"))
        .keys()
        .filter(|key| key.starts_with("IRIS_"))
        .cloned()
        .collect()
}

/// Proves that every IRIS_* setting the chart can write for gateways or workers (in its
/// templates, or as a `config` key its values schema admits) is one that binary reads.
#[test]
fn every_setting_the_chart_writes_is_one_the_binary_reads() {
    let schema_path = workspace_root().join("helm/iris-cluster/values.schema.json");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&schema_path)).expect("reading values.schema.json"),
    )
    .expect("values.schema.json is JSON");
    for (component, binary_name) in [("gateway", GATEWAY), ("worker", WORKER)] {
        let reads = accepted(binary_name);
        assert!(
            reads.contains("IRIS_REDIS_URL"),
            "{binary_name} --help: {reads:?}"
        );
        let mut written = written_by_templates(component);
        written.extend(admitted_by_schema(&schema, component));
        let unknown: Vec<&String> = written.difference(&reads).collect();
        assert!(
            unknown.is_empty(),
            "the chart writes {component} settings that {binary_name} does not read: {unknown:?}"
        );
    }
}
