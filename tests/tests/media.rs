//! Media: uploads in binary chunks (`media.upload.start` → chunks → `media.upload.end` →
//! `media.offer`), pulls (`media.pull` → chunks → `media.pull.end`), what is refused and
//! what is left behind when an upload fails, on a local directory and on a real
//! S3-compatible server (moto), and the gateway's memory during a large transfer.
//!
//! The binary frames are built and read here by hand, byte by byte, so these tests check
//! the wire format itself: byte 0 kind (0x01 upload, 0x02 pull), byte 1 id length, the id,
//! then the payload.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use iris_tests::child_process::{resident_kib, ChildProcess};
use iris_tests::client::{Client, Incoming};
use iris_tests::cluster::Cluster;
use iris_tests::cluster_spec::ClusterSpec;
use iris_tests::frames::{id_of, payload_str, payload_u64, type_of};
use iris_tests::http_probe;
use iris_tests::ports::free_port;
use iris_tests::resp::Reply;
use iris_tests::scratch_dir::ScratchDir;

/// Payload bytes per chunk (the protocol's maximum).
const CHUNK: usize = 64 * 1024;
/// Header byte of an upload chunk.
const UPLOAD_KIND: u8 = 0x01;
/// Header byte of a pull chunk.
const PULL_KIND: u8 = 0x02;
/// How long a left-over object may take to disappear after an abort.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Media transfers of several MB on a debug build take a while.
const TRANSFER_TIMEOUT: Duration = Duration::from_secs(60);

