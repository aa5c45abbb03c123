//! The control protocol quicbench drives a server with (one JSON line per
//! command on stdin, one per reply on stdout; testdata/control.txt is its
//! transcript), the state it sets and reads (cache policy, request counts,
//! matching statistics, qlog directory), and the connection records it
//! returns (testdata/record.json). The QUIC library's side — closing its
//! connections and reading their statistics — is the `Connections` trait.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{json, Value};

use crate::site::MatchKind;

/// The most unmatched requests listed by `replay` (the Go side's
/// server.MaxUnmatchedListed).
const MAX_UNMATCHED_LISTED: usize = 200;

/// The reply to a command the protocol does not have.
const UNKNOWN: &str =
    "unknown command: use cache on|off, close, conns, counts, qlog DIR|off or replay";

/// What matching did since the last `replay` command (the Go side's
/// server.Replay).
#[derive(Default, Serialize)]
struct Replay {
    exact: u64,
    fuzzy: u64,
    variant: u64,
    unmatched: u64,
    unmatched_requests: Vec<String>,
    /// "METHOD URL TARGET" per request answered with a variant: the
    /// recorded target that answered it (the Go side's Variants, left out
    /// when empty as Go leaves it out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    variants: Vec<String>,
    body_bytes: u64,
}

/// Which handshake a connection made, from the server's own view, named as
/// the Go origin names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeKind {
    /// Not finished (yet).
    Incomplete,
    /// A full handshake.
    Full,
    /// Resumed from a session ticket, without 0-RTT data accepted.
    Resumed,
    /// Resumed with the client's 0-RTT data accepted.
    ZeroRtt,
}

impl HandshakeKind {
    /// The kind's name in connection records.
    pub fn name(self) -> &'static str {
        match self {
            HandshakeKind::Incomplete => "incomplete",
            HandshakeKind::Full => "full",
            HandshakeKind::Resumed => "resumed",
            HandshakeKind::ZeroRtt => "0rtt",
        }
    }
}

/// A connection's record as `conns` prints it (testdata/record.json;
/// quicbench's internal/h3server reads it).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Record {
    /// The ALPN protocol agreed ("h3"), "" before the handshake.
    pub alpn: String,
    /// The client's server name indication.
    pub server_name: String,
    /// The client's address and port.
    pub remote: String,
    /// A HandshakeKind's name.
    pub handshake: &'static str,
    /// Requests received on it.
    pub requests: u64,
    /// When it was accepted, in ns since the Unix epoch.
    pub opened_unix_ns: u128,
    /// Whether it is closed (or closing).
    pub closed: bool,
    /// UDP payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// The congestion controller's name as quicbench calls it.
    pub congestion: String,
    /// The smoothed RTT, in ms.
    pub srtt_ms: f64,
    /// The congestion window now, in bytes.
    pub cwnd_bytes: u64,
    /// Packets declared lost.
    pub lost_packets: u64,
    /// Packets sent.
    pub sent_packets: u64,
    /// Congestion events (window reductions); 0 where the library does not
    /// count them.
    pub congestion_events: u64,
    /// The path's maximum UDP payload now, in bytes.
    pub mtu: u16,
    /// The times the server worked on the connection's requests, each
    /// [from, to] in ns since the Unix epoch: from when a request's header
    /// fields were read to when its response's header fields went to the
    /// QUIC stack (as the Go origin records them); left out when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub serving_unix_ns: Vec<[u128; 2]>,
}

/// The QUIC library's side of the control commands.
pub trait Connections {
    /// Closes every client connection with H3_NO_ERROR and forgets them.
    fn close_all(&mut self);
    /// A record of each connection since the last close_all, read now.
    fn records(&self) -> Vec<Record>;
}

/// The state the control commands set and read.
#[derive(Default)]
pub struct Control {
    /// Whether responses are cacheable (header fields "on", 304 answers).
    pub cache: AtomicBool,
    /// The requests received since the start.
    pub requests: AtomicU64,
    qlog_dir: Mutex<Option<PathBuf>>,
    replay: Mutex<Replay>,
}

