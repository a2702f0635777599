//! What a run's event reader tells its controls: the run id once Hermes accepted the run
//! (controls called earlier wait for it) and the approval the run is waiting on.

use std::sync::Mutex;

use tokio::sync::watch;

/// Where the submission of a run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Submission {
    /// `POST /v1/runs` has not answered yet.
    Pending,
    /// Hermes accepted the run under this id.
    Accepted(String),
    /// There is no run to control: Hermes refused it or its reader gave up before knowing.
    NoRun,
}

/// State shared by a run's event reader (which writes) and its controls (which read).
#[derive(Debug)]
pub(super) struct RunState {
    submission: watch::Sender<Submission>,
    /// Id of the approval Hermes waits on, if any.
    pending_approval: Mutex<Option<String>>,
}

impl RunState {
    /// A run not submitted yet.
    pub(super) fn new() -> Self {
        RunState {
            submission: watch::Sender::new(Submission::Pending),
            pending_approval: Mutex::new(None),
        }
    }

    /// Hermes accepted the run as `run_id`.
    pub(super) fn accepted(&self, run_id: &str) {
        self.submission
            .send_replace(Submission::Accepted(run_id.to_owned()));
    }

    /// There will be no run id: wakes controls waiting for one.
    pub(super) fn no_run(&self) {
        self.submission.send_if_modified(|submission| {
            let waiting = *submission == Submission::Pending;
            if waiting {
                *submission = Submission::NoRun;
            }
            waiting
        });
    }

    /// The run id, once the submission is answered; `None` if there is no run.
    pub(super) async fn run_id(&self) -> Option<String> {
        let mut submission = self.submission.subscribe();
        let answered = submission
            .wait_for(|submission| *submission != Submission::Pending)
            .await;
        match answered.as_deref() {
            Ok(Submission::Accepted(run_id)) => Some(run_id.clone()),
            _ => None,
        }
    }

    /// The run id if already known, without waiting.
    pub(super) fn run_id_now(&self) -> Option<String> {
        match &*self.submission.borrow() {
            Submission::Accepted(run_id) => Some(run_id.clone()),
            _ => None,
        }
    }

    /// The run now waits on approval `approval_id` (`None`: on none).
    pub(super) fn set_pending_approval(&self, approval_id: Option<String>) {
        *self.lock_approval() = approval_id;
    }

    /// Id of the approval the run waits on, if any.
    pub(super) fn pending_approval(&self) -> Option<String> {
        self.lock_approval().clone()
    }

    fn lock_approval(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        // A panic while holding this lock cannot leave the Option half-written.
        self.pending_approval
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
