//! One client connection: quiche's QUIC connection, its HTTP/3 layer once
//! the handshake allows it, the responses still being written, the packet
//! held back by pacing, and what its record needs (handshake kind, request
//! count, when it opened).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use quicbench_serve::answer::{self, Answer};
use quicbench_serve::control::{Control, HandshakeKind, Record};
use quicbench_serve::site::Site;
use quiche::h3::NameValue;

/// A response not yet fully handed to quiche: its header fields (None once
/// sent) and its body from `written` on.
struct Pending {
    headers: Option<Vec<quiche::h3::Header>>,
    /// When the request's header fields were read, in ns since the Unix
    /// epoch.
    started: u128,
    priority: quiche::h3::Priority,
    body: Bytes,
    written: usize,
}

/// A packet quiche made that pacing holds until `at`.
pub struct Held {
    pub data: Vec<u8>,
    pub to: SocketAddr,
    pub at: Instant,
}

/// A qlog file that quiche writes through and the loop flushes once the
/// connection has closed (quiche never finishes its log).
#[derive(Clone)]
pub struct QlogWriter(Arc<Mutex<BufWriter<File>>>);

impl QlogWriter {
    /// A buffered writer on file.
    pub fn new(file: File) -> QlogWriter {
        QlogWriter(Arc::new(Mutex::new(BufWriter::new(file))))
    }
}

impl Write for QlogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().flush()
    }
}

/// A client connection on one of the server's sockets.
pub struct Conn {
    pub quic: quiche::Connection,
    h3: Option<quiche::h3::Connection>,
    pending: HashMap<u64, Pending>,
    /// The index of the socket it arrived on.
    pub socket: usize,
    /// The packet pacing holds back, if any.
    pub held: Option<Held>,
    /// Whether the server was ever in early data (0-RTT accepted).
    saw_early_data: bool,
    requests: u64,
    /// The times it worked on requests (Record::serving_unix_ns).
    serving: Vec<[u128; 2]>,
    opened_unix_ns: u128,
    /// Forgotten by a `close` command: it only finishes closing.
    pub forgotten: bool,
    /// Its qlog, until flushed after the connection closed.
    qlog: Option<QlogWriter>,
}

impl Conn {
    /// A connection just accepted on socket.
    pub fn new(quic: quiche::Connection, socket: usize) -> Conn {
        Conn {
            quic,
            h3: None,
            pending: HashMap::new(),
            socket,
            held: None,
            saw_early_data: false,
            requests: 0,
            serving: Vec::new(),
            opened_unix_ns: quicbench_serve::control::unix_now_ns(),
            forgotten: false,
            qlog: None,
        }
    }

    /// Makes quiche write the connection's qlog to w.
    pub fn set_qlog(&mut self, w: QlogWriter, title: String, description: String) {
        self.quic.set_qlog(Box::new(w.clone()), title, description);
        self.qlog = Some(w);
    }

    /// Writes out the qlog once the connection has closed.
    pub fn flush_qlog_if_closed(&mut self) {
        if self.quic.is_closed() {
            if let Some(mut w) = self.qlog.take() {
                let _ = w.flush();
            }
        }
    }

    /// Takes one datagram from the client; errors are the connection's own
    /// (quiche closes it).
    pub fn recv(&mut self, data: &mut [u8], info: quiche::RecvInfo) {
        let _ = self.quic.recv(data, info);
        if !self.quic.is_established() && self.quic.is_in_early_data() {
            self.saw_early_data = true;
        }
    }

    /// Reads the HTTP/3 events (requests, request bodies, priority
    /// updates) and answers, then writes what flow control now allows.
    pub fn serve(&mut self, h3_config: &quiche::h3::Config, control: &Control, site: &Site) {
        if self.h3.is_none() && (self.quic.is_in_early_data() || self.quic.is_established()) {
            match quiche::h3::Connection::with_transport(&mut self.quic, h3_config) {
                Ok(h3) => self.h3 = Some(h3),
                Err(_) => {
                    let _ = self.quic.close(true, 0x101, b""); // H3_GENERAL_PROTOCOL_ERROR
                    return;
                }
            }
        }
        let Some(mut h3) = self.h3.take() else {
            return;
        };
        self.poll_events(&mut h3, control, site);
        let writable: Vec<u64> = self.quic.writable().collect();
        for id in writable {
            self.write_pending(&mut h3, id);
        }
        self.h3 = Some(h3);
    }

    fn poll_events(&mut self, h3: &mut quiche::h3::Connection, control: &Control, site: &Site) {
        let mut buf = [0u8; 16384];
        loop {
            match h3.poll(&mut self.quic) {
                Ok((id, quiche::h3::Event::Headers { list, .. })) => {
                    self.requests += 1;
                    self.respond(h3, id, &list, control, site);
                }
                Ok((id, quiche::h3::Event::Data)) => {
                    while h3.recv_body(&mut self.quic, id, &mut buf).is_ok() {}
                }
                Ok((id, quiche::h3::Event::PriorityUpdate)) => {
                    if let Ok(value) = h3.take_last_priority_update(id) {
                        if let Ok(p) = quiche::h3::Priority::try_from(value.as_slice()) {
                            if let Some(pending) = self.pending.get_mut(&id) {
                                pending.priority = p;
                            }
                        }
                    }
                }
                Ok((id, quiche::h3::Event::Reset(_))) => {
                    self.pending.remove(&id);
                }
                Ok(_) => {}
                Err(quiche::h3::Error::Done) => return,
                Err(_) => {
                    let _ = self.quic.close(true, 0x101, b"");
                    return;
                }
            }
        }
    }

