//! The server's state: the shared control state, the site, and the quinn
//! connections since the last `close`, with their records.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use quicbench_serve::control::{self, Connections, Control, HandshakeKind, Record};
use quicbench_serve::site::Site;

use crate::handshake;

/// One client connection since the last `close`.
pub struct Tracked {
    pub conn: quinn::Connection,
    opened_unix_ns: u128,
    pub requests: AtomicU64,
    /// The times it worked on requests (Record::serving_unix_ns).
    pub serving: Mutex<Vec<[u128; 2]>>,
}

/// Everything the tasks share.
pub struct State {
    pub site: Arc<Site>,
    pub control: Control,
    /// The server configuration of new connections, and with a qlog.
    pub server_config: quinn::ServerConfig,
    initial_window: u64,
    cc: String,
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
            control: Control::default(),
            server_config,
            initial_window,
            cc,
            conns: Mutex::new(Vec::new()),
        }
    }

    /// Registers a new connection.
    pub fn track(&self, conn: quinn::Connection) -> Arc<Tracked> {
        let t = Arc::new(Tracked {
            conn,
            opened_unix_ns: control::unix_now_ns(),
            requests: AtomicU64::new(0),
            serving: Mutex::new(Vec::new()),
        });
        self.conns.lock().unwrap().push(t.clone());
        t
    }

    /// The configuration of a connection whose original destination
    /// connection ID is cid: with a qlog file when a qlog directory is
    /// set (without, when that file cannot be made).
    pub fn config_for(&self, cid: &quinn::ConnectionId) -> quinn::ServerConfig {
        let Some(dir): Option<PathBuf> = self.control.qlog_dir() else {
            return self.server_config.clone();
        };
        let Some((file, name)) = control::qlog_file("quicbench-h3", &dir, cid) else {
            return self.server_config.clone();
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
            None => (HandshakeKind::Incomplete, String::new(), String::new()),
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
            serving_unix_ns: t.serving.lock().unwrap().clone(),
        }
    }
}

/// The state's connections as the control commands see them.
pub struct Tracker<'a>(pub &'a State);

impl Connections for Tracker<'_> {
    fn close_all(&mut self) {
        let all: Vec<_> = std::mem::take(&mut *self.0.conns.lock().unwrap());
        for t in &all {
            t.conn.close(quinn::VarInt::from_u32(0x100), b""); // H3_NO_ERROR
        }
    }

    fn records(&self) -> Vec<Record> {
        let all: Vec<_> = self.0.conns.lock().unwrap().clone();
        all.iter().map(|t| self.0.record(t)).collect()
    }
}