impl Control {
    /// Notes a request that matched nothing, as "METHOD URL".
    pub fn note_unmatched(&self, request: String) {
        let mut r = self.replay.lock().unwrap();
        r.unmatched += 1;
        if r.unmatched_requests.len() < MAX_UNMATCHED_LISTED {
            r.unmatched_requests.push(request);
        }
    }

    /// Lists a request ("METHOD URL") answered with the variant recorded at
    /// target; note_match counts it.
    pub fn note_variant(&self, request: String, target: &str) {
        let mut r = self.replay.lock().unwrap();
        if r.variants.len() < MAX_UNMATCHED_LISTED {
            r.variants.push(format!("{request} {target}"));
        }
    }

    /// Notes a request answered from the site, and the body bytes sent.
    pub fn note_match(&self, kind: MatchKind, body_bytes: usize) {
        let mut r = self.replay.lock().unwrap();
        match kind {
            MatchKind::Exact => r.exact += 1,
            MatchKind::Fuzzy => r.fuzzy += 1,
            MatchKind::Variant => r.variant += 1,
        }
        r.body_bytes += body_bytes as u64;
    }

    /// The directory new connections' qlogs go to, if any.
    pub fn qlog_dir(&self) -> Option<PathBuf> {
        self.qlog_dir.lock().unwrap().clone()
    }

    /// Runs one control command and returns its reply.
    pub fn command(&self, line: &str, conns: &mut dyn Connections) -> Value {
        let ok = json!({"ok": true});
        match line {
            "cache on" | "cache off" => {
                self.cache.store(line == "cache on", Ordering::SeqCst);
                ok
            }
            "close" => {
                conns.close_all();
                ok
            }
            "conns" => json!(conns.records()),
            "qlog off" => {
                *self.qlog_dir.lock().unwrap() = None;
                ok
            }
            _ if line.starts_with("qlog ") => {
                *self.qlog_dir.lock().unwrap() = Some(PathBuf::from(&line[5..]));
                ok
            }
            "counts" => json!({"h3": self.requests.load(Ordering::SeqCst)}),
            "replay" => json!(std::mem::take(&mut *self.replay.lock().unwrap())),
            _ => json!({ "error": UNKNOWN }),
        }
    }
}

/// Creates the qlog file of the connection whose original destination
/// connection ID is `cid` in `dir`, as `<cid in hex>_server.sqlog`; never
/// through a link or over a file (create_new). On failure the error goes to
/// stderr, prefixed with `server`, and the connection gets no qlog.
pub fn qlog_file(server: &str, dir: &Path, cid: &[u8]) -> Option<(File, String)> {
    let name: String = cid.iter().map(|b| format!("{b:02x}")).collect();
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(format!("{name}_server.sqlog")))
    {
        Ok(f) => Some((f, name)),
        Err(e) => {
            eprintln!("{server}: qlog file in {}: {e}", dir.display());
            None
        }
    }
}

/// Now, in ns since the Unix epoch.
pub fn unix_now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// The line a server prints once it serves: its controller (as quicbench
/// names it), initial window in bytes, and whether it paces and runs
/// HyStart (a slow start that leaves early when the RTT grows).
pub fn ready(cc: &str, initial_window_bytes: u64, pacing: bool, hystart: bool) -> Value {
    json!({"ready": true, "cc": cc, "initial_window_bytes": initial_window_bytes, "pacing": pacing, "hystart": hystart})
}

/// The text of one control line as read (its newline still on), or the
/// error reply to a line that is not UTF-8: the server answers it and
/// reads on, as it does an unknown command.
pub fn line_text(bytes: &[u8]) -> Result<&str, Value> {
    std::str::from_utf8(bytes).map(str::trim).map_err(
        |e| json!({ "error": format!("a control line that is not UTF-8 text ({e}): {UNKNOWN}") }),
    )
}

/// Makes a panic print one line on stderr, `server: panicked at FILE:LINE:
/// MESSAGE`, instead of the default lines and backtrace: quicbench shows a
/// server's last line of stderr when it exits.
pub fn one_line_panics(server: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("{server}: panicked at {at}: {}", message.replace('\n', " "));
    }));
}