/// `len` reproducible pseudo-random bytes (xorshift), different per `seed`.
fn test_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One upload chunk, header built by hand.
fn upload_chunk(media_ref: &str, payload: &[u8]) -> Vec<u8> {
    let mut frame = vec![UPLOAD_KIND, u8::try_from(media_ref.len()).unwrap()];
    frame.extend_from_slice(media_ref.as_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// A per-cluster media directory, and the gateway setting that points at it.
struct MediaDir {
    dir: ScratchDir,
}

impl MediaDir {
    fn new(label: &str) -> Self {
        Self {
            dir: ScratchDir::new(&format!("{label}-media")),
        }
    }

    fn url(&self) -> String {
        format!("file://{}", self.dir.path().display())
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// Waits until no file is left under `dir`; panics with the leftovers otherwise.
async fn assert_no_files_left(dir: &Path) {
    let deadline = Instant::now() + CLEANUP_TIMEOUT;
    loop {
        let left = files_under(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "files left in the media store: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The Redis keys of `account`'s media records and refs.
fn media_keys(cluster: &Cluster, account: &str) -> Vec<String> {
    let pattern = format!("iris:{{a:{account}}}:media*");
    // The pattern names one account's hash tag: on a Cluster every such key is on one node.
    match cluster.redis_command(&["KEYS", &pattern]) {
        Ok(Reply::Array(keys)) => keys
            .iter()
            .filter_map(|key| key.text().map(str::to_owned))
            .collect(),
        other => panic!("KEYS {pattern}: {other:?}"),
    }
}

/// Sends `media.upload.start`; returns its request id.
async fn start_upload(
    client: &mut Client,
    media_ref: &str,
    kind: &str,
    mime: &str,
    size: usize,
) -> u64 {
    let payload = json!({
        "media_ref": media_ref,
        "kind": kind,
        "mime": mime,
        "size": size,
        "filename": format!("{media_ref}.bin"),
    });
    client.request("media.upload.start", None, payload).await
}

/// Sends `media.upload.end`; returns its request id.
async fn end_upload(client: &mut Client, media_ref: &str, sha256: &str) -> u64 {
    let payload = json!({ "media_ref": media_ref, "sha256": sha256 });
    client.request("media.upload.end", None, payload).await
}

/// The frame answering request `id` (frames without that id are skipped).
async fn answer_to(client: &mut Client, id: u64) -> Value {
    loop {
        match client.recv_incoming().await {
            Incoming::Frame(frame) if id_of(&frame) == Some(id) => return frame,
            Incoming::Frame(_) => {}
            Incoming::Binary(bytes) => panic!("unexpected binary frame of {} bytes", bytes.len()),
            Incoming::Closed(code) => panic!("closed ({code:?}) before the answer to {id}"),
        }
    }
}

/// Uploads `bytes` in full chunks and returns the answer to `media.upload.end`.
async fn upload(
    client: &mut Client,
    media_ref: &str,
    kind: &str,
    mime: &str,
    bytes: &[u8],
) -> Value {
    start_upload(client, media_ref, kind, mime, bytes.len()).await;
    for piece in bytes.chunks(CHUNK) {
        client.send_binary(upload_chunk(media_ref, piece)).await;
    }
    let id = end_upload(client, media_ref, &sha256_hex(bytes)).await;
    answer_to(client, id).await
}

/// Asserts `offer` is the `media.offer` for `bytes` and returns its media id.
fn offered_media_id(offer: &Value, kind: &str, mime: &str, bytes: &[u8]) -> String {
    assert_eq!(type_of(offer), "media.offer", "{offer}");
    assert_eq!(payload_str(offer, "kind"), Some(kind), "{offer}");
    assert_eq!(payload_str(offer, "mime"), Some(mime), "{offer}");
    assert_eq!(
        payload_u64(offer, "size"),
        Some(bytes.len() as u64),
        "{offer}"
    );
    let media_id = payload_str(offer, "media_id").expect("media.offer without media_id");
    assert!(
        media_id.starts_with("m_") && media_id.len() == 26,
        "{offer}"
    );
    media_id.to_owned()
}

/// Pulls `media_id`; returns the bytes and the `media.pull.end` answering the pull. Every
/// chunk must carry the pull kind and the media id, and every chunk but the last must be
/// a full 64 KiB. `pace` is slept after each chunk (a slow reader).
async fn pull(client: &mut Client, media_id: &str, pace: Option<Duration>) -> (Vec<u8>, Value) {
    let id = client
        .request("media.pull", None, json!({ "media_id": media_id }))
        .await;
    let mut bytes = Vec::new();
    let mut short_chunk_seen = false;
    loop {
        match client.recv_incoming().await {
            Incoming::Binary(frame) => {
                assert_eq!(frame[0], PULL_KIND, "pull chunk kind");
                let id_len = usize::from(frame[1]);
                assert_eq!(&frame[2..2 + id_len], media_id.as_bytes(), "pull chunk id");
                let payload = &frame[2 + id_len..];
                assert!(!short_chunk_seen, "a chunk followed a short chunk");
                assert!(payload.len() <= CHUNK, "chunk of {} bytes", payload.len());
                short_chunk_seen = payload.len() < CHUNK;
                bytes.extend_from_slice(payload);
                if let Some(pace) = pace {
                    tokio::time::sleep(pace).await;
                }
            }
            Incoming::Frame(frame) if id_of(&frame) == Some(id) => return (bytes, frame),
            Incoming::Frame(_) => {}
            Incoming::Closed(code) => panic!("closed ({code:?}) during the pull of {media_id}"),
        }
    }
}

/// Asserts `answer` is an `error` with `code`; returns its message.
fn assert_error(answer: &Value, code: &str) -> String {
    assert_eq!(type_of(answer), "error", "{answer}");
    assert_eq!(payload_str(answer, "code"), Some(code), "{answer}");
    payload_str(answer, "message")
        .unwrap_or_default()
        .to_owned()
}

/// The next frame, which must be an `error` with `code` (binary-frame errors carry no id).
async fn expect_error(client: &mut Client, code: &str) -> Value {
    let error = client.recv().await;
    assert_error(&error, code);
    error
}

/// Proves concurrent uploads of several MB from two devices of one account on two
/// gateways (one device interleaving two uploads chunk by chunk) each end in a
/// `media.offer`, and each item pulled through the other gateway comes back byte for byte
/// (same SHA-256) in full 64 KiB chunks, ended by `media.pull.end {ok: true}`; and that
/// `hello.ack` announces media.
#[tokio::test]
async fn uploads_from_two_gateways_pull_back_identical_from_the_other() {
    let media = MediaDir::new("media-two-gateways");
    let spec = ClusterSpec::default()
        .gateways(2)
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-two-gateways", spec).await;
    let token = cluster.create_token("mia");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    let ack = phone.pair(&token, "phone-1").await;
    assert_eq!(ack["payload"]["server_caps"]["media"], json!(true), "{ack}");
    tablet.pair(&token, "tablet-1").await;
    for client in [&mut phone, &mut tablet] {
        client.set_recv_timeout(TRANSFER_TIMEOUT);
    }

    let photo = test_bytes(3 * 1024 * 1024 + 12_345, 1);
    let voice = test_bytes(1024 * 1024 + 7, 2);
    let video = test_bytes(5 * 1024 * 1024 + 999, 3);

    let on_phone = async {
        start_upload(&mut phone, "photo", "image", "image/jpeg", photo.len()).await;
        start_upload(&mut phone, "voice", "voice", "audio/ogg", voice.len()).await;
        let mut photo_chunks = photo.chunks(CHUNK);
        let mut voice_chunks = voice.chunks(CHUNK);
        loop {
            let (a, b) = (photo_chunks.next(), voice_chunks.next());
            if a.is_none() && b.is_none() {
                break;
            }
            if let Some(piece) = a {
                phone.send_binary(upload_chunk("photo", piece)).await;
            }
            if let Some(piece) = b {
                phone.send_binary(upload_chunk("voice", piece)).await;
            }
        }
        let voice_end = end_upload(&mut phone, "voice", &sha256_hex(&voice)).await;
        let photo_end = end_upload(&mut phone, "photo", &sha256_hex(&photo)).await;
        let voice_offer = answer_to(&mut phone, voice_end).await;
        let photo_offer = answer_to(&mut phone, photo_end).await;
        (photo_offer, voice_offer)
    };
    let on_tablet = upload(&mut tablet, "clip", "video", "video/mp4", &video);
    let ((photo_offer, voice_offer), video_offer) = tokio::join!(on_phone, on_tablet);

    let photo_id = offered_media_id(&photo_offer, "image", "image/jpeg", &photo);
    assert_eq!(payload_str(&photo_offer, "filename"), Some("photo.bin"));
    let voice_id = offered_media_id(&voice_offer, "voice", "audio/ogg", &voice);
    let video_id = offered_media_id(&video_offer, "video", "video/mp4", &video);

    let (pulled, end) = pull(&mut tablet, &photo_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert_eq!(sha256_hex(&pulled), sha256_hex(&photo));
    assert!(pulled == photo, "the photo came back different");
    let (pulled, end) = pull(&mut tablet, &voice_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert!(pulled == voice, "the voice note came back different");
    let (pulled, end) = pull(&mut phone, &video_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert_eq!(sha256_hex(&pulled), sha256_hex(&video));
    assert!(pulled == video, "the video came back different");
    assert_eq!(files_under(media.path()).len(), 3);
}

/// Proves chunks sent as fragmented WebSocket messages (a first frame and continuations,
/// as Chromium sends large binary messages) are joined and count like whole ones: the
/// upload is kept and pulls back identical, and a fragmented text frame is served too.
#[tokio::test]
async fn chunks_sent_in_fragments_are_joined_into_whole_messages() {
    let media = MediaDir::new("media-fragments");
    let spec = ClusterSpec::default()
        .gateways(1)
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-fragments", spec).await;
    let token = cluster.create_token("fran");
    let mut browser = cluster.connect(0, "browser").await;
    browser.pair(&token, "browser-1").await;
    browser.set_recv_timeout(TRANSFER_TIMEOUT);

    let photo = test_bytes(5 * CHUNK + 4321, 7);
    start_upload(&mut browser, "frag", "image", "image/png", photo.len()).await;
    for piece in photo.chunks(CHUNK) {
        // Uneven fragments, the last one a few bytes, as a browser's send buffer splits them.
        browser
            .send_fragmented_binary(&upload_chunk("frag", piece), CHUNK - 5)
            .await;
    }
    let id = end_upload(&mut browser, "frag", &sha256_hex(&photo)).await;
    let offer = answer_to(&mut browser, id).await;
    let media_id = offered_media_id(&offer, "image", "image/png", &photo);
    let (pulled, end) = pull(&mut browser, &media_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert!(pulled == photo, "the fragmented upload came back different");

    let ping = json!({"v": 1, "id": 77, "type": "ping", "payload": {"ts": 5}}).to_string();
    browser.send_fragmented_text(ping.as_bytes(), 10).await;
    let pong = answer_to(&mut browser, 77).await;
    assert_eq!(type_of(&pong), "pong", "{pong}");
}

/// Proves an upload whose `media.upload.end` carries the wrong SHA-256 is answered with
/// `error {code: unsupported}` naming the mismatch, and nothing is kept: no object in the
/// store, no record or ref in Redis (so it can never be pulled).
#[tokio::test]
async fn a_wrong_sha256_is_refused_and_nothing_is_kept() {
    let media = MediaDir::new("media-bad-sha");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-bad-sha", spec).await;
    let token = cluster.create_token("noel");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let bytes = test_bytes(300_000, 4);
    start_upload(
        &mut phone,
        "doc",
        "document",
        "application/pdf",
        bytes.len(),
    )
    .await;
    for piece in bytes.chunks(CHUNK) {
        phone.send_binary(upload_chunk("doc", piece)).await;
    }
    let wrong = sha256_hex(b"something else");
    let id = end_upload(&mut phone, "doc", &wrong).await;
    let answer = answer_to(&mut phone, id).await;
    let message = assert_error(&answer, "unsupported");
    assert!(message.contains("sha256 mismatch"), "{answer}");

    assert_no_files_left(media.path()).await;
    assert_eq!(media_keys(&cluster, "noel"), Vec::<String>::new());
    let again = end_upload(&mut phone, "doc", &sha256_hex(&bytes)).await;
    assert_error(&answer_to(&mut phone, again).await, "unsupported");
}

/// Proves `media.upload.start` announcing more than `IRIS_MEDIA_MAX_BYTES` is answered
/// with `error {code: media_too_large}` carrying its id, the upload never starts (its
/// chunks are refused), and an announcement at the limit is accepted.
#[tokio::test]
async fn an_announced_size_over_the_limit_is_media_too_large() {
    let media = MediaDir::new("media-oversize");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url())
        .gateway_env("IRIS_MEDIA_MAX_BYTES", "100000");
    let cluster = Cluster::start("media-oversize", spec).await;
    let token = cluster.create_token("olga");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let id = start_upload(&mut phone, "big", "video", "video/mp4", 100_001).await;
    let answer = answer_to(&mut phone, id).await;
    assert_error(&answer, "media_too_large");
    phone.send_binary(upload_chunk("big", b"bytes")).await;
    expect_error(&mut phone, "unsupported").await;

    let bytes = test_bytes(100_000, 5);
    let offer = upload(&mut phone, "fits", "video", "video/mp4", &bytes).await;
    offered_media_id(&offer, "video", "video/mp4", &bytes);
}

/// Proves that a chunk taking an upload past its announced size is answered with
/// `error {code: media_too_large}`, the upload is aborted (its `media.upload.end` finds no
/// upload) and nothing is left in the store or in Redis.
#[tokio::test]
async fn bytes_beyond_the_announced_size_are_media_too_large_and_abort_the_upload() {
    let media = MediaDir::new("media-overflow");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-overflow", spec).await;
    let token = cluster.create_token("pia");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let bytes = test_bytes(2 * CHUNK + 1, 6);
    start_upload(&mut phone, "liar", "image", "image/png", 2 * CHUNK).await;
    for piece in bytes.chunks(CHUNK) {
        phone.send_binary(upload_chunk("liar", piece)).await;
    }
    let error = expect_error(&mut phone, "media_too_large").await;
    assert_eq!(id_of(&error), None, "{error}");
    let id = end_upload(&mut phone, "liar", &sha256_hex(&bytes[..2 * CHUNK])).await;
    assert_error(&answer_to(&mut phone, id).await, "unsupported");
    assert_no_files_left(media.path()).await;
    assert_eq!(media_keys(&cluster, "pia"), Vec::<String>::new());
}

/// Proves that a connection dropped in the middle of an upload leaves nothing behind:
/// the partial object is removed from the store and no record or ref exists, so there is
/// nothing to pull; a new connection of the same device may upload again.
#[tokio::test]
async fn a_disconnect_mid_upload_leaves_nothing_behind() {
    let media = MediaDir::new("media-disconnect");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-disconnect", spec).await;
    let token = cluster.create_token("quinn");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let bytes = test_bytes(3 * 1024 * 1024, 7);
    start_upload(
        &mut phone,
        "half",
        "document",
        "application/zip",
        bytes.len(),
    )
    .await;
    for piece in bytes[..2 * 1024 * 1024].chunks(CHUNK) {
        phone.send_binary(upload_chunk("half", piece)).await;
    }
    // A ping answered means every chunk before it reached the session.
    let ping = phone.request("ping", None, json!({})).await;
    answer_to(&mut phone, ping).await;
    phone.close().await;

    assert_no_files_left(media.path()).await;
    assert_eq!(media_keys(&cluster, "quinn"), Vec::<String>::new());

    let mut again = cluster.connect(0, "phone-again").await;
    again.set_recv_timeout(TRANSFER_TIMEOUT);
    again.pair(&token, "phone-1").await;
    let offer = upload(&mut again, "half", "document", "application/zip", &bytes).await;
    offered_media_id(&offer, "document", "application/zip", &bytes);
}

/// Proves media is private to its account: another account's device pulling a valid
/// media id gets `error {code: not_found}` (as does a malformed id), while a device of the
/// owning account pulls it.
#[tokio::test]
async fn another_accounts_media_is_not_found() {
    let media = MediaDir::new("media-accounts");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-accounts", spec).await;
    let mut owner = cluster.connect(0, "owner").await;
    owner
        .pair(&cluster.create_token("rosa"), "rosa-phone")
        .await;
    let mut stranger = cluster.connect(0, "stranger").await;
    stranger
        .pair(&cluster.create_token("sam"), "sam-phone")
        .await;

    let bytes = test_bytes(200_000, 8);
    let offer = upload(&mut owner, "secret", "image", "image/webp", &bytes).await;
    let media_id = offered_media_id(&offer, "image", "image/webp", &bytes);

    for id in [media_id.as_str(), "m_000000000000000000000000", "../rosa/x"] {
        let request = stranger
            .request("media.pull", None, json!({ "media_id": id }))
            .await;
        let answer = answer_to(&mut stranger, request).await;
        assert_error(&answer, "not_found");
    }
    let (pulled, end) = pull(&mut owner, &media_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert!(pulled == bytes);
}

/// Largest text message the gateway accepts (`IRIS_MAX_FRAME_BYTES` default).
const TEXT_LIMIT: usize = 64 * 1024;

/// Proves that raising the WebSocket codec's limit to fit a media chunk (64 KiB of payload
/// plus a header of up to 257 bytes) does not raise the text limit: a full chunk with a
/// long `media_ref` is accepted, while a text message a few bytes over 64 KiB (small enough
/// for the codec) is still answered with `error` and close 1009.
#[tokio::test]
async fn text_messages_keep_their_64_kib_limit_while_full_chunks_fit() {
    let media = MediaDir::new("media-text-limit");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-text-limit", spec).await;
    let token = cluster.create_token("vera");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;

    let long_ref = "r".repeat(128);
    let bytes = test_bytes(CHUNK, 13);
    let offer = upload(&mut phone, &long_ref, "document", "text/plain", &bytes).await;
    offered_media_id(&offer, "document", "text/plain", &bytes);

    let padding = "x".repeat(TEXT_LIMIT);
    let oversize = json!({ "v": 1, "id": 99, "type": "ping", "payload": { "pad": padding } });
    let text = oversize.to_string();
    assert!(text.len() > TEXT_LIMIT && text.len() < TEXT_LIMIT + 200);
    phone.send_text(&text).await;
    expect_error(&mut phone, "unsupported").await;
    assert_eq!(phone.expect_close().await, Some(1009));
}

/// A moto S3 server for one test, killed when dropped.
struct MotoServer {
    addr: SocketAddr,
    _process: ChildProcess,
    _logs: ScratchDir,
}

/// How long moto may take over its first S3 request.
const FIRST_S3_REQUEST: Duration = Duration::from_secs(30);

impl MotoServer {
    /// Starts `moto_server` from the venv `scripts/install-moto.sh` creates and waits
    /// until it answers.
    async fn start(label: &str) -> Self {
        let venv = std::env::var_os("IRIS_MOTO_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cache/iris-cluster/moto-venv")
            });
        let binary = venv.join("bin").join("moto_server");
        assert!(
            binary.is_file(),
            "moto_server not found at {}: run scripts/install-moto.sh",
            binary.display()
        );
        let logs = ScratchDir::new(&format!("{label}-moto"));
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut command = Command::new(binary);
        command
            .args(["-H", "127.0.0.1", "-p", &addr.port().to_string()])
            .env("PYTHONUNBUFFERED", "1");
        let process = ChildProcess::spawn("moto", command, logs.path());
        let deadline = Instant::now() + Duration::from_secs(60);
        while http_probe::get(addr, "/moto-api/").await.is_err() {
            assert!(
                Instant::now() < deadline,
                "moto_server did not answer on {addr}:\n{}",
                process.log_tail(40)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Self {
            addr,
            _process: process,
            _logs: logs,
        }
    }

    /// Creates `bucket` (moto accepts a plain unsigned `PUT /bucket`). moto loads its S3
    /// backend on the first S3 request, which takes seconds on a loaded machine.
    async fn create_bucket(&self, bucket: &str) {
        let path = format!("/{bucket}");
        let put =
            http_probe::request_within(FIRST_S3_REQUEST, self.addr, "PUT", &path, None, None, &[]);
        let response = put.await.expect("PUT to moto");
        assert_eq!(
            response.status, 200,
            "creating bucket {bucket}: {response:?}"
        );
    }

    /// Keys of the objects in `bucket` (`ListObjectsV2`).
    async fn object_keys(&self, bucket: &str) -> Vec<String> {
        let response = http_probe::get(self.addr, &format!("/{bucket}?list-type=2"))
            .await
            .expect("listing the bucket");
        response
            .body
            .split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_owned()))
            .collect()
    }
}

/// Proves the same round trip against a real S3-compatible server (moto): an item of
/// several MB (more than one 5 MiB multipart part) uploaded through one gateway lands
/// under `<prefix>/<account>/<media_id>` in the bucket and is pulled back identical
/// through another gateway; a wrong SHA-256 leaves no object in the bucket.
#[tokio::test]
async fn media_round_trips_through_an_s3_compatible_store() {
    let moto = MotoServer::start("media-s3").await;
    moto.create_bucket("iris-media").await;
    let endpoint = format!("http://{}", moto.addr);
    let spec = ClusterSpec::default()
        .gateways(2)
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", "s3://iris-media/iris")
        .gateway_env("AWS_ENDPOINT_URL", &endpoint)
        .gateway_env("AWS_ACCESS_KEY_ID", "test")
        .gateway_env("AWS_SECRET_ACCESS_KEY", "test")
        .gateway_env("AWS_REGION", "us-east-1")
        .gateway_env("AWS_ALLOW_HTTP", "true");
    let cluster = Cluster::start("media-s3", spec).await;
    let token = cluster.create_token("tess");
    let mut phone = cluster.connect(0, "phone").await;
    let mut laptop = cluster.connect(1, "laptop").await;
    phone.pair(&token, "phone-1").await;
    laptop.pair(&token, "laptop-1").await;
    for client in [&mut phone, &mut laptop] {
        client.set_recv_timeout(TRANSFER_TIMEOUT);
    }

    let bytes = test_bytes(6 * 1024 * 1024 + 4321, 9);
    let offer = upload(&mut phone, "s3-clip", "video", "video/webm", &bytes).await;
    let media_id = offered_media_id(&offer, "video", "video/webm", &bytes);
    assert_eq!(
        moto.object_keys("iris-media").await,
        vec![format!("iris/tess/{media_id}")]
    );
    let (pulled, end) = pull(&mut laptop, &media_id, None).await;
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert_eq!(sha256_hex(&pulled), sha256_hex(&bytes));
    assert!(pulled == bytes, "the S3 round trip changed the bytes");

    let other = test_bytes(100_000, 10);
    start_upload(&mut phone, "bad", "image", "image/gif", other.len()).await;
    for piece in other.chunks(CHUNK) {
        phone.send_binary(upload_chunk("bad", piece)).await;
    }
    let id = end_upload(&mut phone, "bad", &sha256_hex(b"not it")).await;
    assert_error(&answer_to(&mut phone, id).await, "unsupported");
    assert_eq!(moto.object_keys("iris-media").await.len(), 1);
}

/// Resident memory of `pid` in KiB (0 once it is gone).
fn rss_kib(pid: u32) -> u64 {
    resident_kib(pid).unwrap_or(0)
}

/// Samples the peak RSS of `pid` until `stop` is set.
fn watch_peak_rss(
    pid: u32,
    stop: Arc<AtomicBool>,
) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
    let peak = Arc::new(AtomicU64::new(rss_kib(pid)));
    let peak_for_task = peak.clone();
    let task = tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            peak_for_task.fetch_max(rss_kib(pid), Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    (peak, task)
}

/// Item size for the memory test: near the default 25 MiB limit.
const LARGE_ITEM_BYTES: usize = 24 * 1024 * 1024;
/// How much the gateway's RSS may grow while a [`LARGE_ITEM_BYTES`] item goes through it:
/// a third of the item. Buffering the whole item would take at least all of it.
const RSS_GROWTH_LIMIT_KIB: u64 = (LARGE_ITEM_BYTES / 3 / 1024) as u64;

/// Proves the gateway streams media with bounded memory: while a 24 MiB item is uploaded
/// and then pulled by a slow reader, the gateway's resident memory grows by far less than
/// the item (at most a third of it), so neither direction holds the item in memory.
#[tokio::test]
async fn a_large_transfer_does_not_grow_gateway_memory_by_its_size() {
    let media = MediaDir::new("media-memory");
    let spec = ClusterSpec::default()
        .workers(0)
        .gateway_env("IRIS_MEDIA_STORE", &media.url());
    let cluster = Cluster::start("media-memory", spec).await;
    let pid = cluster.gateway_pid(0);
    let token = cluster.create_token("uma");
    let mut phone = cluster.connect(0, "phone").await;
    phone.pair(&token, "phone-1").await;
    phone.set_recv_timeout(TRANSFER_TIMEOUT);
    let bytes = test_bytes(LARGE_ITEM_BYTES, 11);
    // Warm up allocator and code paths with a small transfer first.
    let warmup = test_bytes(256 * 1024, 12);
    let offer = upload(
        &mut phone,
        "warmup",
        "document",
        "application/octet-stream",
        &warmup,
    )
    .await;
    let warm_id = offered_media_id(&offer, "document", "application/octet-stream", &warmup);
    pull(&mut phone, &warm_id, None).await;

    let before_upload = rss_kib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let (peak, watcher) = watch_peak_rss(pid, stop.clone());
    let offer = upload(&mut phone, "large", "video", "video/mp4", &bytes).await;
    stop.store(true, Ordering::Relaxed);
    watcher.await.unwrap();
    let upload_peak = peak.load(Ordering::Relaxed);
    let media_id = offered_media_id(&offer, "video", "video/mp4", &bytes);

    let before_pull = rss_kib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let (peak, watcher) = watch_peak_rss(pid, stop.clone());
    let (pulled, end) = pull(&mut phone, &media_id, Some(Duration::from_millis(5))).await;
    stop.store(true, Ordering::Relaxed);
    watcher.await.unwrap();
    let pull_peak = peak.load(Ordering::Relaxed);
    assert_eq!(end["payload"]["ok"], json!(true), "{end}");
    assert!(pulled == bytes, "the large item came back different");

    eprintln!(
        "gateway VmRSS (KiB): upload {before_upload} -> peak {upload_peak} (+{}); \
         pull {before_pull} -> peak {pull_peak} (+{}); item {} KiB",
        upload_peak.saturating_sub(before_upload),
        pull_peak.saturating_sub(before_pull),
        LARGE_ITEM_BYTES / 1024
    );
    assert!(
        upload_peak.saturating_sub(before_upload) < RSS_GROWTH_LIMIT_KIB,
        "RSS grew from {before_upload} to {upload_peak} KiB during a {LARGE_ITEM_BYTES}-byte upload"
    );
    assert!(
        pull_peak.saturating_sub(before_pull) < RSS_GROWTH_LIMIT_KIB,
        "RSS grew from {before_pull} to {pull_peak} KiB during a {LARGE_ITEM_BYTES}-byte pull"
    );
}

/// Proves that `message.send {media_refs}` attaches uploaded media to the user's message:
/// every device of the account sees it as `media` on the message, media the agent
/// produces (the echo agent offers the attachment back) reaches every device as
/// `media.offer` and stays on the answer in history, and a ref that names no media of the
/// account is `not_found`.
#[tokio::test]
async fn media_sent_with_a_message_appears_on_every_device() {
    let media = MediaDir::new("media-on-messages");
    let spec = ClusterSpec::default()
        .gateways(2)
        .gateway_env("IRIS_MEDIA_STORE", &media.url())
        .worker_env("IRIS_ECHO_DELAY_MS", "0");
    let cluster = Cluster::start("media-on-messages", spec).await;
    let token = cluster.create_token("sam");
    let mut phone = cluster.connect(0, "phone").await;
    let mut tablet = cluster.connect(1, "tablet").await;
    phone.pair(&token, "phone-1").await;
    tablet.pair(&token, "tablet-1").await;

    let photo = test_bytes(200_000, 7);
    let offer = upload(&mut phone, "holiday-photo", "image", "image/jpeg", &photo).await;
    let media_id = offered_media_id(&offer, "image", "image/jpeg", &photo);

    let id = phone
        .request(
            "message.send",
            Some("android:default"),
            json!({ "text": "look at this", "media_refs": ["holiday-photo"] }),
        )
        .await;
    for (device, client) in [("phone", &mut phone), ("tablet", &mut tablet)] {
        let turn = client.collect_turn().await;
        let message = turn
            .iter()
            .find(|f| type_of(f) == "message" && payload_str(f, "text") == Some("look at this"))
            .unwrap_or_else(|| panic!("[{device}] no user message: {turn:#?}"));
        assert_eq!(
            message["payload"]["media"][0]["media_id"],
            json!(media_id),
            "[{device}] {message}"
        );
        assert_eq!(message["payload"]["media"][0]["kind"], "image");
        if device == "phone" {
            assert_eq!(id_of(message), Some(id));
        }
        let offer = turn
            .iter()
            .find(|f| type_of(f) == "media.offer")
            .unwrap_or_else(|| panic!("[{device}] the echo agent offered no media: {turn:#?}"));
        assert_eq!(payload_str(offer, "media_id"), Some(media_id.as_str()));
    }

    phone.request("history", None, json!({ "limit": 2 })).await;
    let history = phone.recv_until("history").await.pop().unwrap();
    let answer = &history["payload"]["messages"][1];
    assert_eq!(answer["role"], "assistant", "{history}");
    assert_eq!(answer["media"][0]["media_id"], json!(media_id), "{history}");

    phone
        .request(
            "message.send",
            None,
            json!({ "text": "and this", "media_refs": ["never-uploaded"] }),
        )
        .await;
    expect_error(&mut phone, "not_found").await;
}
