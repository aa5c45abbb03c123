//! The server's state: the site, the cache policy, the request counts and
//! the connections since the last `close`, and the control commands.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{json, Value};

use crate::handshake;
use crate::site::{MatchKind, Site};

/// The most unmatched requests listed by `replay` (the Go side's
/// server.MaxUnmatchedListed).
const MAX_UNMATCHED_LISTED: usize = 200;

/// What matching did since the last `replay` command (the Go side's
/// server.Replay).
#[derive(Default, Serialize)]
struct Replay {
    exact: u64,
    fuzzy: u64,
    unmatched: u64,
    unmatched_requests: Vec<String>,
    body_bytes: u64,
}

/// One client connection since the last `close`.
pub struct Tracked {
    pub conn: quinn::Connection,
    opened_unix_ns: u128,
    pub requests: AtomicU64,
}

/// A connection's record as `conns` prints it.
#[derive(Serialize)]
struct Record {
    alpn: String,
    server_name: String,
    remote: String,
    handshake: &'static str,
    requests: u64,
    opened_unix_ns: u128,
    closed: bool,
    /// UDP payload bytes, retransmissions included.
    bytes_sent: u64,
    bytes_received: u64,
    congestion: String,
    srtt_ms: f64,
    cwnd_bytes: u64,
    lost_packets: u64,
    sent_packets: u64,
    congestion_events: u64,
    mtu: u16,
}

/// Everything the tasks share.
pub struct State {
    pub site: Arc<Site>,
    /// The server configuration of new connections, and with a qlog.
    pub server_config: quinn::ServerConfig,
    initial_window: u64,
    qlog_dir: Mutex<Option<PathBuf>>,
    pub cache: AtomicBool,
    pub requests: AtomicU64,
    cc: String,
    replay: Mutex<Replay>,
    conns: Mutex<Vec<Arc<Tracked>>>,
}

impl State {
    pub fn new(
        site: Arc<Site>,
        cc: String,
        initial_window: u64,
        server_config: quinn::ServerConfig,
    ) -> State {
        State {
            site,
            server_config,
            initial_window,
            qlog_dir: Mutex::new(None),
            cache: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            cc,
            replay: Mutex::new(Replay::default()),
            conns: Mutex::new(Vec::new()),
        }
    }

    /// Registers a new connection.
    pub fn track(&self, conn: quinn::Connection) -> Arc<Tracked> {
        let opened = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let t = Arc::new(Tracked {
            conn,
            opened_unix_ns: opened,
            requests: AtomicU64::new(0),
        });
        self.conns.lock().unwrap().push(t.clone());
        t
    }

    /// Notes a request that matched nothing.
    pub fn note_unmatched(&self, request: String) {
        let mut r = self.replay.lock().unwrap();
        r.unmatched += 1;
        if r.unmatched_requests.len() < MAX_UNMATCHED_LISTED {
            r.unmatched_requests.push(request);
        }
    }

    /// Notes a request answered from the site, and the body bytes sent.
    pub fn note_match(&self, kind: MatchKind, body_bytes: usize) {
        let mut r = self.replay.lock().unwrap();
        match kind {
            MatchKind::Exact => r.exact += 1,
            MatchKind::Fuzzy => r.fuzzy += 1,
        }
        r.body_bytes += body_bytes as u64;
    }

    /// Runs one control command and returns its reply (testdata/control.txt
    /// is the protocol's transcript).
    pub fn command(&self, line: &str) -> Value {
        let ok = json!({"ok": true});
        match line {
            "cache on" | "cache off" => {
                self.cache.store(line == "cache on", Ordering::SeqCst);
                ok
            }
            "close" => {
                let all: Vec<_> = std::mem::take(&mut *self.conns.lock().unwrap());
                for t in &all {
                    t.conn.close(quinn::VarInt::from_u32(0x100), b""); // H3_NO_ERROR
                }
                ok
            }
            "conns" => {
                let all: Vec<_> = self.conns.lock().unwrap().clone();
                let recs: Vec<Record> = all.iter().map(|t| self.record(t)).collect();
                json!(recs)
            }
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
            _ => {
                json!({"error": "unknown command: use cache on|off, close, conns, counts, qlog DIR|off or replay"})
            }
        }
    }

