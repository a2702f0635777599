//! What the chat actor can do to a running turn (stop it, reach its upstream run, answer
//! its approvals), and how the upstream's part of a turn ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::agent::RunControl;

/// How long a stopped turn waits for the upstream to confirm before ending anyway.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A device's request answered by a frame the turn writes later.
#[derive(Debug, Clone)]
pub struct PendingAnswer {
    /// Device that asked.
    pub device_id: String,
    /// Its request id.
    pub request_id: Option<u64>,
}

/// An approval the turn is waiting for.
#[derive(Debug, Clone)]
pub struct OpenApproval {
    /// The upstream's id of the approval.
    pub approval_id: String,
    /// The `picker.select` that answered it, answered in turn by the resolution notice.
    pub answered_by: Option<PendingAnswer>,
}

/// What the chat actor can do to a running turn.
#[derive(Clone)]
pub struct TurnControl {
    /// Set when `agent.stop` arrives.
    stop: Arc<watch::Sender<bool>>,
    /// The `agent.stop` the turn's `agent.idle` answers.
    pub stop_request: Arc<Mutex<Option<PendingAnswer>>>,
    /// The upstream run's controls, once it started.
    pub run: Arc<Mutex<Option<Arc<dyn RunControl>>>>,
    /// Approvals waiting for an answer, by picker id.
    pub approvals: Arc<Mutex<HashMap<String, OpenApproval>>>,
}

impl Default for TurnControl {
    fn default() -> Self {
        Self {
            stop: Arc::new(watch::channel(false).0),
            stop_request: Arc::default(),
            run: Arc::default(),
            approvals: Arc::default(),
        }
    }
}

impl TurnControl {
    /// Asks the turn to stop: the upstream run is stopped and the turn ends cleanly.
    pub fn request_stop(&self) -> Option<Arc<dyn RunControl>> {
        self.stop.send_replace(true);
        self.run.lock().ok().and_then(|run| run.clone())
    }

    /// Whether a stop was asked for.
    pub(super) fn stop_requested(&self) -> bool {
        *self.stop.borrow()
    }

    /// The upstream run's controls, if it has started.
    pub fn run_control(&self) -> Option<Arc<dyn RunControl>> {
        self.run.lock().ok().and_then(|run| run.clone())
    }

    /// Resolves once a stop was requested and the upstream had [`STOP_GRACE`] to confirm.
    pub(super) async fn stop_deadline(&self) {
        let mut stop = self.stop.subscribe();
        let _ = stop.wait_for(|stopped| *stopped).await;
        tokio::time::sleep(STOP_GRACE).await;
    }
}

/// How the upstream's part of the turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Finished.
    Done {
        /// Model that answered.
        model: Option<String>,
        /// Tokens used.
        tokens: Option<u64>,
    },
    /// Failed with this reason.
    Failed(String),
    /// Stopped on request.
    Cancelled,
}
