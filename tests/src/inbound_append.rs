//! Appending requests to a cluster's inbound streams as a gateway does, for tests of what
//! workers make of entries no gateway of this version would write (an older gateway's, an
//! append that landed twice).

use iris_shared::inbound::InboundRequest;

use crate::cluster::Cluster;

/// Appends `request` to its inbound stream as a gateway does, on whichever Redis the
/// cluster runs on (one server, the Sentinels' master, or a Redis Cluster).
pub async fn enqueue(cluster: &Cluster, request: &InboundRequest) {
    let partitions = cluster.partitions();
    let enqueued = match cluster.redis_cluster() {
        Some(redis_cluster) => {
            let nodes: Vec<String> = redis_cluster
                .node_ports()
                .iter()
                .map(|port| format!("redis://127.0.0.1:{port}"))
                .collect();
            let client = redis::cluster::ClusterClient::new(nodes).expect("cluster nodes");
            let mut conn = client.get_async_connection().await.expect("connecting");
            request.enqueue(&mut conn, partitions).await
        }
        None => {
            let client = redis::Client::open(cluster.redis().url()).expect("Redis URL");
            let mut conn = client
                .get_multiplexed_async_connection()
                .await
                .expect("connecting to Redis");
            request.enqueue(&mut conn, partitions).await
        }
    };
    enqueued.expect("enqueueing");
}
