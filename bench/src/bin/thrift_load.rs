//! A load client for `snowmint-server --thrift`: C connections, each a thread
//! calling `get_id` (framed transport, strict binary protocol) one call at a
//! time for D seconds; prints calls/s and checks every ID unique.
//!
//!     thrift_load ADDR [CONNECTIONS=64] [SECONDS=5]
//!
//! The frames are written here (std only) so that the benchmark shares no
//! code with the server it measures.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn call_frame(seqid: i32) -> Vec<u8> {
    let name = b"get_id";
    let agent = b"load";
    let mut body = Vec::new();
    body.extend_from_slice(&0x8001_0001u32.to_be_bytes());
    body.extend_from_slice(&(name.len() as i32).to_be_bytes());
    body.extend_from_slice(name);
    body.extend_from_slice(&seqid.to_be_bytes());
    body.push(11); // string
    body.extend_from_slice(&1i16.to_be_bytes());
    body.extend_from_slice(&(agent.len() as i32).to_be_bytes());
    body.extend_from_slice(agent);
    body.push(0); // stop
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    frame
}

/// The `i64` of a reply frame's body: header, then field 0 (type 10) and stop.
fn reply_id(body: &[u8]) -> u64 {
    let name_len = i32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
    let fields = &body[12 + name_len..];
    assert_eq!(body[3], 2, "not a reply: {body:?}");
    assert_eq!(&fields[..3], &[10, 0, 0], "not an i64 result: {body:?}");
    u64::from_be_bytes(fields[3..11].try_into().unwrap())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .get(1)
        .expect("usage: thrift_load ADDR [CONNECTIONS] [SECONDS]")
        .clone();
    let conns: usize = args.get(2).map_or(64, |a| a.parse().expect("CONNECTIONS"));
    let secs: u64 = args.get(3).map_or(5, |a| a.parse().expect("SECONDS"));
    let frame = call_frame(1);
    let start = Instant::now();
    let end = start + Duration::from_secs(secs);
    let threads: Vec<_> = (0..conns)
        .map(|_| {
            let addr = addr.clone();
            let frame = frame.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).expect("connect");
                s.set_nodelay(true).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut ids = Vec::new();
                let mut body = [0u8; 64];
                while Instant::now() < end {
                    s.write_all(&frame).unwrap();
                    let mut header = [0u8; 4];
                    s.read_exact(&mut header).unwrap();
                    let len = i32::from_be_bytes(header) as usize;
                    assert!(len <= body.len(), "answer of {len} bytes");
                    s.read_exact(&mut body[..len]).unwrap();
                    ids.push(reply_id(&body[..len]));
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut total = 0usize;
    for t in threads {
        let ids = t.join().unwrap();
        total += ids.len();
        all.extend(ids);
    }
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(all.len(), total, "duplicate IDs");
    println!(
        "{total} get_id calls over {conns} connections in {elapsed:.2} s: {:.0} calls/s, all unique",
        total as f64 / elapsed
    );
}
