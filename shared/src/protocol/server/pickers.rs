//! Picker server payloads: the app shows a chooser and answers with `picker.select`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Payload of `picker.model`: choose a provider and model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerModel {
    /// Id the answering `picker.select` must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// Model in use now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_model: Option<String>,
    /// Provider in use now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_provider: Option<String>,
    /// Providers and their models to choose from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<Vec<ModelProvider>>,
}

/// A provider offered by `picker.model`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelProvider {
    /// Provider id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelOption>>,
}

/// A model offered by `picker.model`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelOption {
    /// Model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Payload of `picker.choice`: choose one of several values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerChoice {
    /// Id the answering `picker.select` must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// Headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<ChoiceOption>>,
}

/// One option of `picker.choice`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChoiceOption {
    /// Value sent back in `picker.select`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Display text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// True for the option in effect now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_current: Option<bool>,
}

/// Payload of `picker.clarify`: the agent asks a clarifying question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerClarify {
    /// Id the answering `picker.select` must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// The question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Suggested answers; the contract leaves their shape open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Map<String, Value>>>,
}

/// Payload of `picker.approval`: approve a command before it runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerApproval {
    /// Id the answering `picker.select` must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// The command awaiting approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What it will do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Payload of `picker.confirm`: confirm an action.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerConfirm {
    /// Id the answering `picker.select` must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// Headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What is being confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
