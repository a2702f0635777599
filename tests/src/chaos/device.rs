//! One device of the chaos suite: it stays connected to whichever gateway is up, resumes
//! with `sync` from the last seq it saw after every break, talks to the echo agent (a
//! talker) or only listens, and writes down every outboxed seq it receives, in order and
//! across connections, for the ledger to check against the outbox.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{Client, Incoming, DEFAULT_CHAT};
use crate::frames::{id_of, payload_str, payload_u64, seq_of, type_of};

/// Longest a turn may take before it counts as stuck (the phone left "busy").
const TURN_DEADLINE: Duration = Duration::from_secs(30);
/// How long a read waits before the device looks at its other duties.
const READ_SLICE: Duration = Duration::from_millis(200);
/// First pause before reconnecting again when no gateway took the device.
const RETRY_FIRST: Duration = Duration::from_millis(100);
/// Longest such pause.
const RETRY_MAX: Duration = Duration::from_secs(2);
/// Longest a `hello` or `sync` answer may take before the connection is given up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Who a device is and how it behaves.
#[derive(Debug, Clone)]
pub struct DeviceSpec {
    /// Its account.
    pub account: String,
    /// Its device id.
    pub device_id: String,
    /// The account's token.
    pub token: String,
    /// Whether it sends messages (otherwise it only receives).
    pub talker: bool,
    /// Every gateway's address (the same across restarts).
    pub gateways: Vec<SocketAddr>,
    /// Receive buffer of its sockets, if it is a phone on a thin link (it then falls
    /// behind quickly when it stops reading).
    pub recv_buffer: Option<u32>,
    /// Padding added to each message, so that answers stream more bytes.
    pub padding: usize,
}

/// Switches shared between a device and the test driving it.
#[derive(Debug, Default)]
pub struct DeviceControls {
    /// Stop sending and finish up.
    pub stop: AtomicBool,
    /// Stop reading from the socket (a slow consumer) while set.
    pub stall: AtomicBool,
}

/// Everything a device saw.
#[derive(Debug, Default, Clone)]
pub struct DeviceLog {
    /// Its account.
    pub account: String,
    /// Its device id.
    pub device_id: String,
    /// The outbox head when it first paired: it is owed every frame after it.
    pub first_cursor: Option<u64>,
    /// Every outboxed seq received, in arrival order, across all its connections.
    pub seqs: Vec<u64>,
    /// Texts it sent.
    pub sent: Vec<String>,
    /// Sends whose connection broke before they were acknowledged and that no replay
    /// showed either: lost in flight with their gateway, for the app to send again.
    pub unacknowledged: usize,
    /// Sends the gateway answered with an `error` (not accepted, e.g. while Redis was
    /// down): the app would send them again.
    pub refused: usize,
    /// Turns still open after [`TURN_DEADLINE`].
    pub stuck_turns: usize,
    /// What each stuck turn was: its text, whether its message was shown, the last seq
    /// seen then.
    pub stuck: Vec<String>,
    /// Connections that broke under it.
    pub breaks: usize,
    /// Close codes it was given.
    pub close_codes: Vec<Option<u16>>,
    /// From noticing a break to `sync.done` on a new connection, per break (ms).
    pub recovery_ms: Vec<u64>,
    /// Times it stopped reading on purpose.
    pub stalls: usize,
    /// Explicit resets it was given (`sync.done {reset: true}`): how many seqs it had
    /// received by then, and the cursor it was told to continue from.
    pub resets: Vec<(usize, u64)>,
}

/// A turn the talker is waiting for.
struct Pending {
    request_id: u64,
    text: String,
    sent_at: Instant,
    acknowledged: bool,
}

