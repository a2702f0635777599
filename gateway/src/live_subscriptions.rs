//! Which accounts' live channels this node listens to: the registry joins an account when its
//! first session here registers and leaves it when the last one goes; the node's one
//! subscription (`delivery_loop.rs`) applies the changes, in the order they were made.
//!
//! A join resolves once the subscription to the account's channel is confirmed, so every
//! frame published after the session then reads the outbox head reaches it live. While the
//! subscription is down a join resolves at once: the account is subscribed with the others
//! when it is made again, and every session then catches up from the outbox.

use std::collections::{HashMap, HashSet};
use std::future::Future;

use tokio::sync::{mpsc, oneshot};

/// One change to the set of accounts listened to.
pub enum Change {
    /// The first session of the account registered here; `subscribed` is answered (or
    /// dropped) once its channel is subscribed.
    Join {
        account: String,
        subscribed: oneshot::Sender<()>,
    },
    /// The last session of the account here left.
    Leave { account: String },
}

/// The registry's side: cheap to clone.
#[derive(Clone)]
pub struct LiveSubscriptions {
    changes: mpsc::UnboundedSender<Change>,
}

/// The subscription's side: the changes, in order.
pub type Changes = mpsc::UnboundedReceiver<Change>;

impl LiveSubscriptions {
    /// A handle and the changes it sends.
    pub fn new() -> (Self, Changes) {
        let (changes, receiver) = mpsc::unbounded_channel();
        (Self { changes }, receiver)
    }

    /// Starts listening to `account`'s channel; resolves once subscribed (see the module).
    pub fn join(&self, account: &str) -> impl Future<Output = ()> + 'static {
        let (subscribed, confirmed) = oneshot::channel();
        let _ = self.changes.send(Change::Join {
            account: account.to_owned(),
            subscribed,
        });
        async move {
            let _ = confirmed.await;
        }
    }

    /// Stops listening to `account`'s channel.
    pub fn leave(&self, account: &str) {
        let _ = self.changes.send(Change::Leave {
            account: account.to_owned(),
        });
    }
}

/// A batch of changes, applied to the accounts listened to: what to subscribe and
/// unsubscribe (each account's last change decides), and the joins to answer after.
#[derive(Default)]
pub struct Applied {
    pub subscribe: Vec<String>,
    pub unsubscribe: Vec<String>,
    pub confirmations: Vec<oneshot::Sender<()>>,
}

/// Applies `changes` to `listened`.
pub fn apply(listened: &mut HashSet<String>, changes: Vec<Change>) -> Applied {
    let mut listened_before: HashMap<String, bool> = HashMap::new();
    let mut applied = Applied::default();
    for change in changes {
        let (account, joins) = match change {
            Change::Join {
                account,
                subscribed,
            } => {
                applied.confirmations.push(subscribed);
                (account, true)
            }
            Change::Leave { account } => (account, false),
        };
        let was = listened.contains(&account);
        listened_before.entry(account.clone()).or_insert(was);
        if joins {
            listened.insert(account);
        } else {
            listened.remove(&account);
        }
    }
    for (account, was) in listened_before {
        match (was, listened.contains(&account)) {
            (false, true) => applied.subscribe.push(account),
            (true, false) => applied.unsubscribe.push(account),
            _ => {}
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(account: &str) -> Change {
        Change::Join {
            account: account.into(),
            subscribed: oneshot::channel().0,
        }
    }

    fn leave(account: &str) -> Change {
        Change::Leave {
            account: account.into(),
        }
    }

    #[test]
    fn each_accounts_last_change_decides_what_is_sent() {
        let mut listened: HashSet<String> = ["kept", "left", "rejoined"].map(String::from).into();
        let changes = vec![
            join("new"),
            leave("left"),
            leave("rejoined"),
            join("rejoined"),
            join("passing"),
            leave("passing"),
            join("kept"),
        ];
        let applied = apply(&mut listened, changes);
        assert_eq!(applied.subscribe, ["new"]);
        assert_eq!(applied.unsubscribe, ["left"]);
        assert_eq!(applied.confirmations.len(), 4);
        let mut now: Vec<_> = listened.into_iter().collect();
        now.sort();
        assert_eq!(now, ["kept", "new", "rejoined"]);
    }
}