    /// Answers one request as the Go origin does, with the priority the
    /// client asked for (RFC 9218's priority field; quiche schedules by it).
    fn respond(
        &mut self,
        h3: &mut quiche::h3::Connection,
        id: u64,
        fields: &[quiche::h3::Header],
        control: &Control,
        site: &Site,
    ) {
        let started = quicbench_serve::control::unix_now_ns();
        let (mut method, mut authority, mut target) = ("", "", "/");
        let mut headers = http::HeaderMap::new();
        let mut priority = quiche::h3::Priority::default();
        for f in fields {
            let value = std::str::from_utf8(f.value()).unwrap_or("");
            match f.name() {
                b":method" => method = value,
                b":authority" => authority = value,
                b":path" => target = value,
                b"priority" => {
                    if let Ok(p) = quiche::h3::Priority::try_from(f.value()) {
                        priority = p;
                    }
                }
                name if !name.starts_with(b":") => {
                    if let (Ok(n), Ok(v)) = (
                        http::HeaderName::from_bytes(name),
                        http::HeaderValue::from_bytes(f.value()),
                    ) {
                        headers.append(n, v);
                    }
                }
                _ => {}
            }
        }
        // The answer depends on the header fields alone: a request body is
        // not read.
        let _ = self.quic.stream_shutdown(id, quiche::Shutdown::Read, 0);
        let host = answer::host_of(authority);
        let a = answer::answer(
            control,
            site,
            &answer::Request {
                method,
                host: &host,
                target,
                headers: &headers,
            },
        );
        let pending = Pending {
            headers: Some(response_fields(&a)),
            started,
            priority,
            body: a.body,
            written: 0,
        };
        self.pending.insert(id, pending);
        self.write_pending(h3, id);
    }

    /// Hands as much of stream id's response to quiche as it takes.
    fn write_pending(&mut self, h3: &mut quiche::h3::Connection, id: u64) {
        let Some(p) = self.pending.get_mut(&id) else {
            return;
        };
        if let Some(fields) = &p.headers {
            let fin = p.body.is_empty();
            match h3.send_response_with_priority(&mut self.quic, id, fields, &p.priority, fin) {
                Ok(()) => {
                    p.headers = None;
                    self.serving
                        .push([p.started, quicbench_serve::control::unix_now_ns()]);
                }
                Err(quiche::h3::Error::StreamBlocked) => return,
                Err(_) => {
                    self.pending.remove(&id);
                    return;
                }
            }
        }
        while p.written < p.body.len() {
            match h3.send_body(&mut self.quic, id, &p.body[p.written..], true) {
                Ok(n) => p.written += n,
                Err(quiche::h3::Error::Done) => return,
                Err(_) => break,
            }
        }
        self.pending.remove(&id);
    }

    /// When it was accepted, in ns since the Unix epoch.
    pub fn opened(&self) -> u128 {
        self.opened_unix_ns
    }

    /// The handshake this connection made, from the server's view.
    pub fn handshake_kind(&self) -> HandshakeKind {
        match (
            self.quic.is_established(),
            self.quic.is_resumed(),
            self.saw_early_data,
        ) {
            (false, _, _) => HandshakeKind::Incomplete,
            (true, true, true) => HandshakeKind::ZeroRtt,
            (true, true, false) => HandshakeKind::Resumed,
            (true, false, _) => HandshakeKind::Full,
        }
    }

    /// Its record, its statistics read now.
    pub fn record(&self, congestion: &str) -> Record {
        let s = self.quic.stats();
        let path = self.quic.path_stats().find(|p| p.active);
        Record {
            alpn: String::from_utf8_lossy(self.quic.application_proto()).into_owned(),
            server_name: self.quic.server_name().unwrap_or("").to_string(),
            remote: path
                .as_ref()
                .map_or(String::new(), |p| p.peer_addr.to_string()),
            handshake: self.handshake_kind().name(),
            requests: self.requests,
            opened_unix_ns: self.opened_unix_ns,
            closed: self.quic.is_closed() || self.quic.is_draining(),
            bytes_sent: s.sent_bytes,
            bytes_received: s.recv_bytes,
            congestion: congestion.to_string(),
            srtt_ms: path.as_ref().map_or(0.0, |p| p.rtt.as_secs_f64() * 1000.0),
            cwnd_bytes: path.as_ref().map_or(0, |p| p.cwnd as u64),
            lost_packets: s.lost as u64,
            sent_packets: s.sent as u64,
            congestion_events: 0,
            mtu: path
                .as_ref()
                .map_or(0, |p| p.pmtu.min(u16::MAX as usize) as u16),
            serving_unix_ns: self.serving.clone(),
        }
    }
}

/// The response's fields as quiche sends them: ":status" first.
fn response_fields(a: &Answer) -> Vec<quiche::h3::Header> {
    let mut out = Vec::with_capacity(a.headers.len() + 1);
    out.push(quiche::h3::Header::new(
        b":status",
        a.status.as_str().as_bytes(),
    ));
    for (name, value) in &a.headers {
        out.push(quiche::h3::Header::new(
            name.as_str().as_bytes(),
            value.as_bytes(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_comes_first_then_the_fields_in_order() {
        let mut headers = http::HeaderMap::new();
        headers.append("content-type", "text/html".parse().unwrap());
        headers.append("cache-control", "no-store".parse().unwrap());
        let a = Answer {
            status: http::StatusCode::OK,
            headers,
            body: Bytes::new(),
        };
        let got: Vec<(String, String)> = response_fields(&a)
            .iter()
            .map(|h| {
                (
                    String::from_utf8_lossy(h.name()).into_owned(),
                    String::from_utf8_lossy(h.value()).into_owned(),
                )
            })
            .collect();
        assert_eq!(got[0], (":status".into(), "200".into()));
        assert_eq!(got.len(), 3);
        assert!(got.contains(&("cache-control".into(), "no-store".into())));
    }
}
