//! Approvals as Iris sees them on Hermes: Hermes 0.19 gives approvals no id (it answers
//! whatever approval the run is waiting on), so the backend names each request of a run
//! `"<run_id>:<n>"`, n counting from 1, and maps the app's words to Hermes's choices.

/// The id of the `n`th approval request (from 1) of run `run_id`.
pub(super) fn approval_id(run_id: &str, n: u32) -> String {
    format!("{run_id}:{n}")
}

/// Hermes's choice (`once`, `session`, `always`, `deny`) for the app's `choice`. Synonyms of
/// yes mean `once` (the narrowest approval) and of no mean `deny`; anything else goes to
/// Hermes as it is, lower-cased, so Hermes's own validation message reaches the user.
pub(super) fn hermes_choice(choice: &str) -> String {
    let choice = choice.trim().to_lowercase();
    match choice.as_str() {
        "approve" | "approved" | "allow" | "yes" | "y" | "ok" => "once".to_owned(),
        "no" | "n" | "reject" | "deny" | "denied" => "deny".to_owned(),
        _ => choice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_ids_name_the_run_and_the_request() {
        assert_eq!(approval_id("run_abc", 2), "run_abc:2");
    }

    #[test]
    fn yes_words_mean_once_and_no_words_mean_deny() {
        for yes in ["approve", "Allow", "yes"] {
            assert_eq!(hermes_choice(yes), "once");
        }
        assert_eq!(hermes_choice("no"), "deny");
    }

    #[test]
    fn hermes_choices_pass_through() {
        for choice in ["once", "session", "always", "deny"] {
            assert_eq!(hermes_choice(choice), choice);
        }
    }

    #[test]
    fn unknown_choices_reach_hermes_for_it_to_refuse() {
        assert_eq!(hermes_choice("Maybe"), "maybe");
    }
}
