//! The announced push kind lands in `iris:agent` beside the agent's fields.

use std::collections::HashMap;

use iris_shared::protocol::enums::PushKind as ServerPushKind;

use super::*;
use crate::push::announce;

#[tokio::test]
async fn the_push_kind_is_added_to_the_agent_fields() {
    let mut harness = Harness::new().await;
    let _: () = redis::cmd("HSET")
        .arg(keys::agent_caps())
        .arg("kind")
        .arg("echo")
        .query_async(&mut harness.conn)
        .await
        .unwrap();
    announce(&harness.pool(), ServerPushKind::Ntfy)
        .await
        .unwrap();
    let fields: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(keys::agent_caps())
        .query_async(&mut harness.conn)
        .await
        .unwrap();
    assert_eq!(
        fields,
        HashMap::from([
            ("kind".to_owned(), "echo".to_owned()),
            ("push".to_owned(), "ntfy".to_owned()),
        ])
    );
}
