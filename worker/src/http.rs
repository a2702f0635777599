//! The worker's HTTP endpoint on `IRIS_METRICS_LISTEN`: `GET /healthz` (alive),
//! `GET /readyz` (Redis answers and the worker is not draining) and `GET /metrics`
//! (Prometheus text). Workers take no traffic over HTTP; this is for probes and scrapes.

use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use anyhow::Context as _;

use iris_shared::redis_conn::{self, Pool};

use crate::metrics;

/// Longest `/readyz` waits for Redis to answer PING.
const READY_PING_TIMEOUT: Duration = Duration::from_secs(1);

/// Binds `listen` and serves the routes until the process ends.
pub fn serve(listen: &str, redis: Pool) -> anyhow::Result<actix_web::dev::Server> {
    let redis = web::Data::new(redis);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(redis.clone())
            .route("/healthz", web::get().to(healthz))
            .route("/readyz", web::get().to(readyz))
            .route("/metrics", web::get().to(render_metrics))
    })
    .workers(1)
    .disable_signals()
    .bind(listen)
    .with_context(|| format!("cannot listen on {listen} (IRIS_METRICS_LISTEN)"))?
    .run();
    Ok(server)
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("ok\n")
}

async fn readyz(redis: web::Data<Pool>) -> HttpResponse {
    if metrics::get().draining.load(Ordering::Relaxed) > 0 {
        return HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body("draining: the worker is shutting down\n");
    }
    let ping = async {
        let mut conn = redis.get().await.ok()?;
        redis_conn::ping(&mut conn).await.ok()
    };
    match tokio::time::timeout(READY_PING_TIMEOUT, ping).await {
        Ok(Some(_)) => HttpResponse::Ok()
            .content_type("text/plain")
            .body("ready\n"),
        _ => HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body("Redis is not answering\n"),
    }
}

async fn render_metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(metrics::get().render())
}
