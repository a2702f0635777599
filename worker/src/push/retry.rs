//! Retrying a failed send: which failures are worth another attempt, and the backoff
//! between attempts.
//!
//! Transport errors, `429` and `5xx` are retried after 0.5 s, 1 s, 2 s, 4 s and 8 s, then
//! given up (about 15 s in all, so a job is never held long). Any other `4xx` means the
//! request itself is wrong (a bad token, an unknown topic) and would fail again: it is
//! given up at once.

use std::future::Future;
use std::time::Duration;

use reqwest::StatusCode;

/// Pauses before the retries of one send; one attempt more than there are pauses.
pub const BACKOFF: [Duration; 5] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];
/// Most bytes of a refusal's body kept for the log line.
const DETAIL_MAX_BYTES: usize = 300;

/// Why one attempt at a send failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// Might work later (network, `429`, `5xx`, an expired access token).
    Retryable(String),
    /// Will fail again (any other `4xx`, an unusable target).
    Permanent(String),
}

impl SendError {
    /// The error a non-success `status` with response `body` means.
    pub fn from_status(status: StatusCode, body: &str) -> Self {
        let mut end = body.len().min(DETAIL_MAX_BYTES);
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        let detail = format!("HTTP {status}: {}", body[..end].trim());
        if status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS {
            SendError::Permanent(detail)
        } else {
            SendError::Retryable(detail)
        }
    }

    /// The same error, its detail prefixed with `what` failed.
    pub fn context(self, what: &str) -> Self {
        match self {
            SendError::Retryable(detail) => SendError::Retryable(format!("{what}: {detail}")),
            SendError::Permanent(detail) => SendError::Permanent(format!("{what}: {detail}")),
        }
    }

    /// A request that got no answer (connection refused, timeout, broken response).
    pub fn transport(err: &reqwest::Error) -> Self {
        // reqwest quotes the URL it failed on, credentials included.
        SendError::Retryable(iris_shared::redact::in_text(&format!(
            "request failed: {err}"
        )))
    }
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Retryable(detail) => write!(f, "{detail} (retryable)"),
            SendError::Permanent(detail) => write!(f, "{detail} (permanent)"),
        }
    }
}

/// How a send ended after its retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Delivered on attempt `attempts` (1 = first try).
    Sent {
        /// Attempts made.
        attempts: u32,
    },
    /// Given up after `attempts` attempts.
    GivenUp {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        error: SendError,
    },
}

/// Runs `attempt` until it succeeds, fails permanently, or every pause in `backoff` was
/// waited out.
pub async fn with_retries<F, Fut>(backoff: &[Duration], mut attempt: F) -> Outcome
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), SendError>>,
{
    let mut attempts = 0;
    let mut pauses = backoff.iter();
    loop {
        attempts += 1;
        let error = match attempt().await {
            Ok(()) => return Outcome::Sent { attempts },
            Err(error @ SendError::Permanent(_)) => return Outcome::GivenUp { attempts, error },
            Err(error) => error,
        };
        match pauses.next() {
            Some(pause) => {
                tracing::debug!(%error, attempts, ?pause, "push attempt failed; retrying");
                tokio::time::sleep(*pause).await;
            }
            None => return Outcome::GivenUp { attempts, error },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    const SHORT: [Duration; 3] = [Duration::from_millis(1); 3];

    #[test]
    fn client_errors_are_permanent_except_too_many_requests() {
        for code in [400, 401, 403, 404, 410] {
            let status = StatusCode::from_u16(code).unwrap();
            assert!(matches!(
                SendError::from_status(status, ""),
                SendError::Permanent(_)
            ));
        }
        for code in [429, 500, 502, 503] {
            let status = StatusCode::from_u16(code).unwrap();
            assert!(matches!(
                SendError::from_status(status, ""),
                SendError::Retryable(_)
            ));
        }
    }

    #[test]
    fn long_bodies_are_cut_on_a_character_boundary() {
        let body = "é".repeat(DETAIL_MAX_BYTES);
        let SendError::Permanent(detail) = SendError::from_status(StatusCode::BAD_REQUEST, &body)
        else {
            panic!("a 400 is permanent");
        };
        assert!(detail.len() < DETAIL_MAX_BYTES + 40, "{detail}");
    }

    #[test]
    fn the_backoff_doubles_from_half_a_second() {
        for pair in BACKOFF.windows(2) {
            assert_eq!(pair[1], pair[0] * 2);
        }
        assert_eq!(BACKOFF[0], Duration::from_millis(500));
    }

    #[tokio::test]
    async fn retryable_failures_are_retried_until_success() {
        let calls = AtomicU32::new(0);
        let outcome = with_retries(&SHORT, || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(SendError::Retryable("503".into()))
            } else {
                Ok(())
            }
        })
        .await;
        assert_eq!(outcome, Outcome::Sent { attempts: 3 });
    }

    #[tokio::test]
    async fn retries_stop_when_the_backoff_runs_out() {
        let calls = AtomicU32::new(0);
        let outcome = with_retries(&SHORT, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(SendError::Retryable("503".into()))
        })
        .await;
        assert_eq!(
            outcome,
            Outcome::GivenUp {
                attempts: 4,
                error: SendError::Retryable("503".into())
            }
        );
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn permanent_failures_are_not_retried() {
        let calls = AtomicU32::new(0);
        let outcome = with_retries(&SHORT, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(SendError::Permanent("400".into()))
        })
        .await;
        assert!(matches!(outcome, Outcome::GivenUp { attempts: 1, .. }));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
