//! Thrift's framed transport and strict binary protocol, as far as the
//! Snowflake service needs them: calls in, replies and application
//! exceptions out. Pure functions over byte slices (no I/O), so that the
//! fuzz target runs exactly the decoder the server runs.
//!
//! A frame is a 4-byte big-endian length and that many bytes. A message is
//! `i32 version|type` (strict: `0x8001_0000 | type`), the method name (an
//! `i32` length and UTF-8 bytes), an `i32` sequence ID, then the arguments
//! as one struct. Lengths are checked against the bytes left before anything
//! is allocated; nothing here allocates more than the method name and the
//! `useragent` string, both inside an already bounded frame.

/// The largest frame accepted by default (64 KiB): Snowflake's calls are a
/// few dozen bytes.
pub const DEFAULT_MAX_FRAME: usize = 64 * 1024;

/// The strict binary protocol's version word.
const VERSION_1: u32 = 0x8001_0000;
/// The mask of the version bits.
const VERSION_MASK: u32 = 0xffff_0000;

/// Message types.
const CALL: u8 = 1;
const REPLY: u8 = 2;
const EXCEPTION: u8 = 3;

/// Field types.
const T_STOP: u8 = 0;
const T_BOOL: u8 = 2;
const T_BYTE: u8 = 3;
const T_DOUBLE: u8 = 4;
const T_I16: u8 = 6;
const T_I32: u8 = 8;
const T_I64: u8 = 10;
const T_STRING: u8 = 11;
const T_STRUCT: u8 = 12;
const T_MAP: u8 = 13;
const T_SET: u8 = 14;
const T_LIST: u8 = 15;

/// How deeply structs and containers may nest in arguments that are skipped.
const MAX_DEPTH: usize = 32;

/// `TApplicationException` types (Thrift's numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum AppErrorKind {
    /// No more specific type: used for a refused user agent.
    Unknown = 0,
    /// The method is not one of Snowflake's four.
    UnknownMethod = 1,
    /// A reply, exception or oneway message where a call was expected.
    InvalidMessageType = 2,
    /// The server could not answer (a lease or the clock): used for issue failures.
    InternalError = 6,
}

/// Why bytes are not a call. Every one closes the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodecError {
    /// The frame length is negative, zero or above the limit.
    FrameLength(i64),
    /// The message does not start with the strict version word.
    NotStrict(u32),
    /// A length or count is negative or larger than the bytes left.
    Length(i64),
    /// The frame ended inside a value.
    Truncated,
    /// An unknown field type.
    FieldType(u8),
    /// Structs or containers nested deeper than the limit.
    TooDeep,
    /// The method name is not UTF-8.
    Name,
    /// Bytes after the argument struct.
    Trailing(usize),
}

impl std::fmt::Display for CodecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodecError::FrameLength(n) => write!(f, "frame length {n} is not allowed"),
            CodecError::NotStrict(w) => {
                write!(f, "not a strict binary protocol message (0x{w:08x})")
            }
            CodecError::Length(n) => write!(f, "length {n} is out of range"),
            CodecError::Truncated => write!(f, "the frame ended inside a value"),
            CodecError::FieldType(t) => write!(f, "unknown field type {t}"),
            CodecError::TooDeep => write!(f, "values nested deeper than {MAX_DEPTH}"),
            CodecError::Name => write!(f, "the method name is not UTF-8"),
            CodecError::Trailing(n) => write!(f, "{n} bytes after the arguments"),
        }
    }
}

impl std::error::Error for CodecError {}

/// The Snowflake methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// `i64 get_worker_id()`.
    GetWorkerId,
    /// `i64 get_timestamp()`.
    GetTimestamp,
    /// `i64 get_id(1:string useragent)`: the agent as sent (bytes, maybe
    /// not UTF-8); absent when the field was not sent or not a string.
    GetId(Option<Vec<u8>>),
    /// `i64 get_datacenter_id()`.
    GetDatacenterId,
    /// Any other name: answered with `UNKNOWN_METHOD`.
    Unknown,
}

/// One decoded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The method name as sent.
    pub name: String,
    /// The message type (1: call; anything else is answered `INVALID_MESSAGE_TYPE`).
    pub kind: u8,
    /// The sequence ID, echoed in the answer.
    pub seqid: i32,
    /// The method and its arguments.
    pub method: Method,
}

