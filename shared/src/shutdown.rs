//! Waiting for the signal that ends a node: SIGTERM (Kubernetes, systemd) or SIGINT (Ctrl-C).

/// Resolves when the process is asked to stop.
pub async fn signal() {
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    match terminate {
        Ok(mut terminate) => {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(err) => {
            tracing::warn!(%err, "no SIGTERM handler; only Ctrl-C stops this node");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
