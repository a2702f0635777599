//! Maps what the upstream agent does during a turn onto protocol frames: text as
//! `message.update` (full text), text before a tool call as `commentary`, tool calls as
//! `tool.start`/`tool.progress`/`tool.end` with a per-turn index, approvals as
//! `picker.approval` plus a `notification`, and `agent.busy` with the reason of the moment.

use iris_shared::redis_conn::Pool;

use iris_shared::clock::now_ms;
use iris_shared::media::record as media_record;
use iris_shared::protocol::{
    AgentBusy, BusyReason, Commentary, MediaRef, MessageUpdate, Notification, NotificationKind,
    PickerApproval, ServerBody, ServerFrame, ToolEnd, ToolProgress, ToolStart,
};

use crate::agent::AgentEvent;
use crate::turn::control::{Ending, OpenApproval, TurnControl};
use crate::turn::publisher::{Outgoing, PublishError};
use crate::turn::request::TurnRequest;
use crate::turn::writer::TurnWriter;
use iris_shared::pickers::{self, PickerKind};

/// How long an unanswered picker stays answerable (matches upstream approval timeouts).
const PICKER_TTL_SECS: u64 = 24 * 3600;

/// A tool call that has started and not ended.
#[derive(Debug, Clone)]
struct OpenTool {
    index: u64,
    name: String,
}

/// The turn's state as the upstream's events arrive.
pub struct TurnState {
    message_id: String,
    request: TurnRequest,
    /// The answer so far (text since the last tool call).
    text: String,
    /// Reasoning so far.
    reasoning: String,
    /// Tool calls started this turn (the next tool's index).
    tools_started: u64,
    /// Tool calls running, innermost last.
    open_tools: Vec<OpenTool>,
    /// Commentary beats written this turn.
    commentaries: u32,
    /// Approvals asked this turn.
    approvals_asked: u32,
    /// Media the agent produced this turn.
    media: Vec<MediaRef>,
}

impl TurnState {
    /// A turn writing its answer as message `message_id`.
    pub fn new(message_id: String, request: TurnRequest) -> Self {
        Self {
            message_id,
            request,
            text: String::new(),
            reasoning: String::new(),
            tools_started: 0,
            open_tools: Vec::new(),
            commentaries: 0,
            approvals_asked: 0,
            media: Vec::new(),
        }
    }

    /// The answer's message id.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// The final answer text. Upstreams start the answer after a tool call with blank
    /// lines; they are not part of the answer.
    pub fn answer_text(&self) -> String {
        self.text.trim_start().to_owned()
    }

    /// The reasoning so far.
    pub fn reasoning(&self) -> &str {
        &self.reasoning
    }

    /// Media the agent produced, for the answer's history entry.
    pub fn media(&self) -> &[MediaRef] {
        &self.media
    }

    /// Writes the frames for one event; returns the ending when the upstream finished.
    pub async fn apply(
        &mut self,
        event: AgentEvent,
        writer: &mut TurnWriter,
        redis: &Pool,
        control: &TurnControl,
    ) -> Result<Option<Ending>, PublishError> {
        match event {
            AgentEvent::TextDelta(delta) => {
                self.text.push_str(&delta);
                self.write_update(writer).await?;
            }
            AgentEvent::ReasoningDelta(delta) => self.reasoning.push_str(&delta),
            AgentEvent::ToolStarted {
                name,
                preview,
                args,
            } => {
                self.write_commentary(writer).await?;
                let index = self.tools_started;
                self.tools_started += 1;
                self.open_tools.push(OpenTool {
                    index,
                    name: name.clone(),
                });
                let start = ToolStart {
                    index: Some(index),
                    name: Some(name),
                    preview,
                    args,
                };
                writer.live(ServerBody::ToolStart(start)).await?;
                write_busy(writer, BusyReason::Tool).await?;
            }
            AgentEvent::ToolProgress { name, note } => {
                let index = self.open_tool_index(&name);
                let progress = ToolProgress {
                    index,
                    name: Some(name),
                    note: Some(note),
                };
                writer.live(ServerBody::ToolProgress(progress)).await?;
            }
            AgentEvent::ToolCompleted {
                name,
                duration_secs,
                ok,
                output_preview,
            } => {
                let index = self.close_tool(&name);
                let end = ToolEnd {
                    index,
                    name: Some(name),
                    ok: Some(ok),
                    duration: duration_secs,
                    output_preview,
                };
                writer.broadcast(ServerBody::ToolEnd(end)).await?;
                write_busy(writer, BusyReason::Processing).await?;
            }
            AgentEvent::ApprovalRequested {
                approval_id,
                command,
                description,
                choices: _,
            } => {
                self.ask_approval(writer, redis, control, approval_id, command, description)
                    .await?;
            }
            AgentEvent::ApprovalResolved { choice } => {
                let answered: Vec<(String, OpenApproval)> = control
                    .approvals
                    .lock()
                    .map(|mut open| open.drain().collect())
                    .unwrap_or_default();
                for (picker_id, approval) in answered {
                    write_resolution(writer, &picker_id, &choice, approval).await?;
                }
                write_busy(writer, BusyReason::Processing).await?;
            }
            AgentEvent::MediaProduced { media_id } => {
                let mut conn = redis.get().await?;
                let account = writer.scope().account.clone();
                match media_record::load(&mut conn, &account, &media_id).await? {
                    Some(record) => {
                        let offered = record.to_media_ref();
                        writer.live(ServerBody::MediaOffer(offered.clone())).await?;
                        self.media.push(offered);
                    }
                    None => tracing::warn!(media_id, "the agent offered media that is not stored"),
                }
            }
            AgentEvent::Done { model, tokens } => return Ok(Some(Ending::Done { model, tokens })),
            AgentEvent::Failed(reason) => return Ok(Some(Ending::Failed(reason))),
            AgentEvent::Cancelled => return Ok(Some(Ending::Cancelled)),
        }
        Ok(None)
    }

