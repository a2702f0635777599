//! Serving one request: pairing, `ping`, `sync`, push registration, history, search and
//! media here; chat work forwarded to the worker that owns the chat's partition.

use actix_web_actors::ws;
use tracing::Instrument as _;

use iris_shared::clock::now_ms;
use iris_shared::inbound::InboundRequest;
use iris_shared::media::record::{self, MediaRecord};
use iris_shared::pickers;
use iris_shared::protocol::{
    AppBody, AppFrame, ErrorCode, Notification, Pong, ServerBody, ServerFrame, DEFAULT_CHAT_ID,
};
use iris_shared::publish::ChatScope;
use iris_shared::push::{self, PushTarget};
use iris_shared::user_message::{self, send_from_gateway, UserMessage};

use super::replay::ReplayPurpose;
use super::{Phase, Session};
use crate::metrics;

impl Session {
    /// Serves one parsed request (the session is not blocked).
    pub(super) fn handle_request(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        let span = iris_shared::traced_span!(
            "iris.request",
            otel.kind = "server",
            request = frame.body.type_name(),
            id = frame.id,
            account = self.device.as_ref().map(|d| d.account.as_str()),
            device = self.device.as_ref().map(|d| d.device_id.as_str()),
        );
        let _entered = span.enter();
        self.serve_request(frame, ctx);
    }

    fn serve_request(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        if !matches!(frame.body, AppBody::Sync(_)) && self.start_live_delivery(ctx) {
            // A gap fill started: this request waits for it, ahead of anything deferred.
            self.deferred.push_front(frame);
            return;
        }
        let id = frame.id;
        match (&self.phase, frame.body) {
            (Phase::AwaitingHello, AppBody::Hello(hello)) => self.pair(id, hello, ctx),
            (Phase::AwaitingHello, _) => {
                self.send_error(ctx, id, ErrorCode::Auth, "send hello first");
            }
            (_, AppBody::Hello(_)) => {
                self.send_error(
                    ctx,
                    id,
                    ErrorCode::Unsupported,
                    "this connection is already paired",
                );
            }
            (_, AppBody::Ping(ping)) => {
                let pong = Pong {
                    ts: ping.ts.or(Some(now_ms())),
                };
                self.send(ctx, ServerFrame::new(ServerBody::Pong(pong)).with_id(id));
            }
            (_, AppBody::Sync(sync)) => match sync.cursor {
                Some(cursor) => self.begin_sync(id, cursor, ctx),
                None => self.send_error(ctx, id, ErrorCode::Unsupported, "sync needs a cursor"),
            },
            (_, AppBody::PickerSelect(select)) if frame.chat_id.is_none() => {
                let frame = AppFrame {
                    body: AppBody::PickerSelect(select),
                    ..frame
                };
                self.forward_to_picker_chat(frame, ctx);
            }
            (_, AppBody::Search(search)) => {
                let frame = AppFrame {
                    body: AppBody::Search(search),
                    ..frame
                };
                self.serve_search(frame, ctx);
            }
            (
                _,
                body @ (AppBody::MediaUploadStart(_)
                | AppBody::MediaUploadEnd(_)
                | AppBody::MediaPull(_)),
            ) => {
                let frame = AppFrame { body, ..frame };
                self.handle_media(frame, ctx);
            }
            (_, AppBody::FcmRegister(register)) => {
                let target = PushTarget {
                    fcm_token: register.fcm_token,
                    ntfy_topic: register.ntfy_topic,
                };
                self.register_push(id, target, ctx);
            }
            (_, AppBody::History(history)) => {
                let frame = AppFrame {
                    body: AppBody::History(history),
                    ..frame
                };
                self.serve_history(frame, ctx);
            }
            (
                _,
                body @ (AppBody::MessageSend(_)
                | AppBody::AgentStop(_)
                | AppBody::AgentSteer(_)
                | AppBody::PickerSelect(_)
                | AppBody::CommandsCatalog(_)
                | AppBody::CommandsComplete(_)
                | AppBody::ChannelCreate(_)
                | AppBody::ChannelRename(_)
                | AppBody::ChannelSetDefault(_)
                | AppBody::ChannelDelete(_)
                | AppBody::ReadReceipt(_)),
            ) => {
                let frame = AppFrame { body, ..frame };
                self.forward_to_worker(frame, ctx);
            }
        }
    }

    /// A paired device that sends anything but `sync` first is not resuming: held frames
    /// flow live at once instead of waiting out the sync grace. Returns whether a gap fill
    /// started (the session is blocked).
    fn start_live_delivery(&mut self, ctx: &mut ws::WebsocketContext<Self>) -> bool {
        let Some(cursor) = self.cursor.as_mut() else {
            return false;
        };
        let (to_send, gap) = cursor.start_live();
        for frame in &to_send {
            self.send_routed(ctx, frame);
        }
        match gap {
            Some(range) => {
                metrics::incr(&self.state.metrics.gap_fills_total);
                self.start_replay(range, ReplayPurpose::GapFill, ctx);
                true
            }
            None => false,
        }
    }

