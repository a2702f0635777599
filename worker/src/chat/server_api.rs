//! Requests from the server API (cron jobs, other systems): a finished message published
//! into the chat, or a notification for the account's devices. Written once each, like a
//! device's request, and delivered to every device and through push.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::clock::now_ms;
use iris_shared::inbound::{InboundEntry, ServerRequest};
use iris_shared::protocol::{MessagePayload, Notification, ServerBody, ServerFrame};

use super::ChatActor;

/// A server API request waiting for the ones before it to be written.
pub(super) struct QueuedServerRequest {
    entry: InboundEntry,
    received_ms: u64,
    server_request: ServerRequest,
}
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::writer::TurnWriter;

impl ChatActor {
    /// Queues a server API request of this chat; they are written one at a time, in the
    /// order read, so two publishes reach history, the outbox and the devices in the order
    /// they were sent.
    pub(super) fn serve_server_request(
        &mut self,
        entry: InboundEntry,
        received_ms: u64,
        server_request: ServerRequest,
        ctx: &mut Context<Self>,
    ) {
        self.server_requests.push_back(QueuedServerRequest {
            entry,
            received_ms,
            server_request,
        });
        if !self.writing_server_request {
            self.write_next_server_request(ctx);
        }
    }

    /// Writes the oldest queued server request, then acknowledges its entry and goes on
    /// with the next.
    fn write_next_server_request(&mut self, ctx: &mut Context<Self>) {
        let Some(QueuedServerRequest {
            entry,
            received_ms,
            server_request,
        }) = self.server_requests.pop_front()
        else {
            self.writing_server_request = false;
            return;
        };
        self.writing_server_request = true;
        let publisher = self.deps.turn.publisher.clone();
        let scope = self.scope();
        let partition = entry.partition;
        let work = async move {
            let outgoing = match server_request {
                ServerRequest::Publish { role, text, key } => {
                    // With a key, the effect is keyed by it, so a client retrying the same
                    // publish gets one message.
                    let origin = key.map_or_else(|| entry_key(&entry), |key| format!("k-{key}"));
                    let message = MessagePayload {
                        message_id: Some(format!("s{partition}-{origin}")),
                        role: Some(role),
                        text: Some(text),
                        ts: Some(received_ms),
                        ..Default::default()
                    };
                    let frame = ServerFrame::new(ServerBody::Message(message.clone()));
                    (origin, Outgoing::broadcast(frame).with_history(message))
                }
                ServerRequest::Notify { kind, title, body } => {
                    let notice = Notification {
                        kind: Some(kind),
                        title: Some(title),
                        body: Some(body),
                        ts: Some(now_ms()),
                        ..Default::default()
                    };
                    let frame = ServerFrame::new(ServerBody::Notification(notice));
                    (entry_key(&entry), Outgoing::broadcast(frame))
                }
            };
            let (origin, outgoing) = outgoing;
            let writer = TurnWriter::new(publisher, scope, partition, origin);
            writer.fixed(0, outgoing).await?;
            Ok::<_, PublishError>(entry)
        };
        ctx.spawn(
            work.in_current_span()
                .into_actor(self)
                .map(|result, act, ctx| match result {
                    Ok(entry) => {
                        act.acknowledge(vec![entry], ctx);
                        act.write_next_server_request(ctx);
                    }
                    Err(PublishError::Fenced) => {
                        act.server_requests.clear();
                        act.writing_server_request = false;
                        act.fenced_off(ctx);
                    }
                    Err(PublishError::Redis(err)) => {
                        tracing::warn!(%err, "server request not written; it will be handled again");
                        act.write_next_server_request(ctx);
                    }
                }),
        );
    }
}

fn entry_key(entry: &InboundEntry) -> String {
    entry.entry_id.clone()
}