/// Prints one reply line on stdout and flushes it.
pub fn reply<T: Serialize>(v: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections that note what was asked of them.
    #[derive(Default)]
    struct Fake {
        closed: usize,
    }

    impl Connections for Fake {
        fn close_all(&mut self) {
            self.closed += 1;
        }
        fn records(&self) -> Vec<Record> {
            Vec::new()
        }
    }

    /// The server's side of testdata/control.txt: its ready line, and
    /// each command's reply, on a state that answered one request from the
    /// site exactly (5,120 body bytes), one fuzzily (a HEAD), one with a
    /// variant (a HEAD) and one not.
    #[test]
    fn control_transcript() {
        let control = Control::default();
        let mut conns = Fake::default();
        control.requests.fetch_add(4, Ordering::SeqCst);
        control.note_unmatched("GET https://www.quicbench.test/missing".into());
        control.note_match(MatchKind::Exact, 5120);
        control.note_match(MatchKind::Fuzzy, 0);
        control.note_match(MatchKind::Variant, 0);
        let text = include_str!("../testdata/control.txt");
        let mut lines = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty());
        let parse = |l: &str, dir: &str| -> Value {
            let rest = l
                .strip_prefix(dir)
                .unwrap_or_else(|| panic!("{l:?}: want {dir}"));
            serde_json::from_str(rest).unwrap_or_else(|e| panic!("{rest}: {e}"))
        };
        let first = parse(lines.next().unwrap(), "< ");
        assert_eq!(ready("cubic", 32 * 1200, true, false), first);
        let mut replies = 0;
        while let Some(cmd) = lines.next() {
            let cmd = cmd.strip_prefix("> ").expect("a command");
            let want = parse(lines.next().expect("a reply"), "< ");
            assert_eq!(control.command(cmd, &mut conns), want, "reply to {cmd:?}");
            replies += 1;
        }
        assert!(replies >= 10, "only {replies} commands in the transcript");
        assert_eq!(conns.closed, 1, "one close in the transcript");
        assert!(
            !control.cache.load(Ordering::SeqCst),
            "cache off was the last"
        );
        assert!(control.qlog_dir().is_none(), "qlog off was sent");
    }

    /// A connection's record has the fields and types of
    /// testdata/record.json, which quicbench's side parses too.
    #[test]
    fn record_as_quicbench_reads_it() {
        let r = Record {
            alpn: "h3".into(),
            server_name: "www.quicbench.test".into(),
            remote: "198.18.0.1:40123".into(),
            handshake: HandshakeKind::ZeroRtt.name(),
            requests: 33,
            opened_unix_ns: 1_764_000_000_123_456_789,
            closed: false,
            bytes_sent: 354_210,
            bytes_received: 12_040,
            congestion: "cubic".into(),
            srtt_ms: 101.5,
            cwnd_bytes: 98_304,
            lost_packets: 3,
            sent_packets: 291,
            congestion_events: 1,
            mtu: 1452,
            serving_unix_ns: vec![[1_764_000_000_200_000_000, 1_764_000_000_200_400_000]],
        };
        let want: Value = serde_json::from_str(include_str!("../testdata/record.json")).unwrap();
        assert_eq!(json!(r), want);
    }

    #[test]
    fn qlog_files_are_never_reused() {
        let dir = std::env::temp_dir().join(format!("quicbench-serve-qlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = qlog_file("test", &dir, &[0xab, 0x01]);
        assert_eq!(first.as_ref().map(|(_, n)| n.as_str()), Some("ab01"));
        assert!(
            qlog_file("test", &dir, &[0xab, 0x01]).is_none(),
            "the same name again"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A control line that is not UTF-8 gets an error reply; a text line
    /// is trimmed.
    #[test]
    fn lines_that_are_not_text() {
        assert_eq!(line_text(b" counts\n"), Ok("counts"));
        let err = line_text(b"qlog /runs/\xff\n").unwrap_err();
        let text = err["error"].as_str().unwrap();
        assert!(text.contains("not UTF-8"), "{text}");
    }
}
