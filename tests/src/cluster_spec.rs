//! What a test's cluster consists of ([`ClusterSpec`]) and how its nodes are named.

/// What kind of Redis the cluster runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisKind {
    /// One server without persistence.
    Plain,
    /// One server with AOF, fsynced on every write, restartable with its data.
    Durable,
    /// A master, a replica and three Sentinels; nodes find the master through them. Only
    /// the first master refuses writes while its replica is away (so a first failover loses
    /// nothing and the promoted replica takes writes at once).
    Sentinel,
    /// As [`RedisKind::Sentinel`], but both servers refuse writes while their replica is
    /// away (`min-replicas-to-write 1`), so no failover loses a write; after each one the
    /// new master waits for the demoted one to resync before taking writes.
    SentinelEveryMasterGuarded,
    /// A Redis Cluster: six nodes, three masters with one replica each; nodes are given a
    /// `redis+cluster://` URL naming all six.
    Cluster,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub(crate) redis: RedisKind,
    pub(crate) gateways: usize,
    pub(crate) workers: usize,
    pub(crate) partitions: u32,
    pub(crate) gateway_env: Vec<(String, String)>,
    pub(crate) internal_listener: bool,
    pub(crate) worker_env: Vec<(String, String)>,
    pub(crate) redis_user: Option<(String, String)>,
}

/// Environment variable that runs every test asking for the default Redis on a six-node
/// Redis Cluster instead (`IRIS_TEST_REDIS=cluster`): the same flows, proven on a Cluster.
pub const TEST_REDIS_ENV: &str = "IRIS_TEST_REDIS";

/// The Redis a test gets unless it asks for one: [`RedisKind::Plain`], or a Cluster when
/// [`TEST_REDIS_ENV`] says `cluster`.
fn default_redis() -> RedisKind {
    match std::env::var(TEST_REDIS_ENV).as_deref() {
        Ok("cluster") => RedisKind::Cluster,
        Ok("plain") | Ok("") | Err(_) => RedisKind::Plain,
        Ok(other) => panic!("{TEST_REDIS_ENV}={other}: expected plain or cluster"),
    }
}

impl Default for ClusterSpec {
    /// One gateway, one worker, 64 partitions, on the default Redis.
    fn default() -> Self {
        Self {
            redis: default_redis(),
            gateways: 1,
            workers: 1,
            partitions: 64,
            gateway_env: Vec::new(),
            internal_listener: false,
            worker_env: Vec::new(),
            redis_user: None,
        }
    }
}

impl ClusterSpec {
    /// The kind of Redis to run on.
    pub fn redis(mut self, kind: RedisKind) -> Self {
        self.redis = kind;
        self
    }

    /// Number of gateway nodes.
    pub fn gateways(mut self, count: usize) -> Self {
        self.gateways = count;
        self
    }

    /// Number of worker nodes (`worker-a`, `worker-b`, ...).
    pub fn workers(mut self, count: usize) -> Self {
        self.workers = count;
        self
    }

    /// `IRIS_PARTITIONS` of every node.
    pub fn partitions(mut self, partitions: u32) -> Self {
        self.partitions = partitions;
        self
    }

    /// An extra environment variable for every gateway.
    pub fn gateway_env(mut self, name: &str, value: &str) -> Self {
        self.gateway_env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Nodes log in to Redis as `user` with `password` (an ACL user the harness creates),
    /// given in their `IRIS_REDIS_URL`; the harness's own commands keep the default user.
    /// One server only.
    pub fn redis_user(mut self, user: &str, password: &str) -> Self {
        self.redis_user = Some((user.to_owned(), password.to_owned()));
        self
    }

    /// Gives every gateway an internal listener (`IRIS_INTERNAL_LISTEN` on a port of its
    /// own), where the cluster's metric and server-API helpers then go.
    pub fn internal_listener(mut self) -> Self {
        self.internal_listener = true;
        self
    }

    /// An extra environment variable for every worker.
    pub fn worker_env(mut self, name: &str, value: &str) -> Self {
        self.worker_env.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// Node id of worker `index`: `worker-a`, `worker-b`, ...
pub fn worker_node_id(index: usize) -> String {
    let letter = (b'a' + u8::try_from(index % 26).unwrap_or(0)) as char;
    format!("worker-{letter}")
}

/// Node id of gateway `index`: `gw-1`, `gw-2`, ...
pub fn gateway_node_id(index: usize) -> String {
    format!("gw-{}", index + 1)
}
