//! `Retry-After` on a push service's `429` or `503`: how long the service asked us to
//! wait before the next attempt, given in seconds (`120`) or as an HTTP date
//! (`Wed, 21 Oct 2026 07:28:00 GMT`). FCM asks its clients to honour it.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::StatusCode;

/// The pause `headers` ask for before retrying an answer with `status`, read at `now`:
/// only `429` and `503` carry one. `None` when absent or unreadable (the backoff applies).
pub fn asked_pause(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::SERVICE_UNAVAILABLE {
        return None;
    }
    parse(headers.get(RETRY_AFTER)?.to_str().ok()?, now)
}

/// The pause a `Retry-After` value asks for at `now`; a date already past asks for none.
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits too many for a u64 are still "a very long time".
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wed, 02 Dec 2026 06:00:00 GMT.
    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_191_200)
    }

    #[test]
    fn seconds_are_read_as_seconds() {
        assert_eq!(parse("2", now()), Some(Duration::from_secs(2)));
        assert_eq!(parse(" 120 ", now()), Some(Duration::from_secs(120)));
        assert_eq!(parse("0", now()), Some(Duration::ZERO));
    }

    #[test]
    fn a_date_asks_for_the_time_until_it() {
        assert_eq!(
            parse("Wed, 02 Dec 2026 06:00:30 GMT", now()),
            Some(Duration::from_secs(30))
        );
    }

    #[test]
    fn a_past_date_asks_for_no_pause() {
        assert_eq!(
            parse("Wed, 02 Dec 2026 05:59:00 GMT", now()),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn garbage_asks_for_nothing() {
        for value in [
            "",
            "soon",
            "-5",
            "1.5",
            "2 s",
            "Wed, 32 Dec 2026 06:00:00 GMT",
        ] {
            assert_eq!(parse(value, now()), None, "{value:?}");
        }
    }

    #[test]
    fn an_enormous_number_is_a_very_long_pause_not_garbage() {
        assert_eq!(
            parse("99999999999999999999999", now()),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn only_429_and_503_are_read() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "7".parse().unwrap());
        let seven = Some(Duration::from_secs(7));
        assert_eq!(
            asked_pause(StatusCode::TOO_MANY_REQUESTS, &headers, now()),
            seven
        );
        assert_eq!(
            asked_pause(StatusCode::SERVICE_UNAVAILABLE, &headers, now()),
            seven
        );
        assert_eq!(
            asked_pause(StatusCode::INTERNAL_SERVER_ERROR, &headers, now()),
            None
        );
        assert_eq!(
            asked_pause(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), now()),
            None
        );
    }
}
