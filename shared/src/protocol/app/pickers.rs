//! The `picker.select` app payload: the answer to any `picker.*` frame.

use serde::{Deserialize, Serialize};

/// Payload of `picker.select`: the user's answer to a picker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PickerSelect {
    /// The picker being answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picker_id: Option<String>,
    /// The chosen value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}
