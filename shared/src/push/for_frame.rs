//! Which written frames reach offline devices by push, and with what title and body.
//! Pushes are sent by the worker's push dispatcher; writing a frame only queues a job.

use crate::protocol::{Role, ServerBody};
use crate::push::PushKind;

/// The push a frame causes: its kind, title and body; `None` for frames that do not push
/// (the user's own messages, live and bookkeeping frames).
pub fn push_for(body: &ServerBody) -> Option<(PushKind, String, String)> {
    let text = |t: &Option<String>| t.clone().unwrap_or_default();
    match body {
        ServerBody::Message(message) => {
            let title = match message.role {
                Some(Role::Cron) => "Scheduled message",
                Some(Role::Assistant) => "Agent",
                Some(Role::System) => "System",
                Some(Role::User) | None => return None,
            };
            Some((PushKind::Message, title.to_owned(), text(&message.text)))
        }
        ServerBody::MessageStop(stop) => Some((
            PushKind::Message,
            "Agent".to_owned(),
            text(&stop.final_text),
        )),
        ServerBody::PickerApproval(picker) => Some((
            PushKind::Picker,
            "Approval needed".to_owned(),
            text(&picker.command),
        )),
        ServerBody::PickerConfirm(picker) => {
            Some((PushKind::Picker, text(&picker.title), text(&picker.message)))
        }
        ServerBody::PickerChoice(picker) => {
            Some((PushKind::Picker, text(&picker.title), String::new()))
        }
        ServerBody::PickerClarify(picker) => Some((
            PushKind::Picker,
            "Question".to_owned(),
            text(&picker.question),
        )),
        ServerBody::PickerModel(_) => None,
        ServerBody::Notification(notice) if notice.picker_id.is_none() => Some((
            PushKind::Notification,
            text(&notice.title),
            text(&notice.body),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{MessagePayload, MessageStop, Notification};

    #[test]
    fn answers_cron_messages_and_notifications_push_but_the_user_s_own_messages_do_not() {
        let message = |role| {
            ServerBody::Message(MessagePayload {
                role: Some(role),
                text: Some("hi".into()),
                ..Default::default()
            })
        };
        assert!(push_for(&message(Role::User)).is_none());
        assert_eq!(push_for(&message(Role::Cron)).unwrap().0, PushKind::Message);
        let stop = ServerBody::MessageStop(MessageStop {
            final_text: Some("done".into()),
            ..Default::default()
        });
        assert_eq!(push_for(&stop).unwrap().2, "done");
        let notice = ServerBody::Notification(Notification {
            title: Some("Backup".into()),
            ..Default::default()
        });
        assert_eq!(push_for(&notice).unwrap().0, PushKind::Notification);
    }
}
