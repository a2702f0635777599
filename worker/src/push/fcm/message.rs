//! The FCM HTTP v1 request body for one notification to one device.

use iris_shared::push::PushJob;
use serde_json::{json, Value};

/// `{"message": {token, notification {title, body}, data {chat_id, seq, kind}}}`: the
/// system shows the notification; the app reads the data (all strings, as FCM requires) to
/// open the chat and sync from the seq.
pub fn message(registration_token: &str, job: &PushJob) -> Value {
    json!({
        "message": {
            "token": registration_token,
            "notification": {
                "title": job.title,
                "body": job.body,
            },
            "data": {
                "chat_id": job.chat_id,
                "seq": job.seq.to_string(),
                "kind": job.kind.as_str(),
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use iris_shared::push::PushKind;

    use super::*;

    #[test]
    fn data_values_are_strings() {
        let job = PushJob {
            account: "alice".into(),
            chat_id: "android:default".into(),
            seq: 42,
            kind: PushKind::Message,
            title: "Hermes".into(),
            body: "Done.".into(),
        };
        assert_eq!(
            message("tok", &job),
            json!({"message": {
                "token": "tok",
                "notification": {"title": "Hermes", "body": "Done."},
                "data": {"chat_id": "android:default", "seq": "42", "kind": "message"},
            }})
        );
    }
}
