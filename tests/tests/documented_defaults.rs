//! The defaults the docs state are the binaries' defaults: README's settings table, the
//! values docs/*.md give next to a setting and the chart's settings are read and compared
//! with what `iris-gateway --help` and `iris-worker --help` print, so a default changed in code fails here until
//! the docs change with it (and a new setting fails until the README lists it).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use iris_tests::binaries::binary;

/// Setting name → default (`None`: the binary names no default) of one binary.
type Defaults = BTreeMap<String, Option<String>>;

/// The `[env: NAME]` / `[default: X]` pairs of a binary's long help.
fn help_defaults(binary_name: &str) -> Defaults {
    let mut command = Command::new(binary(binary_name));
    command.arg("--help");
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("IRIS_")) {
        command.env_remove(name);
    }
    let output = command.output().expect("the binary runs");
    assert!(output.status.success(), "{binary_name} --help failed");
    let help = String::from_utf8(output.stdout).expect("help is UTF-8");
    let mut defaults = Defaults::new();
    let mut current: Option<String> = None;
    for line in help.lines().map(str::trim) {
        if line.starts_with('-') {
            current = None;
        } else if let Some(env) = line.strip_prefix("[env: ") {
            let name = env
                .trim_end_matches(']')
                .split('=')
                .next()
                .unwrap_or_default();
            current = Some(name.to_owned());
            defaults.insert(name.to_owned(), None);
        }
        if let (Some(name), Some(value)) = (&current, line.strip_prefix("[default: ")) {
            defaults.insert(name.clone(), Some(value.trim_end_matches(']').to_owned()));
        }
    }
    defaults
}

fn repo_file(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The backticked pieces of a table cell, in order.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// One row of README's settings table.
struct Row {
    names: Vec<String>,
    binaries: Vec<&'static str>,
    defaults: Vec<String>,
    line: String,
}

fn readme_rows() -> Vec<Row> {
    repo_file("README.md")
        .lines()
        .filter(|line| line.starts_with("| `IRIS_"))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let binaries = match cells[1].trim() {
                "both" => vec!["iris-gateway", "iris-worker"],
                "gateway" => vec!["iris-gateway"],
                "worker" => vec!["iris-worker"],
                other => panic!("README row names binary {other:?}: {line}"),
            };
            Row {
                names: backticked(cells[0]),
                binaries,
                defaults: backticked(cells[2]),
                line: line.to_owned(),
            }
        })
        .collect()
}

