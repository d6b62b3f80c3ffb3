//! The Thrift codec of `snowmint-server` (framed transport, strict binary
//! protocol): `decode` and `decode_call` on any bytes, as the server runs
//! them on what a peer sends, and `decode_answer` as a client would.
//!
//! Properties: nothing panics; a decoded frame used exactly its 4-byte
//! length plus the length it announced, which is within the limit; the
//! frame's body decodes alone to the same call; a known call re-encoded
//! with `encode_call` decodes to the same method and sequence ID; an
//! answer encoded for a decoded call decodes back to its value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snowmint_server::thrift::codec::{self, Answer, AppErrorKind, Method};

/// A small limit as well, so that the length check is exercised both ways.
const LIMITS: [usize; 2] = [codec::DEFAULT_MAX_FRAME, 64];

fuzz_target!(|data: &[u8]| {
    for max in LIMITS {
        let Ok(Some((call, used))) = codec::decode(data, max) else {
            continue;
        };
        let len = used - 4;
        assert!(len >= 1 && len <= max && used <= data.len());
        assert_eq!(
            codec::frame_len([data[0], data[1], data[2], data[3]], max),
            Ok(len)
        );
        assert_eq!(codec::decode_call(&data[4..used]).as_ref(), Ok(&call));

        let agent = match &call.method {
            Method::GetId(a) => a.as_deref(),
            _ => None,
        };
        let again = codec::encode_call(&call.name, call.seqid, agent);
        let (back, n) = codec::decode(&again, usize::MAX)
            .expect("a re-encoded call decodes")
            .expect("a whole frame");
        assert_eq!(n, again.len());
        assert_eq!((back.seqid, &back.method), (call.seqid, &call.method));

        let v = i64::from(call.seqid).wrapping_mul(0x9e37_79b9);
        let reply = codec::encode_i64_reply(&call.name, call.seqid, v);
        assert_eq!(
            codec::decode_answer(&reply[4..]),
            Ok((call.name.clone(), call.seqid, Answer::Value(v)))
        );
        let message = String::from_utf8_lossy(agent.unwrap_or_default()).into_owned();
        let error =
            codec::encode_app_error(&call.name, call.seqid, AppErrorKind::Unknown, &message);
        assert_eq!(
            codec::decode_answer(&error[4..]),
            Ok((call.name.clone(), call.seqid, Answer::AppError(0, message)))
        );
    }
    let _ = codec::decode_answer(data);
    let _ = codec::valid_agent(data);
});
