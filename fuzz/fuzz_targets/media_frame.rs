//! Fuzz target: any bytes through the binary media frame decoder. It must return, never
//! panic; a decoded frame encodes back to the same bytes.

#![no_main]

use bytes::Bytes;
use iris_shared::media::frame::{decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(chunk) = decode(Bytes::copy_from_slice(data)) {
        let encoded = encode(chunk.kind, &chunk.id, &chunk.payload).expect("decoded frames encode");
        assert_eq!(&encoded[..], data);
    }
});