/// Proves that every default in README's settings table is the default the binaries print
/// for that setting, that a setting whose default the README gives in words (off, random)
/// has none in the binary, and that every setting a binary takes is in the table.
#[test]
fn readme_settings_table_states_the_binaries_own_defaults() {
    let helps: BTreeMap<&str, Defaults> = ["iris-gateway", "iris-worker"]
        .into_iter()
        .map(|name| (name, help_defaults(name)))
        .collect();
    let mut documented: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for row in readme_rows() {
        // A default the README spells as a pattern (`file://<temp dir>/…`) is computed.
        let literal = row.defaults.len() == row.names.len()
            && row.defaults.iter().all(|value| !value.contains('<'));
        for binary_name in &row.binaries {
            documented
                .entry(binary_name)
                .or_default()
                .extend(row.names.iter().cloned());
            let help = &helps[binary_name];
            for (index, name) in row.names.iter().enumerate() {
                let Some(actual) = help.get(name) else {
                    wrong.push(format!(
                        "{binary_name} has no setting {name} ({})",
                        row.line
                    ));
                    continue;
                };
                let stated = literal.then(|| row.defaults[index].clone());
                let matches = match (&stated, actual) {
                    (Some(stated), Some(actual)) => stated == actual,
                    (None, None) => true,
                    (None, Some(_)) => row.defaults.iter().any(|d| d.contains('<')),
                    (Some(_), None) => false,
                };
                if !matches {
                    wrong.push(format!(
                        "{name} ({binary_name}): README says {stated:?}, --help says {actual:?}"
                    ));
                }
            }
        }
    }
    for (binary_name, help) in &helps {
        for name in help.keys().filter(|name| name.starts_with("IRIS_")) {
            if !documented[binary_name].contains(name) {
                wrong.push(format!(
                    "{name} ({binary_name}) is not in README's settings table"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "README's settings table is off:\n{}",
        wrong.join("\n")
    );
}

/// A number and its unit as a doc writes it (`10 s`, `64 KiB`, `500 ms`, `32`).
fn parse_amount(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..digits_end].replace(',', "").parse().ok()?;
    Some((number, text[digits_end..].trim()))
}

/// `amount` in the unit of setting `name` (ms for `_MS`, seconds for `_SECS`, bytes for
/// `_BYTES`), or `None` when its unit does not fit the setting.
fn in_setting_unit(name: &str, (number, unit): (f64, &str)) -> Option<f64> {
    let factor = if name.ends_with("_MS") {
        match unit {
            "ms" => 1.0,
            "s" => 1_000.0,
            "min" => 60_000.0,
            _ => return None,
        }
    } else if name.ends_with("_SECS") {
        match unit {
            "s" => 1.0,
            "min" => 60.0,
            _ => return None,
        }
    } else if name.ends_with("_BYTES") {
        match unit {
            "" | "bytes" => 1.0,
            "KiB" => 1_024.0,
            "MiB" => 1_048_576.0,
            _ => return None,
        }
    } else {
        // A count: any noun may follow it (`32 levels`, `50/s`), but no time or size.
        match unit {
            "ms" | "s" | "min" | "KiB" | "MiB" | "GiB" => return None,
            _ => 1.0,
        }
    };
    Some(number * factor)
}

/// Values docs/*.md state for a setting: `10 s (`IRIS_X`)` and `(500 ms, `IRIS_X`)`
/// (an amount right before the setting, in a parenthesis or leading one), and table rows
/// `| `IRIS_X` | 32 |`. Returns (file, setting, amount text).
fn stated_in_docs() -> Vec<(String, String, String)> {
    let mut stated = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .expect("docs/")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    files.sort();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a doc");
        let text = text.replace('\n', " ");
        for (at, _) in text.match_indices("`IRIS_") {
            let name_end = text[at + 1..].find('`').map(|end| at + 1 + end);
            let Some(name_end) = name_end else { continue };
            let name = text[at + 1..name_end].to_owned();
            let before = &text[..at];
            let after = &text[name_end + 1..];
            // `| `IRIS_X` | 32 |`: the table's next cell.
            if before.ends_with("| ") {
                if let Some(cell) = after.strip_prefix(" | ") {
                    let value = cell.split(" |").next().unwrap_or_default();
                    stated.push((file.clone(), name.clone(), value.to_owned()));
                }
                continue;
            }
            // `10 s (`IRIS_X`)` or `(500 ms, `IRIS_X`)`; a group of settings in one
            // parenthesis (`(`IRIS_A`, `IRIS_B`)`) states no value for each.
            let in_group = after.starts_with(", `IRIS_");
            let amount = if let Some(prefix) = before.strip_suffix(" (").filter(|_| !in_group) {
                prefix
                    .rsplit(|c: char| !(c.is_alphanumeric() || " .,".contains(c)))
                    .next()
            } else if let Some(prefix) = before.strip_suffix(", ") {
                prefix
                    .rsplit_once('(')
                    .map(|(_, inside)| inside)
                    .filter(|inside| !inside.contains('`') && !in_group)
            } else {
                None
            };
            let Some(amount) = amount else { continue };
            // Only the last amount: `within 10 s` → `10 s`.
            let words: Vec<&str> = amount.split_whitespace().collect();
            let last = match words.as_slice() {
                [.., number, unit] if parse_amount(number).is_some() => format!("{number} {unit}"),
                [.., number] if parse_amount(number).is_some() => (*number).to_owned(),
                _ => continue,
            };
            stated.push((file.clone(), name, last));
        }
    }
    stated
}

/// Proves that every value docs/*.md state right next to a setting (`within 10 s
/// (`IRIS_HELLO_TIMEOUT_MS`)`, the input limits table) is that setting's default in the
/// binary that takes it.
#[test]
fn defaults_the_docs_name_are_the_binaries_own_defaults() {
    let mut defaults = help_defaults("iris-gateway");
    defaults.extend(help_defaults("iris-worker"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (file, name, amount_text) in stated_in_docs() {
        let Some(Some(default)) = defaults.get(&name) else {
            continue;
        };
        let Ok(default) = default.parse::<f64>() else {
            continue;
        };
        let Some(amount) = parse_amount(&amount_text) else {
            continue;
        };
        checked += 1;
        match in_setting_unit(&name, amount) {
            Some(value) if (value - default).abs() < 1e-9 => {}
            value => wrong.push(format!(
                "docs/{file}: {name} is {amount_text:?} ({value:?}); the default is {default}"
            )),
        }
    }
    println!("{checked} defaults stated in docs/ checked");
    assert!(
        checked >= 5,
        "found only {checked} stated defaults: is the scan broken?"
    );
    assert!(
        wrong.is_empty(),
        "docs state other defaults than the code:\n{}",
        wrong.join("\n")
    );
}

/// Proves that the chart's `config.IRIS_*` values (helm/iris-cluster/values.yaml), which
/// helm/README.md calls the binaries' defaults, are those defaults (`""` standing for a
/// setting with none).
#[test]
fn the_charts_settings_are_the_binaries_own_defaults() {
    let mut defaults = help_defaults("iris-gateway");
    defaults.extend(help_defaults("iris-worker"));
    let values = repo_file("helm/iris-cluster/values.yaml");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in values.lines() {
        let Some((name, value)) = line.trim().split_once(": ") else {
            continue;
        };
        if !name.starts_with("IRIS_") || line.trim_start().starts_with('#') {
            continue;
        }
        let value = value.trim().trim_matches('"');
        let Some(default) = defaults.get(name) else {
            wrong.push(format!("{name}: no binary takes it"));
            continue;
        };
        checked += 1;
        let stated = Some(value.to_owned()).filter(|v| !v.is_empty() && v != "null");
        if stated.is_some() && stated != *default {
            wrong.push(format!(
                "{name}: the chart says {value:?}, --help says {default:?}"
            ));
        }
    }
    assert!(
        checked >= 10,
        "found only {checked} chart settings: is the scan broken?"
    );
    assert!(
        wrong.is_empty(),
        "the chart's settings are off:\n{}",
        wrong.join("\n")
    );
}