/// The frame length announced by a 4-byte header, or an error when it is
/// not between 1 and `max`. Called before the frame is read, so a huge
/// length never reaches an allocation.
pub fn frame_len(header: [u8; 4], max: usize) -> Result<usize, CodecError> {
    let n = i32::from_be_bytes(header);
    if n <= 0 || n as usize > max {
        return Err(CodecError::FrameLength(i64::from(n)));
    }
    Ok(n as usize)
}

/// Decodes the first frame of `buf`: `Ok(None)` when more bytes are needed,
/// else the call and the number of bytes it used. The server reads the
/// header and the body separately with the same two functions.
pub fn decode(buf: &[u8], max: usize) -> Result<Option<(Call, usize)>, CodecError> {
    let Some(header) = buf.get(..4) else {
        return Ok(None);
    };
    let len = frame_len([header[0], header[1], header[2], header[3]], max)?;
    let Some(body) = buf.get(4..4 + len) else {
        return Ok(None);
    };
    Ok(Some((decode_call(body)?, 4 + len)))
}

/// A cursor over one frame.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).ok_or(CodecError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(CodecError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, CodecError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Result<i32, CodecError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// A length or count: non-negative and, at `min_each` bytes per item, not
    /// more than what is left.
    fn count(&mut self, min_each: usize) -> Result<usize, CodecError> {
        let n = self.i32()?;
        if n < 0 || (n as usize).saturating_mul(min_each) > self.left() {
            return Err(CodecError::Length(i64::from(n)));
        }
        Ok(n as usize)
    }
    fn binary(&mut self) -> Result<&'a [u8], CodecError> {
        let n = self.count(1)?;
        self.take(n)
    }
    /// Skips one value of type `t`.
    fn skip(&mut self, t: u8, depth: usize) -> Result<(), CodecError> {
        if depth > MAX_DEPTH {
            return Err(CodecError::TooDeep);
        }
        match t {
            T_BOOL | T_BYTE => self.take(1).map(drop),
            T_I16 => self.take(2).map(drop),
            T_I32 => self.take(4).map(drop),
            T_DOUBLE | T_I64 => self.take(8).map(drop),
            T_STRING => self.binary().map(drop),
            T_STRUCT => loop {
                let ft = self.u8()?;
                if ft == T_STOP {
                    return Ok(());
                }
                self.i16()?;
                self.skip(ft, depth + 1)?;
            },
            T_MAP => {
                let (kt, vt) = (self.u8()?, self.u8()?);
                let n = self.count(min_size(kt)? + min_size(vt)?)?;
                for _ in 0..n {
                    self.skip(kt, depth + 1)?;
                    self.skip(vt, depth + 1)?;
                }
                Ok(())
            }
            T_SET | T_LIST => {
                let et = self.u8()?;
                let n = self.count(min_size(et)?)?;
                for _ in 0..n {
                    self.skip(et, depth + 1)?;
                }
                Ok(())
            }
            other => Err(CodecError::FieldType(other)),
        }
    }
}

/// The fewest bytes a value of type `t` takes (so that a count can be
/// checked against the bytes left before any loop runs).
fn min_size(t: u8) -> Result<usize, CodecError> {
    Ok(match t {
        T_BOOL | T_BYTE | T_STRUCT => 1,
        T_I16 => 2,
        T_I32 | T_STRING | T_SET | T_LIST => 4,
        T_DOUBLE | T_I64 => 8,
        T_MAP => 6,
        other => return Err(CodecError::FieldType(other)),
    })
}

