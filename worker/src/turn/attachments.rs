//! What a turn's message carries: its attached media's records (shown on the user's message)
//! and the attached images the agent is shown.

use iris_shared::media::record as media_record;
use iris_shared::media::store::MediaStore;
use iris_shared::protocol::{MediaKind, MediaRef};
use iris_shared::redis_conn::{Connection, Pool};

use futures_util::StreamExt;

use crate::agent::ImageInput;
use crate::turn::publisher::PublishError;

/// The media records of the attached media ids (ids without a record are left out: the
/// gateway checked them, so only an expired record can be missing).
pub async fn attached_media(
    redis: &Pool,
    account: &str,
    media_ids: &[String],
) -> Result<Vec<MediaRef>, PublishError> {
    if media_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut conn = redis.get().await?;
    let mut media = Vec::with_capacity(media_ids.len());
    for media_id in media_ids {
        if let Some(record) = media_record::load(&mut conn, account, media_id).await? {
            media.push(record.to_media_ref());
        }
    }
    Ok(media)
}

/// Most images shown to the agent with one message.
const MAX_IMAGES: usize = 4;
/// Largest image shown to the agent; bigger ones stay on the message only.
const MAX_IMAGE_BYTES: u64 = 8 * 1024 * 1024;

/// The attached images the agent is shown (read whole: they are bounded by
/// [`MAX_IMAGE_BYTES`]). An image that cannot be read is left out with a log line: the
/// turn goes on with the text.
pub async fn attached_images(
    store: &MediaStore,
    conn: &mut Connection,
    account: &str,
    media_ids: &[String],
) -> Vec<ImageInput> {
    let mut images = Vec::new();
    for media_id in media_ids {
        if images.len() == MAX_IMAGES {
            break;
        }
        let Ok(Some(record)) = media_record::load(conn, account, media_id).await else {
            continue;
        };
        if record.kind != MediaKind::Image || record.size > MAX_IMAGE_BYTES {
            continue;
        }
        match read_whole(store, account, media_id).await {
            Ok(data) => images.push(ImageInput {
                mime: record.mime.clone(),
                data,
                filename: record.filename.clone(),
            }),
            Err(err) => tracing::warn!(%err, media_id, "attached image not readable"),
        }
    }
    images
}

async fn read_whole(
    store: &MediaStore,
    account: &str,
    media_id: &str,
) -> Result<Vec<u8>, iris_shared::media::store::MediaStoreError> {
    let mut pieces = store.read(account, media_id).await?;
    let mut data = Vec::new();
    while let Some(piece) = pieces.next().await {
        data.extend_from_slice(&piece?);
    }
    Ok(data)
}
