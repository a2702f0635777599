//! The registry of slash commands the worker handles itself.

/// One slash command.
#[derive(Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// Name without the slash.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Shape of its arguments (empty if none).
    pub args_hint: &'static str,
    /// Group shown in the app's command list.
    pub category: &'static str,
}

const fn command(
    name: &'static str,
    description: &'static str,
    args_hint: &'static str,
    category: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        description,
        args_hint,
        category,
    }
}

/// Every command, in the order the catalog lists them.
pub static COMMANDS: &[CommandSpec] = &[
    command(
        "new",
        "Start a new conversation in this chat",
        "",
        "session",
    ),
    command("retry", "Run your last message again", "", "session"),
    command("undo", "Forget the last exchange", "", "session"),
    command("title", "Rename this chat", "<name>", "session"),
    command("stop", "Stop the running turn", "", "control"),
    command("steer", "Steer the running turn", "<text>", "control"),
    command(
        "approve",
        "Approve the pending command",
        "[once|session|always]",
        "control",
    ),
    command("deny", "Deny the pending command", "", "control"),
    command(
        "model",
        "Show or choose the model for this chat",
        "[model]",
        "settings",
    ),
    command(
        "reasoning",
        "Show or hide the agent's reasoning",
        "[on|off]",
        "settings",
    ),
    command(
        "busy",
        "Show or choose what a message sent while the agent works does",
        "[queue|interrupt|steer]",
        "settings",
    ),
    command(
        "status",
        "Show the agent, model and what is running",
        "",
        "info",
    ),
    command("help", "List the commands", "", "info"),
    command("commands", "List the commands", "", "info"),
];