/// Runs one device until `controls.stop` is set and its last turn is over, then catches
/// up with a final `sync`; returns what it saw.
pub async fn run_device(spec: DeviceSpec, controls: Arc<DeviceControls>) -> DeviceLog {
    let mut device = Device {
        log: DeviceLog {
            account: spec.account.clone(),
            device_id: spec.device_id.clone(),
            ..DeviceLog::default()
        },
        spec,
        pending: None,
        next_gateway: 0,
        last_seq: None,
    };
    device.run(&controls).await;
    device.log
}

struct Device {
    spec: DeviceSpec,
    log: DeviceLog,
    pending: Option<Pending>,
    next_gateway: usize,
    last_seq: Option<u64>,
}

impl Device {
    async fn run(&mut self, controls: &DeviceControls) {
        let mut client: Option<Client> = None;
        let mut broke_at: Option<Instant> = None;
        let mut stalled = false;
        // Like the app: reconnect attempts back off while every gateway refuses.
        let mut retry = RETRY_FIRST;
        loop {
            let stopping = controls.stop.load(Ordering::Relaxed);
            if stopping && self.pending.is_none() {
                break;
            }
            let Some(connection) = client.as_mut() else {
                client = self.reconnect().await;
                if client.is_some() {
                    if let Some(at) = broke_at.take() {
                        self.log.recovery_ms.push(at.elapsed().as_millis() as u64);
                    }
                    self.after_resume();
                    retry = RETRY_FIRST;
                } else {
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MAX);
                }
                continue;
            };
            if controls.stall.load(Ordering::Relaxed) {
                if !stalled {
                    self.log.stalls += 1;
                    stalled = true;
                }
                tokio::time::sleep(READ_SLICE).await;
                continue;
            }
            stalled = false;
            if self.spec.talker && !stopping && self.pending.is_none() {
                let text = format!(
                    "{} #{} {}",
                    self.spec.device_id,
                    self.log.sent.len() + 1,
                    "~".repeat(self.spec.padding)
                );
                let request_id = self.log.sent.len() as u64 + 1000;
                let frame = json!({"v": 1, "id": request_id,
                    "type": "message.send", "chat_id": DEFAULT_CHAT, "payload": {"text": text}});
                self.log.sent.push(text.clone());
                self.pending = Some(Pending {
                    request_id,
                    text,
                    sent_at: Instant::now(),
                    acknowledged: false,
                });
                if !connection.try_send(&frame).await {
                    self.broke(&mut client, &mut broke_at, None);
                    continue;
                }
            }
            match connection.next_within(READ_SLICE).await {
                Some(Incoming::Frame(frame)) => self.record(&frame),
                Some(Incoming::Binary(_)) => {}
                Some(Incoming::Closed(code)) => self.broke(&mut client, &mut broke_at, code),
                None => {}
            }
            if let Some(pending) = &self.pending {
                if pending.sent_at.elapsed() > TURN_DEADLINE {
                    self.log.stuck_turns += 1;
                    self.log.stuck.push(format!(
                        "{}: {:?} (request {}, shown: {}, last seq {:?})",
                        self.spec.device_id,
                        pending.text,
                        pending.request_id,
                        pending.acknowledged,
                        self.last_seq
                    ));
                    self.pending = None;
                }
            }
        }
        self.final_sync(client).await;
    }

    fn broke(
        &mut self,
        client: &mut Option<Client>,
        broke_at: &mut Option<Instant>,
        code: Option<u16>,
    ) {
        *client = None;
        self.log.breaks += 1;
        self.log.close_codes.push(code);
        broke_at.get_or_insert_with(Instant::now);
    }

    /// After a resume: a send that neither its live ack nor the replay showed was lost in
    /// flight with its gateway; the app would send it again, so the talker moves on.
    fn after_resume(&mut self) {
        if self.pending.as_ref().is_some_and(|p| !p.acknowledged) {
            self.log.unacknowledged += 1;
            self.pending = None;
        }
    }

    /// Connects to the next gateway that answers and resumes from the last seq seen.
    async fn reconnect(&mut self) -> Option<Client> {
        let count = self.spec.gateways.len();
        for _ in 0..count {
            let addr = self.spec.gateways[self.next_gateway % count];
            self.next_gateway += 1;
            let label = format!("{}@{addr}", self.spec.device_id);
            let connected = match self.spec.recv_buffer {
                Some(size) => Client::try_connect_with_small_window(addr, &label, size).await,
                None => Client::try_connect(addr, &label).await,
            };
            let Ok(mut client) = connected else {
                continue;
            };
            client.count_seq_order_myself();
            if self.resume(&mut client).await.is_some() {
                return Some(client);
            }
        }
        None
    }

    /// `hello`, then `sync` from the last seq seen (the ack's cursor the first time).
    async fn resume(&mut self, client: &mut Client) -> Option<()> {
        let hello = json!({"v": 1, "id": 1, "type": "hello", "payload": {
            "token": self.spec.token, "device_id": self.spec.device_id, "resume": true}});
        if !client.try_send(&hello).await {
            return None;
        }
        let ack = self.answer_to(client, 1).await?;
        if type_of(&ack) != "hello.ack" {
            return None;
        }
        let head = payload_u64(&ack, "sync_cursor")?;
        self.log.first_cursor.get_or_insert(head);
        let cursor = self.last_seq.unwrap_or(head);
        let sync = json!({"v": 1, "id": 2, "type": "sync", "payload": {"cursor": cursor}});
        if !client.try_send(&sync).await {
            return None;
        }
        let done = self.answer_to(client, 2).await?;
        if type_of(&done) != "sync.done" {
            return None;
        }
        self.note_reset(&done);
        Some(())
    }

    /// Reads (recording everything) until the frame answering request `id`.
    async fn answer_to(&mut self, client: &mut Client, id: u64) -> Option<Value> {
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        while Instant::now() < deadline {
            match client.next_within(HANDSHAKE_TIMEOUT).await? {
                Incoming::Frame(frame) if id_of(&frame) == Some(id) && seq_of(&frame).is_none() => {
                    return Some(frame)
                }
                Incoming::Frame(frame) => self.record(&frame),
                Incoming::Binary(_) => {}
                Incoming::Closed(_) => return None,
            }
        }
        None
    }

    /// A `sync.done {reset: true}`: the outbox lost frames this device may have seen, and
    /// it continues from the cursor given (an app reloads its history there).
    fn note_reset(&mut self, done: &Value) {
        if done["payload"]["reset"] != json!(true) {
            return;
        }
        let Some(cursor) = payload_u64(done, "cursor") else {
            return;
        };
        self.log.resets.push((self.log.seqs.len(), cursor));
        self.last_seq = Some(cursor);
    }

    fn record(&mut self, frame: &Value) {
        if type_of(frame) == "sync.done" {
            self.note_reset(frame);
        }
        if let Some(seq) = seq_of(frame) {
            self.log.seqs.push(seq);
            self.last_seq = Some(self.last_seq.map_or(seq, |last| last.max(seq)));
        }
        let Some(pending) = self.pending.as_mut() else {
            return;
        };
        match type_of(frame) {
            "message" if payload_str(frame, "text") == Some(pending.text.as_str()) => {
                pending.acknowledged = true;
            }
            "agent.idle" if pending.acknowledged => self.pending = None,
            "error" if id_of(frame) == Some(pending.request_id) && !pending.acknowledged => {
                self.log.refused += 1;
                self.pending = None;
            }
            _ => {}
        }
    }

    /// Catches up with everything outboxed so far: a fresh connection that resumes from
    /// the last seq seen replays whatever the old one had not delivered yet.
    async fn final_sync(&mut self, client: Option<Client>) {
        if let Some(client) = client {
            client.close().await;
        }
        for _ in 0..40 {
            if let Some(client) = self.reconnect().await {
                client.close().await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "{} could not reconnect for its final sync",
            self.spec.device_id
        );
    }
}
