//! Where an OpenAI-compatible upstream lives: the configured `IRIS_AGENT_URL` made into one
//! base that the `/v1/...` routes are appended to.

use crate::agent::AgentError;

/// Turns the configured URL into a base without trailing `/` or `/v1`, so that
/// `http://host:8642`, `http://host:8642/`, `http://host:8642/v1` and `host:8642` (http is
/// assumed) all reach the same routes. A path prefix (`https://host/api/v1`) is kept.
pub(super) fn normalize_base_url(configured: &str) -> Result<String, AgentError> {
    let trimmed = configured.trim();
    if trimmed.is_empty() {
        return Err(AgentError::Upstream(
            "IRIS_AGENT_URL is not set; point it at the OpenAI-compatible endpoint, \
             e.g. http://127.0.0.1:8642"
                .into(),
        ));
    }
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("http://{trimmed}")
    };
    let without_slash = with_scheme.trim_end_matches('/');
    let base = without_slash
        .strip_suffix("/v1")
        .unwrap_or(without_slash)
        .trim_end_matches('/');
    let parsed = reqwest::Url::parse(base).map_err(|err| invalid(configured, &err.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(configured, "only http and https are supported"));
    }
    Ok(base.to_owned())
}

fn invalid(configured: &str, why: &str) -> AgentError {
    AgentError::Upstream(format!(
        "IRIS_AGENT_URL {:?} is not a usable URL ({why})",
        iris_shared::redact::in_text(configured)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_v1_and_trailing_slashes_all_give_the_same_base() {
        for configured in [
            "http://127.0.0.1:8642",
            "http://127.0.0.1:8642/",
            "http://127.0.0.1:8642/v1",
            "http://127.0.0.1:8642/v1/",
            " 127.0.0.1:8642 ",
        ] {
            assert_eq!(
                normalize_base_url(configured).unwrap(),
                "http://127.0.0.1:8642",
                "{configured}"
            );
        }
    }

    #[test]
    fn a_path_prefix_before_v1_is_kept() {
        assert_eq!(
            normalize_base_url("https://example.com/api/v1").unwrap(),
            "https://example.com/api"
        );
    }

    #[test]
    fn empty_and_non_http_urls_are_refused_with_the_setting_named() {
        for configured in ["", "ftp://example.com"] {
            let Err(AgentError::Upstream(message)) = normalize_base_url(configured) else {
                panic!("{configured:?} was accepted");
            };
            assert!(message.contains("IRIS_AGENT_URL"), "{message}");
        }
    }
}
