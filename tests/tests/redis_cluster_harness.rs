//! The harness's Redis Cluster on real `redis-server` processes: six nodes serve keys on
//! every master and redirect with `-MOVED`, a killed master's replica takes over and the
//! killed node rejoins as its replica, a reshard under writes loses no key, and a test
//! cluster of the `Cluster` kind runs on one.

use std::collections::{BTreeSet, HashSet};
use std::time::Instant;

use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::{ClusterSpec, RedisKind};
use iris_tests::redis_cluster::{RedisCluster, ReplicaOf, MASTERS, NODES};
use iris_tests::resp::{self, Reply};
use iris_tests::scratch_dir::ScratchDir;

fn value_of(key: &str) -> String {
    format!("value of {key}")
}

fn set(cluster: &RedisCluster, key: &str) {
    let reply = cluster.command(&["SET", key, &value_of(key)]);
    assert_eq!(reply.ok(), Some(Reply::Text("OK".to_owned())), "SET {key}");
}

fn assert_readable(cluster: &RedisCluster, keys: &[String]) {
    for key in keys {
        let reply = cluster.command(&["GET", key]);
        assert_eq!(reply.ok(), Some(Reply::Text(value_of(key))), "GET {key}");
    }
}

fn keys(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|n| format!("{prefix}-{n}")).collect()
}

fn sorted(ports: impl IntoIterator<Item = u16>) -> BTreeSet<u16> {
    ports.into_iter().collect()
}

#[test]
fn a_six_node_cluster_serves_keys_on_every_master_and_follows_moved() {
    let scratch = ScratchDir::new("redis-cluster-serves");
    let started = Instant::now();
    let cluster = RedisCluster::start(scratch.path());
    eprintln!("cluster up in {:?}", started.elapsed());

    let masters = cluster.masters();
    assert_eq!(masters.len(), MASTERS, "{masters:?}");
    let replicas = cluster.replicas();
    assert_eq!(replicas.len(), NODES - MASTERS, "{replicas:?}");
    for master in &masters {
        let following = replicas
            .iter()
            .filter(|replica| replica.master == *master && replica.link_up)
            .count();
        assert_eq!(following, 1, "replicas of {master}: {replicas:?}");
    }
    let url = cluster.url();
    assert!(url.starts_with("redis+cluster://"), "{url}");
    let seeds: BTreeSet<&str> = url["redis+cluster://".len()..].split(',').collect();
    let expected: Vec<String> = cluster
        .node_ports()
        .iter()
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    assert_eq!(
        seeds,
        expected.iter().map(String::as_str).collect(),
        "{url}"
    );

    let before = cluster.node_loads();
    let written = keys("key", 300);
    for key in &written {
        set(&cluster, key);
    }
    // Routing by the slot computed here agrees with the cluster: no write was redirected.
    assert_eq!(cluster.redirects().moved, 0, "{:?}", cluster.redirects());

    let mut owners = HashSet::new();
    for key in &written {
        let owner = cluster.master_of_slot(cluster.slot_of(key));
        owners.insert(owner);
        assert_eq!(
            resp::command(owner, &["GET", key]).ok(),
            Some(Reply::Text(value_of(key))),
            "GET {key} on its owner {owner}"
        );
    }
    assert_eq!(sorted(owners), sorted(masters.clone()));
    let mut total = 0;
    for &master in &masters {
        match resp::command(master, &["DBSIZE"]) {
            Ok(Reply::Integer(size)) if size > 0 => total += size,
            other => panic!("DBSIZE on master {master}: {other:?}"),
        }
    }
    assert_eq!(total, 300);

    // Another master refuses the key and names its owner.
    let key = &written[0];
    let slot = cluster.slot_of(key);
    let owner = cluster.master_of_slot(slot);
    let other = *masters.iter().find(|&&port| port != owner).unwrap();
    assert_eq!(
        resp::command(other, &["GET", key]).ok(),
        Some(Reply::Error(format!("MOVED {slot} 127.0.0.1:{owner}")))
    );
    // `OBJECT ENCODING <key>` is routed by the slot of `ENCODING`, so most keys' first
    // try reaches the wrong master and lands only by following its MOVED.
    for key in &written {
        assert_eq!(
            cluster.command(&["OBJECT", "ENCODING", key]).ok(),
            Some(Reply::Text("embstr".to_owned())),
            "OBJECT ENCODING {key}"
        );
    }
    assert!(cluster.redirects().moved > 0, "{:?}", cluster.redirects());

    let after = cluster.node_loads();
    for &master in &masters {
        let load_before = before.iter().find(|load| load.port == master).unwrap();
        let load_after = after.iter().find(|load| load.port == master).unwrap();
        assert!(load_after.is_master);
        // At least one SET of the test per key it owns, and some more calls besides.
        assert!(
            load_after.calls > load_before.calls + 10,
            "{load_before:?} → {load_after:?}"
        );
        assert!(load_after.cpu_seconds >= load_before.cpu_seconds);
    }
}

