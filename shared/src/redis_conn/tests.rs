//! How `IRIS_REDIS_URL` is read: Sentinel hosts and master, and the URL shown in messages.

use super::*;

#[test]
fn sentinel_urls_name_hosts_and_a_master() {
    let endpoint =
        RedisEndpoint::parse("redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster").unwrap();
    assert!(endpoint.is_sentinel());
    assert!(RedisEndpoint::parse("redis+sentinel://127.0.0.1:26379").is_err());
    assert!(RedisEndpoint::parse("redis+sentinel:///mymaster").is_err());
    assert!(!RedisEndpoint::parse("redis://127.0.0.1:6379")
        .unwrap()
        .is_sentinel());
}

#[test]
fn the_url_an_endpoint_shows_has_its_password_masked() {
    let endpoint = RedisEndpoint::parse("redis://iris:hunter2@127.0.0.1:6379").unwrap();
    assert_eq!(endpoint.url(), "redis://iris:***@127.0.0.1:6379");
}
