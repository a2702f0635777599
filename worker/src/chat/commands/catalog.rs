//! Slash commands: one registry of what the worker understands (serving
//! `commands.catalog`, `commands.complete` and `/help`), and the parsing of a message
//! text into a command. Texts whose command is not in the registry go to the agent
//! unchanged (upstream skills are slash commands too).

pub use super::registry::{CommandSpec, COMMANDS};

use iris_shared::protocol::{CommandInfo, CommandMatch, CommandsCatalog, CommandsComplete};

/// A worker command named in a message text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The command.
    pub spec: &'static CommandSpec,
    /// Everything after the command name, trimmed.
    pub args: String,
}

/// The worker command `text` invokes, if any (`/name args...`, case-insensitive name).
pub fn parse(text: &str) -> Option<Invocation> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let spec = COMMANDS
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))?;
    Some(Invocation {
        spec,
        args: args.trim().to_owned(),
    })
}

/// The full catalog.
pub fn catalog() -> CommandsCatalog {
    CommandsCatalog {
        commands: Some(
            COMMANDS
                .iter()
                .map(|spec| CommandInfo {
                    name: Some(format!("/{}", spec.name)),
                    description: Some(spec.description.to_owned()),
                    args_hint: Some(spec.args_hint.to_owned()).filter(|h| !h.is_empty()),
                    category: Some(spec.category.to_owned()),
                })
                .collect(),
        ),
    }
}

/// Commands starting with `prefix` (with or without its leading `/`), in catalog order.
pub fn complete(prefix: &str) -> CommandsComplete {
    let wanted = prefix.trim().trim_start_matches('/').to_ascii_lowercase();
    CommandsComplete {
        prefix: Some(prefix.to_owned()),
        matches: Some(
            COMMANDS
                .iter()
                .filter(|spec| spec.name.starts_with(&wanted))
                .map(|spec| CommandMatch {
                    name: Some(format!("/{}", spec.name)),
                    description: Some(spec.description.to_owned()),
                    args_hint: Some(spec.args_hint.to_owned()).filter(|h| !h.is_empty()),
                })
                .collect(),
        ),
    }
}

/// `/help`: one line per command.
pub fn help_text() -> String {
    COMMANDS
        .iter()
        .map(|spec| {
            let hint = if spec.args_hint.is_empty() {
                String::new()
            } else {
                format!(" {}", spec.args_hint)
            };
            format!("/{}{hint} — {}", spec.name, spec.description)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_command_parses_with_its_arguments() {
        let invocation = parse("/model  gpt-4o ").unwrap();
        assert_eq!(invocation.spec.name, "model");
        assert_eq!(invocation.args, "gpt-4o");
    }

    #[test]
    fn unknown_commands_and_plain_text_are_not_worker_commands() {
        assert_eq!(parse("/summarize this"), None);
        assert_eq!(parse("hello /new"), None);
    }

    #[test]
    fn completion_matches_by_prefix_with_or_without_slash() {
        let names = |prefix| -> Vec<String> {
            complete(prefix)
                .matches
                .unwrap()
                .into_iter()
                .filter_map(|m| m.name)
                .collect()
        };
        assert_eq!(names("/st"), vec!["/stop", "/steer", "/status"]);
        assert_eq!(names("re"), vec!["/retry", "/reasoning"]);
    }

    #[test]
    fn the_catalog_lists_every_registered_command() {
        let catalog = catalog().commands.unwrap();
        assert_eq!(catalog.len(), COMMANDS.len());
        for required in [
            "/new",
            "/model",
            "/retry",
            "/undo",
            "/stop",
            "/title",
            "/help",
            "/commands",
            "/status",
            "/reasoning",
            "/approve",
            "/deny",
            "/steer",
        ] {
            assert!(
                catalog.iter().any(|c| c.name.as_deref() == Some(required)),
                "{required}"
            );
        }
    }
}