    /// `fcm.register`: stores (or clears, with empty strings) the device's push targets;
    /// answered with a `notification` for this device.
    fn register_push(
        &mut self,
        id: Option<u64>,
        target: PushTarget,
        ctx: &mut ws::WebsocketContext<Self>,
    ) {
        let Some(device) = &self.device else { return };
        let (redis, account, device_id) = (
            self.state.redis.clone(),
            device.account.clone(),
            device.device_id.clone(),
        );
        let store = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            push::set_target(&mut conn, &account, &device_id, &target)
                .await
                .map_err(|err| err.to_string())
        };
        self.serve_in_order(ctx, store, move |result, act, ctx| match result {
            Ok(()) => {
                let notice = Notification::generic("Push registration saved");
                act.send(
                    ctx,
                    ServerFrame::new(ServerBody::Notification(notice)).with_id(id),
                );
            }
            Err(err) => {
                tracing::warn!(%err, "push registration failed");
                act.send_error(
                    ctx,
                    id,
                    ErrorCode::Internal,
                    "push registration not saved; retry",
                );
            }
        });
    }

    /// A `picker.select` without `chat_id` goes to the chat whose turn opened the picker.
    fn forward_to_picker_chat(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        let (Some(device), AppBody::PickerSelect(select)) = (&self.device, &frame.body) else {
            return;
        };
        let Some(picker_id) = select.picker_id.clone() else {
            self.send_error(
                ctx,
                frame.id,
                ErrorCode::Unsupported,
                "picker.select needs a picker_id",
            );
            return;
        };
        let account = device.account.clone();
        let redis = self.state.redis.clone();
        let lookup_id = picker_id.clone();
        let lookup = async move {
            let mut conn = redis.get().await.map_err(|err| err.to_string())?;
            pickers::chat_of_open(&mut conn, &account, &lookup_id)
                .await
                .map_err(|err| err.to_string())
        };
        self.serve_in_order(ctx, lookup, move |result, act, ctx| match result {
            Ok(Some(chat_id)) => act.forward_to_worker(frame.with_chat(chat_id), ctx),
            Ok(None) => {
                let message = pickers::not_open_message(&picker_id);
                act.send_error(ctx, frame.id, ErrorCode::NotFound, message);
            }
            Err(err) => {
                tracing::warn!(%err, "picker lookup failed");
                act.send_error(
                    ctx,
                    frame.id,
                    ErrorCode::Internal,
                    "request not accepted; retry",
                );
            }
        });
    }

    /// The chat a request is about. A thread may be named as `chat_id` itself or as
    /// `thread_id` under its parent's `chat_id`; `channel.create` of a thread goes to its
    /// parent, `read.receipt` to the chat in its payload. Unknown chats are refused.
    pub(super) fn resolve_chat(&self, frame: &AppFrame) -> Result<String, String> {
        let Some(device) = &self.device else {
            return Err("not paired".into());
        };
        let named = match &frame.body {
            AppBody::ChannelCreate(create) => create.parent_chat_id.clone(),
            AppBody::ReadReceipt(receipt) => receipt.chat_id.clone(),
            _ => None,
        };
        let chat_id = named
            .or_else(|| frame.thread_id.clone())
            .or_else(|| frame.chat_id.clone())
            .unwrap_or_else(|| DEFAULT_CHAT_ID.to_owned());
        let Some(parent) = device.chats.get(&chat_id) else {
            return Err(format!("unknown chat {chat_id:?}"));
        };
        if let (Some(_), Some(envelope_chat)) = (&frame.thread_id, &frame.chat_id) {
            if parent.as_ref() != Some(envelope_chat) && envelope_chat != &chat_id {
                return Err(format!("{chat_id:?} is not a thread of {envelope_chat:?}"));
            }
        }
        Ok(chat_id)
    }

    /// Validates a chat-scoped request and appends it to its partition's inbound stream.
    /// Its answer comes back from the worker through the delivery stream.
    fn forward_to_worker(&mut self, frame: AppFrame, ctx: &mut ws::WebsocketContext<Self>) {
        let id = frame.id;
        let chat_id = match self.resolve_chat(&frame) {
            Ok(chat_id) => chat_id,
            Err(message) => {
                self.send_error(ctx, id, ErrorCode::NotFound, message);
                return;
            }
        };
        let Some(device) = &self.device else { return };
        if let AppBody::MessageSend(send) = &frame.body {
            let has_text = send
                .text
                .as_deref()
                .is_some_and(|text| !text.trim().is_empty());
            let has_media = send
                .media_refs
                .as_ref()
                .is_some_and(|refs| !refs.is_empty());
            if !has_text && !has_media {
                self.send_error(ctx, id, ErrorCode::Unsupported, "message.send needs text");
                return;
            }
        }
        let media_refs = match &frame.body {
            AppBody::MessageSend(send) => send.media_refs.clone().unwrap_or_default(),
            _ => Vec::new(),
        };
        // The user's own message is written here, at once; slash commands are the worker's.
        let user_text = match &frame.body {
            AppBody::MessageSend(send) => {
                let text = send.text.clone().unwrap_or_default();
                (!text.trim_start().starts_with('/')).then_some(text)
            }
            _ => None,
        };
        let chat = ChatScope {
            account: device.account.clone(),
            chat_id: chat_id.clone(),
            fence: None,
            thread_parent: device.chats.get(&chat_id).cloned().flatten(),
        };
        let received_ms = now_ms();
        let mut request = InboundRequest {
            account: device.account.clone(),
            device_id: device.device_id.clone(),
            chat_id: chat_id.clone(),
            frame_json: String::new(),
            gateway: self.state.node_id.to_string(),
            received_ms,
            trace_parent: None,
            user_message_key: user_text
                .is_some()
                .then(|| user_message::new_message_key(received_ms)),
        };
        let mut frame = AppFrame {
            chat_id: Some(chat_id),
            thread_id: None,
            ..frame
        };
        let redis = self.state.redis.clone();
        let partitions = self.state.partitions;
        let stats = self.state.metrics.clone();
        let enqueue = async move {
            let mut conn = redis
                .get()
                .await
                .map_err(|err| Refused::Backend(err.to_string()))?;
            let mut media = Vec::new();
            if let AppBody::MessageSend(send) = &mut frame.body {
                if !media_refs.is_empty() {
                    let records = resolve_media(&mut conn, &request.account, &media_refs).await?;
                    send.media_refs = Some(records.iter().map(|r| r.media_id.clone()).collect());
                    media = records.iter().map(MediaRecord::to_media_ref).collect();
                }
            }
            request.frame_json = frame.to_json();
            let message = user_text
                .as_deref()
                .and_then(|text| UserMessage::carried_by(&request, partitions, id, text, media));
            let Some(message) = message else {
                request
                    .enqueue(&mut conn, partitions)
                    .await
                    .map_err(|err| Refused::Backend(err.to_string()))?;
                return Ok(());
            };
            let sent = send_from_gateway(&mut conn, partitions, &request, chat, &message)
                .await
                .map_err(|err| Refused::Backend(err.to_string()))?;
            match sent.written {
                Ok(appended) => iris_shared::metrics::add(&stats.outbox_appends_total, appended),
                // The request is accepted (it is in the stream): the worker writes the
                // message when it starts the turn.
                Err(err) => tracing::warn!(%err, "user message left to the worker"),
            }
            Ok(())
        }
        .in_current_span();
        metrics::incr(&self.state.metrics.requests_forwarded_total);
        self.serve_in_order(ctx, enqueue, move |result, act, ctx| match result {
            Ok(_) => {}
            Err(Refused::UnknownMedia(media_ref)) => {
                let message = format!("no uploaded media {media_ref:?} in this account");
                act.send_error(ctx, id, ErrorCode::NotFound, message);
            }
            Err(Refused::Backend(err)) => {
                metrics::incr(&act.state.metrics.redis_errors_total);
                tracing::warn!(%err, "cannot forward a request to the workers");
                act.send_error(ctx, id, ErrorCode::Internal, "request not accepted; retry");
            }
        });
    }
}

/// Why a request was not forwarded.
enum Refused {
    /// A `media_refs` entry names no media of the account.
    UnknownMedia(String),
    /// Redis failed.
    Backend(String),
}

/// The media records that `media_refs` name: each entry is a media id of the account, or
/// the `media_ref` of one of its recent uploads.
async fn resolve_media(
    conn: &mut iris_shared::redis_conn::Connection,
    account: &str,
    media_refs: &[String],
) -> Result<Vec<MediaRecord>, Refused> {
    let backend = |err: redis::RedisError| Refused::Backend(err.to_string());
    let mut records = Vec::with_capacity(media_refs.len());
    for media_ref in media_refs {
        let mut found = record::load(conn, account, media_ref)
            .await
            .map_err(backend)?;
        if found.is_none() {
            if let Some(media_id) = record::resolve_ref(conn, account, media_ref)
                .await
                .map_err(backend)?
            {
                found = record::load(conn, account, &media_id)
                    .await
                    .map_err(backend)?;
            }
        }
        records.push(found.ok_or_else(|| Refused::UnknownMedia(media_ref.clone()))?);
    }
    Ok(records)
}