/// Decodes one frame's body (without the length) into a call.
pub fn decode_call(frame: &[u8]) -> Result<Call, CodecError> {
    let mut r = Reader { buf: frame, pos: 0 };
    let word = r.i32()? as u32;
    if word & VERSION_MASK != VERSION_1 {
        return Err(CodecError::NotStrict(word));
    }
    let kind = (word & 0xff) as u8;
    let name = std::str::from_utf8(r.binary()?)
        .map_err(|_| CodecError::Name)?
        .to_string();
    let seqid = r.i32()?;
    let mut agent = None;
    let get_id = name == "get_id";
    loop {
        let ft = r.u8()?;
        if ft == T_STOP {
            break;
        }
        let id = r.i16()?;
        if get_id && id == 1 && ft == T_STRING {
            agent = Some(r.binary()?.to_vec());
        } else {
            r.skip(ft, 1)?;
        }
    }
    if r.left() != 0 {
        return Err(CodecError::Trailing(r.left()));
    }
    let method = match name.as_str() {
        "get_worker_id" => Method::GetWorkerId,
        "get_timestamp" => Method::GetTimestamp,
        "get_id" => Method::GetId(agent),
        "get_datacenter_id" => Method::GetDatacenterId,
        _ => Method::Unknown,
    };
    Ok(Call {
        name,
        kind,
        seqid,
        method,
    })
}

fn put_header(out: &mut Vec<u8>, kind: u8, name: &str, seqid: i32) {
    out.extend_from_slice(&[0; 4]); // the frame length, set by `finish`
    out.extend_from_slice(&(VERSION_1 | u32::from(kind)).to_be_bytes());
    out.extend_from_slice(&(name.len() as i32).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&seqid.to_be_bytes());
}

fn finish(mut out: Vec<u8>) -> Vec<u8> {
    let len = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    out
}

/// A framed reply carrying an `i64` result (field 0 of the result struct).
pub fn encode_i64_reply(name: &str, seqid: i32, value: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + name.len());
    put_header(&mut out, REPLY, name, seqid);
    out.push(T_I64);
    out.extend_from_slice(&0i16.to_be_bytes());
    out.extend_from_slice(&value.to_be_bytes());
    out.push(T_STOP);
    finish(out)
}

/// A framed `TApplicationException`: field 1 the message, field 2 the type.
pub fn encode_app_error(name: &str, seqid: i32, kind: AppErrorKind, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + name.len() + message.len());
    put_header(&mut out, EXCEPTION, name, seqid);
    out.push(T_STRING);
    out.extend_from_slice(&1i16.to_be_bytes());
    out.extend_from_slice(&(message.len() as i32).to_be_bytes());
    out.extend_from_slice(message.as_bytes());
    out.push(T_I32);
    out.extend_from_slice(&2i16.to_be_bytes());
    out.extend_from_slice(&(kind as i32).to_be_bytes());
    out.push(T_STOP);
    finish(out)
}

/// A framed call (what a client sends): for tests, the fuzz target and the
/// load client. `agent` becomes `get_id`'s field 1 when given.
pub fn encode_call(name: &str, seqid: i32, agent: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + name.len());
    put_header(&mut out, CALL, name, seqid);
    if let Some(a) = agent {
        out.push(T_STRING);
        out.extend_from_slice(&1i16.to_be_bytes());
        out.extend_from_slice(&(a.len() as i32).to_be_bytes());
        out.extend_from_slice(a);
    }
    out.push(T_STOP);
    finish(out)
}

/// What a client reads back: an `i64` result or an application exception.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A reply's `i64`.
    Value(i64),
    /// A `TApplicationException`'s type and message.
    AppError(i32, String),
}

/// Decodes one answer frame's body (client side: tests, fuzz target, load
/// client), with its method name and sequence ID.
pub fn decode_answer(frame: &[u8]) -> Result<(String, i32, Answer), CodecError> {
    let mut r = Reader { buf: frame, pos: 0 };
    let word = r.i32()? as u32;
    if word & VERSION_MASK != VERSION_1 {
        return Err(CodecError::NotStrict(word));
    }
    let kind = (word & 0xff) as u8;
    let name = std::str::from_utf8(r.binary()?)
        .map_err(|_| CodecError::Name)?
        .to_string();
    let seqid = r.i32()?;
    let (mut value, mut message, mut etype) = (None, String::new(), 0);
    loop {
        let ft = r.u8()?;
        if ft == T_STOP {
            break;
        }
        let id = r.i16()?;
        match (kind, id, ft) {
            (REPLY, 0, T_I64) => {
                let b = r.take(8)?;
                value = Some(i64::from_be_bytes(b.try_into().expect("8 bytes")));
            }
            (EXCEPTION, 1, T_STRING) => {
                message = String::from_utf8_lossy(r.binary()?).into_owned();
            }
            (EXCEPTION, 2, T_I32) => etype = r.i32()?,
            _ => r.skip(ft, 1)?,
        }
    }
    if r.left() != 0 {
        return Err(CodecError::Trailing(r.left()));
    }
    let answer = match (kind, value) {
        (REPLY, Some(v)) => Answer::Value(v),
        (EXCEPTION, _) => Answer::AppError(etype, message),
        (REPLY, None) => Answer::AppError(AppErrorKind::Unknown as i32, "no result".into()),
        (other, _) => return Err(CodecError::NotStrict(VERSION_1 | u32::from(other))),
    };
    Ok((name, seqid, answer))
}

