//! Requests from the server API (cron jobs, other systems) found in the inbound stream: a
//! finished message published into the chat, or a notification for the account's devices.
//! Gateways write them at once (`iris_shared::server_publish`); these come from gateways of
//! an earlier release. Written once each and delivered to every device and through push.

use actix::prelude::*;
use tracing::Instrument as _;

use iris_shared::inbound::{InboundEntry, ServerRequest};
use iris_shared::server_publish::{self, Origin};

use super::ChatActor;

/// A server API request waiting for the ones before it to be written.
pub(super) struct QueuedServerRequest {
    entry: InboundEntry,
    received_ms: u64,
    server_request: ServerRequest,
}
use crate::turn::publisher::PublishError;
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
            // Keyed as a gateway keys its own write of such a request.
            let origin = Origin::of(&server_request, partition, entry.entry_id.clone());
            let outgoing = server_publish::outgoing(server_request, &origin, received_ms);
            let writer = TurnWriter::new(publisher, scope, partition, origin.id);
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
