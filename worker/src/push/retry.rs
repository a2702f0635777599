//! Retrying a failed send: which failures are worth another attempt, and the backoff
//! between attempts.
//!
//! Transport errors, `429` and `5xx` are retried after 0.5 s, 1 s, 2 s, 4 s and 8 s, then
//! given up (about 15 s in all, so a job is never held long). A `429` or `503` with
//! `Retry-After` waits what the service asked instead of that retry's backoff pause, up
//! to [`LONGEST_ASKED_PAUSE`]; a longer ask gives the send up at once, as retrying sooner
//! than asked would only be refused again. Any other `4xx` means the request itself is
//! wrong (a bad token, an unknown topic) and would fail again: it is given up at once.

use std::future::Future;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use super::retry_after;

/// Pauses before the retries of one send; one attempt more than there are pauses.
pub const BACKOFF: [Duration; 5] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];
/// Longest `Retry-After` a send waits for before its next attempt.
pub const LONGEST_ASKED_PAUSE: Duration = Duration::from_secs(60);
/// How a push is retried.
pub const PUSH_RETRIES: Retries<'static> = Retries {
    backoff: &BACKOFF,
    longest_asked_pause: LONGEST_ASKED_PAUSE,
};
/// Most bytes of a refusal's body kept for the log line.
const DETAIL_MAX_BYTES: usize = 300;

/// Why one attempt at a send failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// Might work later (network, `429`, `5xx`, an expired access token).
    Retryable(String),
    /// Will fail again (any other `4xx`, an unusable target).
    Permanent(String),
    /// Might work once `pause` has passed: a `429` or `503` with `Retry-After`.
    RetryAfter {
        /// What failed.
        detail: String,
        /// How long the service asked to wait.
        pause: Duration,
    },
}

/// How a send is retried: the backoff pauses (one attempt more than there are), and the
/// longest `Retry-After` waited for.
#[derive(Debug, Clone, Copy)]
pub struct Retries<'a> {
    /// Pauses before the retries of one send.
    pub backoff: &'a [Duration],
    /// Longest pause a service may ask for; a longer ask gives the send up.
    pub longest_asked_pause: Duration,
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

    /// The error a non-success `status` with `headers` and `body` means, `Retry-After`
    /// read at `now`.
    pub fn from_answer(
        status: StatusCode,
        headers: &HeaderMap,
        body: &str,
        now: SystemTime,
    ) -> Self {
        let error = Self::from_status(status, body);
        match (error, retry_after::asked_pause(status, headers, now)) {
            (SendError::Retryable(detail), Some(pause)) => SendError::RetryAfter { detail, pause },
            (error, _) => error,
        }
    }

    /// The error an answer that is not a success means (its body read for the detail).
    pub async fn from_response(response: reqwest::Response) -> Self {
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.text().await.unwrap_or_default();
        Self::from_answer(status, &headers, &body, SystemTime::now())
    }

    /// The same error, its detail prefixed with `what` failed.
    pub fn context(self, what: &str) -> Self {
        match self {
            SendError::Retryable(detail) => SendError::Retryable(format!("{what}: {detail}")),
            SendError::Permanent(detail) => SendError::Permanent(format!("{what}: {detail}")),
            SendError::RetryAfter { detail, pause } => SendError::RetryAfter {
                detail: format!("{what}: {detail}"),
                pause,
            },
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
            SendError::RetryAfter { detail, pause } => {
                write!(f, "{detail} (retry after {} s)", pause.as_secs_f64())
            }
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

/// Runs `attempt` until it succeeds, fails permanently, asks for a pause longer than
/// `retries` allows, or every pause of its backoff was used up (an asked pause uses the
/// backoff pause it replaces).
pub async fn with_retries<F, Fut>(retries: &Retries<'_>, mut attempt: F) -> Outcome
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), SendError>>,
{
    let mut attempts = 0;
    let mut pauses = retries.backoff.iter();
    loop {
        attempts += 1;
        let error = match attempt().await {
            Ok(()) => return Outcome::Sent { attempts },
            Err(error @ SendError::Permanent(_)) => return Outcome::GivenUp { attempts, error },
            Err(error) => error,
        };
        let pause = match (&error, pauses.next()) {
            (_, None) => return Outcome::GivenUp { attempts, error },
            (SendError::RetryAfter { pause, .. }, Some(_)) => {
                if *pause > retries.longest_asked_pause {
                    return Outcome::GivenUp { attempts, error };
                }
                *pause
            }
            (_, Some(backoff)) => *backoff,
        };
        tracing::debug!(%error, attempts, ?pause, "push attempt failed; retrying");
        tokio::time::sleep(pause).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    const SHORT: Retries<'static> = Retries {
        backoff: &[Duration::from_millis(1); 3],
        longest_asked_pause: Duration::from_millis(200),
    };

    fn asking(pause: Duration) -> SendError {
        SendError::RetryAfter {
            detail: "HTTP 429".into(),
            pause,
        }
    }

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

    #[test]
    fn retry_after_is_kept_on_429_and_503_only() {
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "3".parse().unwrap());
        let now = SystemTime::now();
        for code in [429, 503] {
            let status = StatusCode::from_u16(code).unwrap();
            assert!(matches!(
                SendError::from_answer(status, &headers, "", now),
                SendError::RetryAfter { pause, .. } if pause == Duration::from_secs(3)
            ));
        }
        for code in [500, 502] {
            let status = StatusCode::from_u16(code).unwrap();
            assert!(matches!(
                SendError::from_answer(status, &headers, "", now),
                SendError::Retryable(_)
            ));
        }
    }

    #[tokio::test]
    async fn an_asked_pause_replaces_the_backoff() {
        let calls = AtomicU32::new(0);
        let asked = Duration::from_millis(150);
        let started = std::time::Instant::now();
        let outcome = with_retries(&SHORT, || async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(asking(asked))
            } else {
                Ok(())
            }
        })
        .await;
        assert_eq!(outcome, Outcome::Sent { attempts: 2 });
        assert!(
            started.elapsed() >= asked,
            "retried after {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn an_ask_over_the_bound_gives_the_send_up() {
        let calls = AtomicU32::new(0);
        let outcome = with_retries(&SHORT, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(asking(Duration::from_secs(3600)))
        })
        .await;
        assert!(matches!(outcome, Outcome::GivenUp { attempts: 1, .. }));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn asked_pauses_use_up_the_retries_too() {
        let calls = AtomicU32::new(0);
        let outcome = with_retries(&SHORT, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(asking(Duration::ZERO))
        })
        .await;
        assert!(matches!(outcome, Outcome::GivenUp { attempts: 4, .. }));
    }

    #[test]
    fn the_asked_pause_bound_is_a_minute() {
        assert_eq!(PUSH_RETRIES.longest_asked_pause, Duration::from_secs(60));
        assert_eq!(PUSH_RETRIES.backoff, BACKOFF);
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