/// True for a message type that is a call (oneway calls, type 4, are not
/// part of Snowflake's service and are refused like replies).
pub fn is_call(kind: u8) -> bool {
    kind == CALL
}

/// The longest user agent accepted. Snowflake's rule puts no bound on the
/// length, but an agent is a metrics label: with [`MAX_AGENT_LEN`] bytes and
/// at most `max_agents` of them named, the labels stay within 64 KiB.
pub const MAX_AGENT_LEN: usize = 64;

/// The user agent rule of Snowflake's original server,
/// `[a-zA-Z][a-zA-Z\-0-9]*` (the whole string), and at most
/// [`MAX_AGENT_LEN`] bytes.
pub fn valid_agent(agent: &[u8]) -> bool {
    if agent.len() > MAX_AGENT_LEN {
        return false;
    }
    match agent.split_first() {
        Some((first, rest)) => {
            first.is_ascii_alphabetic()
                && rest.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_round_trips() {
        let f = encode_call("get_id", 7, Some(b"web-1"));
        let (call, used) = decode(&f, DEFAULT_MAX_FRAME).unwrap().unwrap();
        assert_eq!(used, f.len());
        assert_eq!(call.seqid, 7);
        assert_eq!(call.method, Method::GetId(Some(b"web-1".to_vec())));
        assert!(is_call(call.kind));
        assert_eq!(decode(&f[..f.len() - 1], DEFAULT_MAX_FRAME), Ok(None));
    }

    #[test]
    fn answers_round_trip() {
        let f = encode_i64_reply("get_id", 3, -5);
        assert_eq!(
            decode_answer(&f[4..]).unwrap(),
            ("get_id".into(), 3, Answer::Value(-5))
        );
        let f = encode_app_error("nope", 4, AppErrorKind::UnknownMethod, "no");
        assert_eq!(
            decode_answer(&f[4..]).unwrap(),
            ("nope".into(), 4, Answer::AppError(1, "no".into()))
        );
    }

    #[test]
    fn lengths_are_checked_first() {
        assert_eq!(
            frame_len(0x7fff_ffffu32.to_be_bytes(), DEFAULT_MAX_FRAME),
            Err(CodecError::FrameLength(0x7fff_ffff))
        );
        assert!(frame_len((-1i32).to_be_bytes(), DEFAULT_MAX_FRAME).is_err());
        assert!(frame_len(0i32.to_be_bytes(), DEFAULT_MAX_FRAME).is_err());
        // A list claiming 2^31 - 1 elements in a 30-byte frame.
        let mut f = encode_call("get_timestamp", 1, None);
        f.pop();
        f.extend_from_slice(&[T_LIST, 0, 1, T_I64, 0x7f, 0xff, 0xff, 0xff, T_STOP]);
        let n = (f.len() - 4) as i32;
        f[..4].copy_from_slice(&n.to_be_bytes());
        assert_eq!(decode_call(&f[4..]), Err(CodecError::Length(0x7fff_ffff)));
    }

    #[test]
    fn agents() {
        assert!(valid_agent(b"a"));
        assert!(valid_agent(b"Web-01"));
        assert!(!valid_agent(b""));
        assert!(!valid_agent(b"1web"));
        assert!(!valid_agent(b"-web"));
        assert!(!valid_agent(b"web_1"));
        assert!(!valid_agent(b"web 1"));
        assert!(!valid_agent("wéb".as_bytes()));
    }
}
