//! The web client every gateway serves at `/`, driven in headless Chromium: two browser
//! profiles are two devices of one account, each loading the page from its own gateway,
//! against a cluster whose worker runs its turns on a real Hermes (scripted fake LLM), or,
//! for reasoning (which Hermes 0.19 does not stream), on the fake LLM as an OpenAI-compatible
//! upstream.
//! Each test runs one scenario of `tests/browser/scenarios/`; the scenario checks what the
//! pages show and keeps screenshots of the main states in `target/web-client-screenshots/`.

use std::time::Duration;

use tokio::sync::Mutex;

use iris_tests::browser_scenario::{run_scenario, ScenarioSetup};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::fake_llm::FakeLlm;
use iris_tests::hermes_upstream::HermesUpstream;

/// The account both browser profiles pair as.
const ACCOUNT: &str = "grace";
/// The longest one scenario may take, browser start and Hermes' turns included.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(240);

/// Scenarios run one at a time: each starts two Chromium profiles and most a Hermes, and
/// side by side on a small machine they would measure its load, not the page.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// The gateways' server API key in the scenarios that use it.
const ADMIN_KEY: &str = "web-client-scenario-admin-key";

/// Starts a two-gateway cluster with `spec`'s workers and runs scenario `name` on it, when
/// no other scenario runs.
async fn run_on(label: &str, name: &str, spec: ClusterSpec) {
    let _alone = ONE_AT_A_TIME.lock().await;
    start_and_run(label, name, spec).await;
}

async fn start_and_run(label: &str, name: &str, spec: ClusterSpec) {
    let spec = spec.gateways(2).gateway_env("IRIS_ADMIN_KEY", ADMIN_KEY);
    let mut cluster = Cluster::start(label, spec).await;
    let setup = ScenarioSetup {
        account: ACCOUNT.into(),
        token: cluster.create_token(ACCOUNT),
        admin_key: ADMIN_KEY.into(),
        timeout: SCENARIO_TIMEOUT,
    };
    run_scenario(name, &mut cluster, setup).await;
}

/// Starts Hermes and a two-gateway cluster on it, then runs scenario `name`, when no
/// other scenario runs.
async fn run_against_hermes(label: &str, name: &str) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let hermes = HermesUpstream::start(label).await;
    start_and_run(label, name, hermes.workers_of(ClusterSpec::default())).await;
}

/// Proves pairing and a turn in the browser: both pages pair (online), a message sent on one
/// shows on both with Hermes' answer streamed (with its model and token count), and a
/// dangerous command's approval picker shows on both; answered on the second page,
/// the tool card ends ok on both, the picker is marked answered on both, and the turn ends.
#[tokio::test]
async fn two_browsers_of_one_account_see_one_streamed_turn_and_answer_its_approval() {
    run_against_hermes("web-turn", "turn_and_approval").await;
}

/// Proves the sidebar, search and media in the browser: a channel created on one page shows
/// on the other, a search on the second page finds a message of the first channel and jumps
/// to it (switching chat, highlighted), and an image uploaded by picker on one page is shown
/// decoded on both pages.
#[tokio::test]
async fn a_channel_a_search_jump_and_an_uploaded_image_reach_both_browsers() {
    run_against_hermes("web-sidebar", "channels_search_media").await;
}

/// Proves that nothing is missed when the gateway a page is connected to dies: gateway 0 is
/// killed, its page shows it is reconnecting, the other page sends a message meanwhile, and
/// the first page comes back online on gateway 1 with that message and its answer, once.
#[tokio::test]
async fn a_browser_whose_gateway_is_killed_reconnects_to_another_and_catches_up() {
    run_against_hermes("web-failover", "gateway_failover").await;
}

/// Proves reasoning is shown: an answer streamed by an OpenAI-compatible upstream with
/// reasoning shows it on both pages in a collapsible block above the text (collapsed until
/// opened), with the model and the token count.
#[tokio::test]
async fn an_answer_with_reasoning_shows_it_collapsible_above_the_text_on_both_browsers() {
    let llm = FakeLlm::start("web-reasoning").await;
    let spec = ClusterSpec::default()
        .worker_env("IRIS_AGENT", "openai")
        .worker_env("IRIS_AGENT_URL", &llm.url());
    run_on("web-reasoning", "reasoning", spec).await;
}

/// Proves the rest of a day's use on the echo agent: a chat with 130 earlier messages opens
/// on its newest page and scrolls back through every one, once each and in order; `/ti`
/// autocompletes to `/title`, which renames the chat on both pages; a notification from the
/// server API shows as a toast on both; a page reloaded during a long streamed answer still
/// shows the chat busy, and Stop ends the answer at once, cut short; and each page shows the
/// other device's read receipt on the newest answer.
#[tokio::test]
async fn history_scrolls_back_slash_commands_complete_stop_cuts_an_answer_and_toasts_show() {
    let spec = ClusterSpec::default().worker_env("IRIS_ECHO_DELAY_MS", "300");
    run_on("web-history", "history_commands_stop", spec).await;
}
