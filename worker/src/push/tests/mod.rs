//! Tests of push delivery end to end inside the worker: a real `redis-server`, the real
//! dispatcher, and recording HTTP servers standing in for ntfy and FCM (both the end-to-end
//! harness's, `iris_tests::redis_server` and `iris_tests::http_recorder`).
//!
//! - `ntfy_delivery`: who is pushed, de-duplication, takeover, retries, the rate limit.
//! - `fcm_delivery`: OAuth assertion and token cache, the FCM message, both services.
//! - `announcing`: field `push` of `iris:agent`.

mod announcing;
mod fcm_delivery;
mod ntfy_delivery;

use std::time::{Duration, Instant};

use iris_shared::clock::now_ms;
use iris_shared::keys;
use iris_shared::push::{self, PushJob, PushKind, PushTarget, PUSH_GROUP};
use iris_shared::redis_conn::Pool;
use iris_tests::redis_server::RedisServer;
use iris_tests::scratch_dir::ScratchDir;
use redis::aio::MultiplexedConnection;
use redis::streams::StreamInfoGroupsReply;
use tokio::task::JoinHandle;

use super::dispatcher::{Dispatcher, Timing};
use super::settings::{NtfySettings, PushSettings};

/// Longest a test waits for something: far above what it needs (a retried push takes
/// 1.5 s), far below a hang.
const PATIENCE: Duration = Duration::from_secs(10);
const ACCOUNT: &str = "alice";
const CHAT: &str = "android:default";
/// The ntfy access token the tests configure.
const NTFY_TOKEN: &str = "tk_test_0123456789";

/// Settings pushing through the ntfy stand-in at `url`, with no rate limit.
fn ntfy_settings(url: &str) -> PushSettings {
    PushSettings {
        ntfy: Some(NtfySettings {
            url: url.to_owned(),
            token: Some(NTFY_TOKEN.into()),
        }),
        fcm: None,
        min_interval: Duration::ZERO,
    }
}

/// A job for [`ACCOUNT`] in [`CHAT`].
fn job(seq: u64, title: &str, body: &str) -> PushJob {
    PushJob {
        account: ACCOUNT.to_owned(),
        chat_id: CHAT.to_owned(),
        seq,
        kind: PushKind::Message,
        title: title.to_owned(),
        body: body.to_owned(),
    }
}

fn ntfy_target(topic: &str) -> PushTarget {
    PushTarget {
        fcm_token: None,
        ntfy_topic: Some(topic.to_owned()),
    }
}

fn fcm_target(token: &str) -> PushTarget {
    PushTarget {
        fcm_token: Some(token.to_owned()),
        ntfy_topic: None,
    }
}

/// Redis, plus a dispatcher once started.
struct Harness {
    redis: RedisServer,
    conn: MultiplexedConnection,
    dispatcher: Option<JoinHandle<()>>,
    /// Redis's log and data; declared after `redis`, so it is removed once Redis is killed
    /// (and kept when the test fails).
    _scratch: ScratchDir,
}

impl Harness {
    /// A private Redis, no dispatcher yet.
    async fn new() -> Self {
        let scratch = ScratchDir::new("worker-push");
        let redis = RedisServer::start(scratch.path());
        let client = redis::Client::open(redis.url()).unwrap();
        let conn = client.get_multiplexed_async_connection().await.unwrap();
        Self {
            redis,
            conn,
            dispatcher: None,
            _scratch: scratch,
        }
    }

    /// Where the Redis is.
    fn endpoint(&self) -> iris_shared::redis_conn::RedisEndpoint {
        iris_shared::redis_conn::RedisEndpoint::parse(&self.redis.url()).unwrap()
    }

    /// A fresh pool on the Redis.
    fn pool(&self) -> Pool {
        iris_shared::redis_conn::pool(&self.endpoint()).unwrap()
    }

    /// Starts a dispatcher with `settings` and `timing`, consuming as `node`, once its
    /// group exists (jobs written before are not its business).
    async fn start_dispatcher(&mut self, node: &str, settings: &PushSettings, timing: Timing) {
        let dispatcher = Dispatcher::new(self.endpoint(), node.to_owned(), settings)
            .expect("the dispatcher builds")
            .with_timing(timing);
        dispatcher.prepare().await.expect("the group is created");
        self.dispatcher = Some(tokio::spawn(dispatcher.run()));
    }

    /// Starts a dispatcher with production timing.
    async fn start(&mut self, settings: &PushSettings) {
        self.start_dispatcher("wk-test", settings, Timing::default())
            .await;
    }

    async fn groups(&mut self) -> Vec<redis::streams::StreamInfoGroup> {
        let reply: redis::RedisResult<StreamInfoGroupsReply> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(keys::push_jobs())
            .query_async(&mut self.conn)
            .await;
        reply.map(|r| r.groups).unwrap_or_default()
    }

    async fn set_target(&mut self, device: &str, target: PushTarget) {
        push::set_target(&mut self.conn, ACCOUNT, device, &target)
            .await
            .unwrap();
    }

    async fn online(&mut self, device: &str) {
        // A session on a live gateway node, as a gateway records it.
        let holds = [(ACCOUNT.to_owned(), device.to_owned())];
        iris_shared::presence::hold(&mut self.conn, "gateway-1", &holds, now_ms(), now_ms())
            .await
            .unwrap();
    }

    async fn enqueue(&mut self, job: &PushJob) {
        push::enqueue(&mut self.conn, job).await.unwrap();
    }

    /// Waits until the group has read every job written so far and acknowledged them all.
    async fn wait_all_handled(&mut self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let last: Vec<(String, redis::Value)> = redis::cmd("XREVRANGE")
                .arg(keys::push_jobs())
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut self.conn)
                .await
                .unwrap();
            let last_id = last.first().map(|(id, _)| id.clone());
            let groups = self.groups().await;
            let group = groups.iter().find(|g| g.name == PUSH_GROUP);
            if let (Some(group), Some(last_id)) = (group, &last_id) {
                if group.pending == 0 && &group.last_delivered_id == last_id {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "jobs not handled in time");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(dispatcher) = self.dispatcher.take() {
            dispatcher.abort();
        }
    }
}
