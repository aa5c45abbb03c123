//! The server's state: the site, the cache policy, the request counts and
//! the connections since the last `close`, and the control commands.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::handshake;
use crate::site::Site;

/// The most unmatched requests listed by `unmatched` (the Go origin's
/// MaxUnmatchedExamples).
const MAX_UNMATCHED_EXAMPLES: usize = 20;

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
    unmatched: Mutex<(u64, Vec<String>)>,
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
            unmatched: Mutex::new((0, Vec::new())),
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
    pub fn unmatched(&self, request: String) {
        let mut u = self.unmatched.lock().unwrap();
        u.0 += 1;
        if u.1.len() < MAX_UNMATCHED_EXAMPLES {
            u.1.push(request);
        }
    }

    /// Runs one control command and prints its reply line.
    pub async fn command(&self, line: &str) {
        match line {
            "cache on" | "cache off" => {
                self.cache.store(line == "cache on", Ordering::SeqCst);
                reply(&serde_json::json!({"ok": true}));
            }
            "close" => {
                let all: Vec<_> = std::mem::take(&mut *self.conns.lock().unwrap());
                for t in &all {
                    t.conn.close(quinn::VarInt::from_u32(0x100), b""); // H3_NO_ERROR
                }
                reply(&serde_json::json!({"ok": true}));
            }
            "conns" => {
                let all: Vec<_> = self.conns.lock().unwrap().clone();
                let recs: Vec<Record> = all.iter().map(|t| self.record(t)).collect();
                reply(&recs);
            }
            "qlog off" => {
                *self.qlog_dir.lock().unwrap() = None;
                reply(&serde_json::json!({"ok": true}));
            }
            _ if line.starts_with("qlog ") => {
                *self.qlog_dir.lock().unwrap() = Some(PathBuf::from(&line[5..]));
                reply(&serde_json::json!({"ok": true}));
            }
            "counts" => reply(&serde_json::json!({"h3": self.requests.load(Ordering::SeqCst)})),
            "unmatched" => {
                let (n, examples) = std::mem::take(&mut *self.unmatched.lock().unwrap());
                reply(&serde_json::json!({"count": n, "examples": examples}));
            }
            _ => reply(
                &serde_json::json!({"error": "unknown command: use cache on|off, close, conns, counts or unmatched"}),
            ),
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

/// Prints one reply line on stdout and flushes it.
pub fn reply<T: Serialize>(v: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