    async fn write_update(&self, writer: &TurnWriter) -> Result<(), PublishError> {
        let update = MessageUpdate {
            message_id: Some(self.message_id.clone()),
            text: Some(self.answer_text()),
        };
        writer.live(ServerBody::MessageUpdate(update)).await
    }

    /// Text written before a tool call is an intermediate beat, not the answer: it becomes
    /// `commentary` and the answer starts afresh.
    async fn write_commentary(&mut self, writer: &TurnWriter) -> Result<(), PublishError> {
        let beat = self.answer_text();
        if beat.is_empty() {
            return Ok(());
        }
        self.commentaries += 1;
        let commentary = Commentary {
            message_id: Some(format!("{}-c{}", self.message_id, self.commentaries)),
            text: Some(beat),
        };
        writer.live(ServerBody::Commentary(commentary)).await?;
        self.text.clear();
        self.write_update(writer).await
    }

    fn open_tool_index(&self, name: &str) -> Option<u64> {
        let by_name = self.open_tools.iter().rev().find(|tool| tool.name == name);
        by_name.or(self.open_tools.last()).map(|tool| tool.index)
    }

    /// Upstreams report no call ids: a completion closes the innermost open call of that
    /// name (or the innermost call at all).
    fn close_tool(&mut self, name: &str) -> Option<u64> {
        let position = self
            .open_tools
            .iter()
            .rposition(|tool| tool.name == name)
            .or_else(|| self.open_tools.len().checked_sub(1))?;
        Some(self.open_tools.remove(position).index)
    }

    async fn ask_approval(
        &mut self,
        writer: &mut TurnWriter,
        redis: &Pool,
        control: &TurnControl,
        approval_id: String,
        command: String,
        description: String,
    ) -> Result<(), PublishError> {
        self.approvals_asked += 1;
        let picker_id = format!(
            "ap{}-{}-{}",
            self.request.partition, self.request.message_key, self.approvals_asked
        );
        remember_picker(
            redis,
            &writer.scope().account,
            &writer.scope().chat_id,
            &picker_id,
        )
        .await?;
        if let Ok(mut open) = control.approvals.lock() {
            open.insert(
                picker_id.clone(),
                OpenApproval {
                    approval_id,
                    answered_by: None,
                },
            );
        }
        let picker = PickerApproval {
            picker_id: Some(picker_id.clone()),
            command: Some(command.clone()),
            description: Some(description.clone()),
        };
        writer.broadcast(ServerBody::PickerApproval(picker)).await?;
        let notice = Notification {
            kind: Some(NotificationKind::Approval),
            title: Some(format!("Approval needed: {description}")),
            body: Some(command),
            ts: Some(now_ms()),
            picker_id: Some(picker_id),
            ..Default::default()
        };
        writer.broadcast(ServerBody::Notification(notice)).await?;
        write_busy(writer, BusyReason::WaitingInput).await
    }
}

async fn write_busy(writer: &mut TurnWriter, reason: BusyReason) -> Result<(), PublishError> {
    let busy = AgentBusy::because(reason);
    writer.broadcast(ServerBody::AgentBusy(busy)).await
}

/// Every device learns that a picker was answered (and closes it): a `notification` of
/// kind `approval` whose payload also names the `picker_id` and the `choice`. The device
/// whose `picker.select` answered it gets this frame with its request id.
async fn write_resolution(
    writer: &mut TurnWriter,
    picker_id: &str,
    choice: &str,
    approval: OpenApproval,
) -> Result<(), PublishError> {
    let notice = Notification {
        kind: Some(NotificationKind::Approval),
        title: Some(format!("Approval answered: {choice}")),
        ts: Some(now_ms()),
        picker_id: Some(picker_id.to_owned()),
        choice: Some(choice.to_owned()),
        ..Default::default()
    };
    let mut outgoing = Outgoing::broadcast(ServerFrame::new(ServerBody::Notification(notice)));
    if let Some(answer) = approval.answered_by {
        outgoing = outgoing.answering(&answer.device_id, answer.request_id);
    }
    writer.numbered(outgoing).await
}

/// Records which chat a picker belongs to, so a `picker.select` without `chat_id` reaches it.
async fn remember_picker(
    redis: &Pool,
    account: &str,
    chat_id: &str,
    picker_id: &str,
) -> Result<(), PublishError> {
    let mut conn = redis.get().await?;
    let kind = PickerKind::Approval;
    pickers::open(
        &mut conn,
        account,
        chat_id,
        picker_id,
        kind,
        &[],
        PICKER_TTL_SECS,
    )
    .await?;
    Ok(())
}