#[test]
fn a_killed_master_is_replaced_by_its_replica_and_rejoins_as_a_replica() {
    let scratch = ScratchDir::new("redis-cluster-failover");
    let mut cluster = RedisCluster::start(scratch.path());
    let written = keys("kept", 200);
    for key in &written {
        set(&cluster, key);
    }
    cluster.wait_replicas_caught_up();

    let masters = cluster.masters();
    let its_replica = cluster
        .replicas()
        .into_iter()
        .find(|replica| replica.master == masters[0])
        .expect("the first master has a replica")
        .port;
    let killed = cluster.kill_master(0);
    assert_eq!(killed, masters[0]);
    let killed_at = Instant::now();
    let promoted = cluster.wait_failover_of(killed);
    eprintln!("failover took {:?}", killed_at.elapsed());
    assert_eq!(promoted, its_replica);
    let now = cluster.masters();
    assert_eq!(
        sorted(now.clone()),
        sorted(masters[1..].iter().copied().chain([promoted]))
    );
    // Nothing acknowledged before the kill was lost, and the promoted master takes writes.
    assert_readable(&cluster, &written);
    let after_failover = keys("after-failover", 100);
    for key in &after_failover {
        set(&cluster, key);
    }

    let restarted_at = Instant::now();
    let follows = cluster.restart(killed);
    eprintln!("rejoined in {:?}", restarted_at.elapsed());
    assert_eq!(follows, promoted);
    cluster.wait_for_ok();
    assert_eq!(sorted(cluster.masters()), sorted(now));
    assert!(
        cluster.replicas().contains(&ReplicaOf {
            port: killed,
            master: promoted,
            link_up: true
        }),
        "{:?}",
        cluster.replicas()
    );
    // The rejoined node holds its new master's data, writes made while it was down too.
    cluster.wait_replicas_caught_up();
    assert_eq!(
        resp::command(killed, &["DBSIZE"]).ok(),
        resp::command(promoted, &["DBSIZE"]).ok()
    );
    assert_readable(&cluster, &written);
    assert_readable(&cluster, &after_failover);
}

#[test]
fn a_live_reshard_moves_slots_without_losing_keys() {
    let scratch = ScratchDir::new("redis-cluster-reshard");
    let cluster = RedisCluster::start(scratch.path());
    let mut written = keys("before", 500);
    for key in &written {
        set(&cluster, key);
    }
    let owners_before = cluster.slot_owners();
    let owned = |owners: &[u16], port: u16| owners.iter().filter(|&&o| o == port).count();
    let masters = cluster.masters();
    let (from, to) = (masters[0], masters[1]);

    let reshard_at = Instant::now();
    let mut job = cluster.reshard(from, to, 1000);
    loop {
        let key = format!("during-{}", written.len());
        set(&cluster, &key);
        written.push(key);
        if job.is_done() {
            break;
        }
    }
    job.wait();
    let during = written.len() - 500;
    eprintln!(
        "reshard took {:?} with {during} writes meanwhile ({:?})",
        reshard_at.elapsed(),
        cluster.redirects()
    );
    cluster.wait_for_ok();

    let owners_after = cluster.slot_owners();
    assert_eq!(owned(&owners_after, to), owned(&owners_before, to) + 1000);
    assert_eq!(
        owned(&owners_after, from),
        owned(&owners_before, from) - 1000
    );
    let moved: HashSet<u16> = (0..owners_before.len())
        .filter(|&slot| owners_before[slot] == from && owners_after[slot] == to)
        .map(|slot| u16::try_from(slot).unwrap())
        .collect();
    assert_eq!(moved.len(), 1000);
    let in_moved_slots = written[..500]
        .iter()
        .filter(|key| moved.contains(&cluster.slot_of(key)))
        .count();
    assert!(
        in_moved_slots > 0,
        "no key written before lived in a moved slot"
    );

    assert_readable(&cluster, &written);
    // The moved keys now live on the new owner.
    for key in &written[..500] {
        if moved.contains(&cluster.slot_of(key)) {
            assert_eq!(
                resp::command(to, &["GET", key]).ok(),
                Some(Reply::Text(value_of(key))),
                "GET {key} on {to}"
            );
        }
    }
}

#[tokio::test]
async fn a_cluster_of_the_redis_cluster_kind_names_it_to_its_nodes_and_reaches_its_keys() {
    // No gateway or worker: the nodes do not speak Redis Cluster yet, and the Redis side
    // of the startup is what this proves.
    let spec = ClusterSpec::default()
        .redis(RedisKind::Cluster)
        .gateways(0)
        .workers(0);
    let mut cluster = Cluster::start("redis-cluster-kind", spec).await;
    assert!(cluster.sentinels().is_none());
    let redis = cluster.redis_cluster().expect("a Redis Cluster");
    assert_eq!(cluster.redis_url(), redis.url());
    assert!(cluster.redis_url().starts_with("redis+cluster://"));
    for key in keys("kind", 30) {
        let value = value_of(&key);
        assert_eq!(
            cluster.redis_command(&["SET", &key, &value]).ok(),
            Some(Reply::Text("OK".to_owned()))
        );
        assert_eq!(
            cluster.redis_command(&["GET", &key]).ok(),
            Some(Reply::Text(value))
        );
    }
    let redis = cluster.redis_cluster_mut().expect("a Redis Cluster");
    redis.wait_replicas_caught_up();
    let killed = redis.kill_master(0);
    redis.wait_failover_of(killed);
    assert_readable(redis, &keys("kind", 30));
}
