//! One Redis command over a raw TCP connection (RESP2), enough for the harness to ping a
//! server and read a few keys without a Redis client crate.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long one command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// A Redis reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK` style status, or a bulk string.
    Text(String),
    /// An integer.
    Integer(i64),
    /// A nil bulk string or array.
    Nil,
    /// An array of replies.
    Array(Vec<Reply>),
    /// An error reply.
    Error(String),
}

impl Reply {
    /// The text of a status or bulk-string reply.
    pub fn text(&self) -> Option<&str> {
        match self {
            Reply::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// Runs `args` (command name first) against the Redis on 127.0.0.1:`port`.
pub fn command(port: u16, args: &[&str]) -> io::Result<Reply> {
    let mut replies = commands(port, &[args])?;
    Ok(replies.remove(0))
}

/// Runs several commands, in order, on one connection to 127.0.0.1:`port` (for commands
/// that act on the connection, such as Redis Cluster's `ASKING` before the asked one).
pub fn commands(port: u16, all: &[&[&str]]) -> io::Result<Vec<Reply>> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(COMMAND_TIMEOUT))?;
    stream.set_write_timeout(Some(COMMAND_TIMEOUT))?;
    let mut request = String::new();
    for args in all {
        request.push_str(&format!("*{}\r\n", args.len()));
        for arg in *args {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
    }
    (&stream).write_all(request.as_bytes())?;
    let mut reader = BufReader::new(stream);
    all.iter().map(|_| read_reply(&mut reader)).collect()
}

fn read_reply(reader: &mut impl BufRead) -> io::Result<Reply> {
    let line = read_line(reader)?;
    let (kind, rest) = line.split_at(1.min(line.len()));
    match kind {
        "+" => Ok(Reply::Text(rest.to_owned())),
        "-" => Ok(Reply::Error(rest.to_owned())),
        ":" => Ok(Reply::Integer(parse_len(rest)?)),
        "$" => match parse_len(rest)? {
            -1 => Ok(Reply::Nil),
            len => {
                let mut body = vec![0; usize::try_from(len).unwrap_or(0) + 2];
                reader.read_exact(&mut body)?;
                body.truncate(body.len() - 2);
                Ok(Reply::Text(String::from_utf8_lossy(&body).into_owned()))
            }
        },
        "*" => match parse_len(rest)? {
            -1 => Ok(Reply::Nil),
            len => (0..len)
                .map(|_| read_reply(reader))
                .collect::<io::Result<_>>()
                .map(Reply::Array),
        },
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected RESP line {line:?}"),
        )),
    }
}

fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(line.trim_end_matches("\r\n").to_owned())
}

fn parse_len(text: &str) -> io::Result<i64> {
    text.parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad RESP number {text:?}"),
        )
    })
}