    /// The configuration of a connection whose original destination
    /// connection ID is cid: with a qlog file when a qlog directory is
    /// set (without, when that file cannot be made: the error goes to
    /// stderr).
    pub fn config_for(&self, cid: &quinn::ConnectionId) -> quinn::ServerConfig {
        let Some(dir) = self.qlog_dir.lock().unwrap().clone() else {
            return self.server_config.clone();
        };
        let name: String = cid.iter().map(|b| format!("{b:02x}")).collect();
        // create_new: never through a link, never over a file
        let file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(format!("{name}_server.sqlog")))
        {
            Ok(f) => f,
            Err(e) => {
                eprintln!("quicbench-h3: qlog file in {}: {e}", dir.display());
                return self.server_config.clone();
            }
        };
        let mut q = quinn::QlogConfig::default();
        q.writer(Box::new(std::io::BufWriter::new(file)))
            .title(Some(format!("quicbench-h3 {name}")));
        let mut t = crate::transport(&self.cc, self.initial_window)
            .expect("the controller was checked at start");
        t.qlog_stream(q.into_stream());
        let mut sc = self.server_config.clone();
        sc.transport_config(Arc::new(t));
        sc
    }

    fn record(&self, t: &Tracked) -> Record {
        let (kind, server_name, alpn) = match t
            .conn
            .handshake_data()
            .and_then(|d| d.downcast::<handshake::Data>().ok())
        {
            Some(d) => (
                d.kind,
                d.server_name.unwrap_or_default(),
                d.alpn
                    .map(|p| String::from_utf8_lossy(&p).into_owned())
                    .unwrap_or_default(),
            ),
            None => (handshake::Kind::Incomplete, String::new(), String::new()),
        };
        let s = t.conn.stats();
        Record {
            alpn,
            server_name,
            remote: t.conn.remote_address().to_string(),
            handshake: kind.name(),
            requests: t.requests.load(Ordering::SeqCst),
            opened_unix_ns: t.opened_unix_ns,
            closed: t.conn.close_reason().is_some(),
            bytes_sent: s.udp_tx.bytes,
            bytes_received: s.udp_rx.bytes,
            congestion: self.cc.clone(),
            srtt_ms: s.path.rtt.as_secs_f64() * 1000.0,
            cwnd_bytes: s.path.cwnd,
            lost_packets: s.path.lost_packets,
            sent_packets: s.path.sent_packets,
            congestion_events: s.path.congestion_events,
            mtu: s.path.current_mtu,
        }
    }
}

/// The line the server prints once it serves: its controller, initial
/// window and pacing.
pub fn ready(cc: &str, initial_window_bytes: u64) -> Value {
    json!({"ready": true, "cc": cc, "initial_window_bytes": initial_window_bytes, "pacing": true})
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

    /// A server configuration without a certificate: enough for the
    /// control commands, which make no connection.
    fn server_config() -> quinn::ServerConfig {
        #[derive(Debug)]
        struct NoCert;
        impl rustls::server::ResolvesServerCert for NoCert {
            fn resolve(
                &self,
                _: rustls::server::ClientHello<'_>,
            ) -> Option<Arc<rustls::sign::CertifiedKey>> {
                None
            }
        }
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(NoCert));
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).unwrap();
        quinn::ServerConfig::with_crypto(Arc::new(crypto))
    }

    /// The server's side of testdata/control.txt: its ready line, and
    /// each command's reply, on a state that answered one request from the
    /// site exactly (5,120 body bytes), one fuzzily (a HEAD) and one not.
    #[test]
    fn control_transcript() {
        let state = State::new(
            Arc::new(Site::empty()),
            "cubic".into(),
            32 * 1200,
            server_config(),
        );
        state.requests.fetch_add(3, Ordering::SeqCst);
        state.note_unmatched("GET https://www.quicbench.test/missing".into());
        state.note_match(MatchKind::Exact, 5120);
        state.note_match(MatchKind::Fuzzy, 0);
        let text = include_str!("../testdata/control.txt");
        let mut lines = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty());
        let first = lines.next().unwrap();
        let parse = |l: &str, dir: &str| -> Value {
            let rest = l
                .strip_prefix(dir)
                .unwrap_or_else(|| panic!("{l:?}: want {dir}"));
            serde_json::from_str(rest).unwrap_or_else(|e| panic!("{rest}: {e}"))
        };
        assert_eq!(ready("cubic", 32 * 1200), parse(first, "< "));
        let mut replies = 0;
        while let Some(cmd) = lines.next() {
            let cmd = cmd.strip_prefix("> ").expect("a command");
            let want = parse(lines.next().expect("a reply"), "< ");
            assert_eq!(state.command(cmd), want, "reply to {cmd:?}");
            replies += 1;
        }
        assert!(replies >= 10, "only {replies} commands in the transcript");
        assert!(
            !state.cache.load(Ordering::SeqCst),
            "cache off was the last"
        );
        assert!(
            state.qlog_dir.lock().unwrap().is_none(),
            "qlog off was sent"
        );
    }

    /// A connection's record has the fields and types of
    /// testdata/record.json, which quicbench's side parses too.
    #[test]
    fn record_as_quicbench_reads_it() {
        let r = Record {
            alpn: "h3".into(),
            server_name: "www.quicbench.test".into(),
            remote: "198.18.0.1:40123".into(),
            handshake: "0rtt",
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
        };
        let want: Value = serde_json::from_str(include_str!("../testdata/record.json")).unwrap();
        assert_eq!(json!(r), want);
    }
}
