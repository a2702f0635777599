//! Runs every file of the fuzz seed corpus (`fuzz/seeds/`) through the decoder its fuzz
//! target exercises, with the target's own checks, so the corpus runs in every test run
//! and not only under `scripts/fuzz.sh`.

use std::fs;
use std::path::PathBuf;

use bytes::Bytes;
use iris_shared::media::frame::{decode, encode};
use iris_shared::protocol::{parse_app_frame, parse_app_frame_within, InputLimits};

fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let bytes = fs::read(&path).expect("seed file");
            (path, bytes)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{} holds too few seeds", dir.display());
    files
}

#[test]
fn every_text_frame_seed_parses_or_is_refused_without_panicking() {
    let mut accepted = 0;
    for (path, bytes) in seeds("parse_app_frame") {
        let text = String::from_utf8_lossy(&bytes);
        let plain = parse_app_frame(&text);
        match parse_app_frame_within(&text, &InputLimits::default()) {
            Ok(frame) => {
                accepted += 1;
                assert_eq!(plain.as_ref().ok(), Some(&frame), "{}", path.display());
                assert_eq!(parse_app_frame(&frame.to_json()), Ok(frame));
            }
            Err(error) => {
                let answer = error.to_error_frame().to_json();
                assert!(
                    answer.contains("unsupported"),
                    "{}: {answer}",
                    path.display()
                );
            }
        }
    }
    assert!(accepted >= 20, "only {accepted} seeds are valid frames");
}

#[test]
fn every_media_frame_seed_decodes_or_is_refused_without_panicking() {
    for (path, bytes) in seeds("media_frame") {
        if let Ok(chunk) = decode(Bytes::from(bytes.clone())) {
            let encoded = encode(chunk.kind, &chunk.id, &chunk.payload)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            assert_eq!(&encoded[..], &bytes[..], "{}", path.display());
        }
    }
}
