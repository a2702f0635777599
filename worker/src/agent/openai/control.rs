//! Controls of one OpenAI-compatible turn: it can be stopped, nothing more — a chat
//! completion asks for no approvals and takes no input once started.

use futures_util::future::{self, BoxFuture, FutureExt};
use tokio::sync::watch;

use crate::agent::{AgentError, RunControl};

/// Stops a run by flipping the flag its event stream watches.
pub(super) struct OpenAiControl {
    stopped: watch::Sender<bool>,
}

impl OpenAiControl {
    /// A control and the flag for the run's event stream to watch.
    pub fn new() -> (Self, watch::Receiver<bool>) {
        let (stopped, stop_seen) = watch::channel(false);
        (Self { stopped }, stop_seen)
    }
}

impl RunControl for OpenAiControl {
    fn stop(&self) -> BoxFuture<'static, Result<(), AgentError>> {
        self.stopped.send_replace(true);
        future::ready(Ok(())).boxed()
    }

    fn approve(
        &self,
        _approval_id: &str,
        _choice: &str,
    ) -> BoxFuture<'static, Result<(), AgentError>> {
        let refusal = AgentError::NotActive("this agent asks for no approvals".into());
        future::ready(Err(refusal)).boxed()
    }

    fn steer(&self, _text: &str) -> BoxFuture<'static, Result<(), AgentError>> {
        let refusal = AgentError::Unsupported(
            "an OpenAI-compatible chat completion cannot be steered; \
             stop it and send a new message instead"
                .into(),
        );
        future::ready(Err(refusal)).boxed()
    }
}
