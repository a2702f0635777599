//! The per-device rate limit: at most one push per device per interval
//! (`IRIS_PUSH_MIN_INTERVAL_MS`), with the pushes that arrive inside the window merged.
//!
//! The rule, kept simple on purpose:
//! - A push for a device outside its window is sent at once and opens a new window.
//! - The first push inside a window waits for the window to end (it *leads*); later ones
//!   inside the same window only replace what the leader will send (they *follow*). When
//!   the window ends the leader sends the newest push (the latest title and body win: the
//!   device learns about the newest thing, and opening the app shows everything), which
//!   opens the next window, and then releases its followers.
//! - Every caller returns only when the push that carried its content finished or was given
//!   up, so a job is acknowledged after its notification really went out.
//!
//! This throttle is one worker's: it merges the pushes that worker handles. Across workers the
//! device's window in Redis (`iris_shared::push::window`, taken just before each send) keeps
//! the pushes one interval apart. Windows of devices no longer pushed are forgotten.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

/// Submissions between two sweeps of expired windows.
const PRUNE_EVERY: u64 = 256;

/// How a push went through the throttle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passage {
    /// Sent at once.
    Direct,
    /// Sent when the device's window ended (possibly with a newer push's content).
    Delayed,
    /// Replaced by a newer push, which was sent in its place.
    Merged,
}

/// What [`Throttle::admit`] tells a caller to do.
enum Admission<T> {
    Now(T),
    Lead(Instant),
    Follow(oneshot::Receiver<()>),
}

struct Pending<T> {
    latest: T,
    followers: Vec<oneshot::Sender<()>>,
}

struct Window<T> {
    /// When the device may be pushed again.
    next_free: Instant,
    /// A push waiting for `next_free`, if any.
    pending: Option<Pending<T>>,
}

/// Rate limit for pushes of type `T` to devices named by `K`.
pub struct Throttle<K, T> {
    interval: Duration,
    // A std mutex: it is never held across an await.
    windows: Mutex<HashMap<K, Window<T>>>,
    submissions: AtomicU64,
}

impl<K: Hash + Eq + Clone, T> Throttle<K, T> {
    /// A throttle allowing one push per device per `interval` (zero: no limit).
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            windows: Mutex::new(HashMap::new()),
            submissions: AtomicU64::new(0),
        }
    }

    /// Passes `item` for `device` through the limit, calling `send` when and if it is this
    /// caller's turn to send (with the newest item), and returns once the push carrying
    /// `item`'s content was sent or given up.
    pub async fn run<F, Fut>(&self, device: K, item: T, send: F) -> Passage
    where
        F: FnOnce(T) -> Fut,
        Fut: Future<Output = ()>,
    {
        match self.admit(device.clone(), item) {
            Admission::Now(item) => {
                send(item).await;
                Passage::Direct
            }
            Admission::Lead(at) => {
                tokio::time::sleep_until(at).await;
                let Some(pending) = self.take(&device) else {
                    return Passage::Delayed;
                };
                send(pending.latest).await;
                for follower in pending.followers {
                    let _ = follower.send(());
                }
                Passage::Delayed
            }
            Admission::Follow(done) => {
                // An error means the leader vanished; nothing is left to wait for.
                let _ = done.await;
                Passage::Merged
            }
        }
    }

    fn admit(&self, device: K, item: T) -> Admission<T> {
        let now = Instant::now();
        let mut windows = self.windows.lock().expect("throttle lock");
        if self.submissions.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            windows.retain(|_, window| window.pending.is_some() || window.next_free > now);
        }
        let window = windows.entry(device).or_insert(Window {
            next_free: now,
            pending: None,
        });
        match &mut window.pending {
            Some(pending) => {
                let (done, wait) = oneshot::channel();
                pending.latest = item;
                pending.followers.push(done);
                Admission::Follow(wait)
            }
            None if window.next_free <= now => {
                window.next_free = now + self.interval;
                Admission::Now(item)
            }
            None => {
                window.pending = Some(Pending {
                    latest: item,
                    followers: Vec::new(),
                });
                Admission::Lead(window.next_free)
            }
        }
    }

    /// Takes the device's pending push for sending and opens its next window.
    fn take(&self, device: &K) -> Option<Pending<T>> {
        let mut windows = self.windows.lock().expect("throttle lock");
        let window = windows.get_mut(device)?;
        window.next_free = Instant::now() + self.interval;
        window.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const INTERVAL: Duration = Duration::from_millis(200);

    type Sent = Arc<Mutex<Vec<(&'static str, Instant)>>>;

    async fn push(
        throttle: &Throttle<&'static str, &'static str>,
        sent: &Sent,
        device: &'static str,
        text: &'static str,
    ) -> Passage {
        throttle
            .run(device, text, |latest| async move {
                sent.lock().unwrap().push((latest, Instant::now()));
            })
            .await
    }

    #[tokio::test]
    async fn pushes_inside_a_window_are_merged_into_one_sent_when_it_ends() {
        let throttle = Throttle::new(INTERVAL);
        let sent: Sent = Arc::default();
        let start = Instant::now();
        assert_eq!(
            push(&throttle, &sent, "phone", "one").await,
            Passage::Direct
        );
        let (second, third) = tokio::join!(push(&throttle, &sent, "phone", "two"), async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            push(&throttle, &sent, "phone", "three").await
        });
        assert_eq!((second, third), (Passage::Delayed, Passage::Merged));
        let sent = sent.lock().unwrap().clone();
        assert_eq!(
            sent.iter().map(|(text, _)| *text).collect::<Vec<_>>(),
            vec!["one", "three"],
            "the newest content wins"
        );
        assert!(sent[1].1 - start >= INTERVAL, "the second push waited");
    }

    #[tokio::test]
    async fn devices_have_windows_of_their_own() {
        let throttle = Throttle::new(INTERVAL);
        let sent: Sent = Arc::default();
        assert_eq!(push(&throttle, &sent, "phone", "a").await, Passage::Direct);
        assert_eq!(push(&throttle, &sent, "tablet", "b").await, Passage::Direct);
        assert_eq!(sent.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_push_after_the_window_goes_out_at_once() {
        let throttle = Throttle::new(Duration::from_millis(30));
        let sent: Sent = Arc::default();
        assert_eq!(push(&throttle, &sent, "phone", "a").await, Passage::Direct);
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(push(&throttle, &sent, "phone", "b").await, Passage::Direct);
    }

    #[tokio::test]
    async fn a_zero_interval_never_holds_a_push() {
        let throttle = Throttle::new(Duration::ZERO);
        let sent: Sent = Arc::default();
        for text in ["a", "b", "c"] {
            assert_eq!(push(&throttle, &sent, "phone", text).await, Passage::Direct);
        }
    }

    #[tokio::test]
    async fn expired_windows_are_forgotten() {
        let throttle = Throttle::new(Duration::from_millis(1));
        let sent: Sent = Arc::default();
        push(&throttle, &sent, "phone", "a").await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        for _ in 1..PRUNE_EVERY {
            push(&throttle, &sent, "tablet", "b").await;
        }
        assert!(!throttle.windows.lock().unwrap().contains_key("phone"));
    }
}
