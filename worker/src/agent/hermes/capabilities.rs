//! Reading Hermes's `GET /v1/capabilities` answer for what the backend adapts to: whether
//! running turns can be steered, and at which route.

use serde_json::Value;

/// Route newer Hermes versions steer runs at, used when the capabilities announce steering
/// without naming its route.
const DEFAULT_STEER_PATH: &str = "/v1/runs/{run_id}/steer";

/// The route template (with `{run_id}`) to steer runs at, or `None` when the capabilities do
/// not announce steering (Hermes 0.19 does not).
///
/// Conservative on purpose: steering counts only if a feature whose name mentions "steer" is
/// `true`, or an endpoint whose name or path mentions "steer" is listed; a feature that is
/// present but `false` does not count.
pub(super) fn steer_path(capabilities: &Value) -> Option<String> {
    let listed_endpoint = capabilities
        .get("endpoints")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .find_map(|(name, endpoint)| {
            let path = endpoint.get("path").and_then(Value::as_str);
            let mentions_steer =
                name.contains("steer") || path.is_some_and(|p| p.contains("steer"));
            mentions_steer.then(|| path.unwrap_or(DEFAULT_STEER_PATH).to_owned())
        });
    let feature_on = capabilities
        .get("features")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .any(|(name, on)| name.contains("steer") && on.as_bool() == Some(true));
    listed_endpoint.or_else(|| feature_on.then(|| DEFAULT_STEER_PATH.to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const RECORDED_0_19: &str =
        include_str!("../../../tests/fixtures/hermes/capabilities_0.19.json");

    #[test]
    fn hermes_0_19_announces_no_steering() {
        let capabilities: Value = serde_json::from_str(RECORDED_0_19).unwrap();
        assert_eq!(steer_path(&capabilities), None);
    }

    #[test]
    fn a_listed_steer_endpoint_gives_its_path() {
        let capabilities = json!({"endpoints": {"run_steer": {"method": "POST", "path": "/v1/runs/{run_id}/steering"}}});
        assert_eq!(
            steer_path(&capabilities).as_deref(),
            Some("/v1/runs/{run_id}/steering")
        );
    }

    #[test]
    fn a_steer_feature_alone_uses_the_usual_route() {
        let capabilities = json!({"features": {"run_steer": true}});
        assert_eq!(
            steer_path(&capabilities).as_deref(),
            Some(DEFAULT_STEER_PATH)
        );
    }

    #[test]
    fn a_steer_feature_that_is_off_does_not_count() {
        let capabilities = json!({"features": {"run_steer": false}});
        assert_eq!(steer_path(&capabilities), None);
    }
}
