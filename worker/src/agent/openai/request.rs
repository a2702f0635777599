//! The body of one streamed `POST /v1/chat/completions`: the conversation so far, then the
//! user's new message.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::Serialize;

use crate::agent::TurnInput;

/// A chat completion request that streams its answer and reports usage at the end.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    /// Left out when nothing names a model, so the upstream picks its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    stream: bool,
    stream_options: StreamOptions,
    messages: Vec<WireMessage<'a>>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    /// Asks for a final chunk with `usage`, the only place token counts are streamed.
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'a str,
    content: WireContent<'a>,
}

/// A message's content: plain text, or text and images as OpenAI content parts.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<ContentPart<'a>>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
struct ImageUrl {
    /// The image inline, as a `data:` URL (the upstream needs no access to our store).
    url: String,
}

fn latest_content(input: &TurnInput) -> WireContent<'_> {
    if input.images.is_empty() {
        return WireContent::Text(&input.text);
    }
    let text = ContentPart::Text { text: &input.text };
    let images = input.images.iter().map(|image| ContentPart::ImageUrl {
        image_url: ImageUrl {
            url: format!("data:{};base64,{}", image.mime, BASE64.encode(&image.data)),
        },
    });
    WireContent::Parts(std::iter::once(text).chain(images).collect())
}

impl<'a> ChatRequest<'a> {
    /// The request for `input`, answered by `model`.
    pub fn new(model: Option<&'a str>, input: &'a TurnInput) -> Self {
        let earlier = input.history.iter().map(|message| WireMessage {
            role: &message.role,
            content: WireContent::Text(&message.content),
        });
        let latest = WireMessage {
            role: "user",
            content: latest_content(input),
        };
        Self {
            model,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            messages: earlier.chain([latest]).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{ChatMessage, ImageInput};

    #[test]
    fn attached_images_become_content_parts_of_the_latest_message_only() {
        let input = TurnInput {
            text: "what is this?".into(),
            history: vec![ChatMessage {
                role: "user".into(),
                content: "hi".into(),
            }],
            images: vec![ImageInput {
                mime: "image/png".into(),
                data: vec![1, 2, 3],
                filename: Some("dot.png".into()),
            }],
            ..Default::default()
        };
        let body = serde_json::to_value(ChatRequest::new(Some("m"), &input)).unwrap();
        assert_eq!(body["messages"][0]["content"], "hi");
        let parts = &body["messages"][1]["content"];
        assert_eq!(
            parts[0],
            serde_json::json!({ "type": "text", "text": "what is this?" })
        );
        assert_eq!(parts[1]["type"], "image_url");
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,AQID");
    }

    #[test]
    fn a_message_without_images_stays_plain_text() {
        let input = TurnInput {
            text: "hello".into(),
            ..Default::default()
        };
        let body = serde_json::to_value(ChatRequest::new(None, &input)).unwrap();
        assert_eq!(body["messages"][0]["content"], "hello");
        assert!(body.get("model").is_none());
    }
}
