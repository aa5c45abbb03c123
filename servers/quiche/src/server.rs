//! The event loop: one thread owns every socket and connection. It waits
//! (ppoll, nanosecond timeouts) for a datagram, a control command or the
//! next deadline — a connection's timer or a paced packet's release — then
//! feeds datagrams to their connections, runs the commands, fires the
//! timers, serves, and sends what quiche made, holding each packet until
//! its pacing time less PACING_QUANTUM.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use quicbench_serve::control::{self, Connections, Control, Record};
use quicbench_serve::site::Site;
use serde_json::Value;

use crate::conn::{Conn, Held, QlogWriter};
use crate::wake::Wake;

/// The length of the connection IDs the server picks, in bytes.
pub const CID_LEN: usize = 16;

/// How early a paced packet may leave: quiche's `at` hints are honored to
/// within 1 ms, the least of quiche's own release horizon (an eighth of the
/// smoothed RTT, 1 to 5 ms) and about what Linux TCP sends per pacing step
/// (TSO autosizing: about 1 ms of data per burst).
pub const PACING_QUANTUM: Duration = Duration::from_millis(1);

/// A control command and where its reply goes.
pub type Command = (String, mpsc::Sender<Value>);

/// Everything the loop owns.
pub struct Server {
    /// The bound UDP sockets quicbench passed, one per origin address.
    sockets: Vec<UdpSocket>,
    /// Each socket's local address, read once.
    locals: Vec<SocketAddr>,
    /// The transport of new connections (its TLS context keeps the
    /// session ticket key for the process's life).
    config: quiche::Config,
    h3_config: quiche::h3::Config,
    site: Site,
    control: Control,
    /// The congestion controller as quicbench names it, for records.
    cc: String,
    /// The control commands from the thread that reads stdin.
    commands: mpsc::Receiver<Command>,
    /// Made readable with each command.
    wake: Wake,
    conns: HashMap<u64, Conn>,
    /// Connection ID (the client's first and the server's) → connection.
    by_cid: HashMap<Vec<u8>, u64>,
    next_id: u64,
}

impl Server {
    /// A server on sockets, not yet running.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sockets: Vec<UdpSocket>,
        config: quiche::Config,
        h3_config: quiche::h3::Config,
        site: Site,
        cc: String,
        commands: mpsc::Receiver<Command>,
        wake: Wake,
    ) -> Result<Server, String> {
        let locals = sockets
            .iter()
            .map(|s| s.local_addr().map_err(|e| format!("socket address: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Server {
            sockets,
            locals,
            config,
            h3_config,
            site,
            control: Control::default(),
            cc,
            commands,
            wake,
            conns: HashMap::new(),
            by_cid: HashMap::new(),
            next_id: 0,
        })
    }

    /// Runs until the command channel closes (stdin closed); then closes
    /// every connection and sends their last packets.
    pub fn run(&mut self) -> Result<(), String> {
        let mut buf = vec![0u8; 65535];
        let mut out = vec![0u8; 65535];
        let fds = self.fds();
        loop {
            let timeout = self
                .next_deadline()
                .map(|d| d.saturating_duration_since(Instant::now()));
            let ready = crate::wake::wait(&fds, timeout).map_err(|e| format!("poll: {e}"))?;
            for (i, r) in ready.iter().enumerate() {
                if *r && i < self.sockets.len() {
                    self.read_socket(i, &mut buf);
                }
            }
            if ready.last() == Some(&true) {
                self.wake.drain();
                if !self.run_commands() {
                    self.close_every_connection();
                    self.flush_all(&mut out, true);
                    return Ok(());
                }
            }
            self.fire_timers();
            for c in self.conns.values_mut() {
                c.serve(&self.h3_config, &self.control, &self.site);
            }
            self.flush_all(&mut out, false);
            self.drop_finished();
        }
    }

    /// The descriptors to wait on: the sockets, then the wake-up.
    fn fds(&self) -> Vec<i32> {
        let mut fds: Vec<i32> = self.sockets.iter().map(|s| s.as_raw_fd()).collect();
        fds.push(self.wake.fd());
        fds
    }

    /// The earliest connection timer or paced release.
    fn next_deadline(&self) -> Option<Instant> {
        self.conns
            .values()
            .flat_map(|c| {
                let release = c
                    .held
                    .as_ref()
                    .map(|h| h.at.checked_sub(PACING_QUANTUM).unwrap_or(h.at));
                [c.quic.timeout_instant(), release]
            })
            .flatten()
            .min()
    }

    /// Reads every datagram waiting on socket i.
    fn read_socket(&mut self, i: usize, buf: &mut [u8]) {
        loop {
            let (n, from) = match self.sockets[i].recv_from(buf) {
                Ok(v) => v,
                Err(_) => return, // WouldBlock, or an error the next poll sees
            };
            self.datagram(i, &mut buf[..n], from);
        }
    }

    /// Gives one datagram to its connection, accepting a new one for a
    /// client's Initial (no retry, as quinn and quic-go do by default).
    fn datagram(&mut self, socket: usize, data: &mut [u8], from: SocketAddr) {
        let Ok(hdr) = quiche::Header::from_slice(data, CID_LEN) else {
            return;
        };
        let local = self.locals[socket];
        let id = match self.by_cid.get(hdr.dcid.as_ref()) {
            Some(id) => *id,
            None => match self.accept(socket, &hdr, local, from) {
                Some(id) => id,
                None => return,
            },
        };
        if let Some(c) = self.conns.get_mut(&id) {
            c.recv(data, quiche::RecvInfo { from, to: local });
        }
    }

    /// A new connection for a client's Initial, or a version negotiation.
    fn accept(
        &mut self,
        socket: usize,
        hdr: &quiche::Header,
        local: SocketAddr,
        from: SocketAddr,
    ) -> Option<u64> {
        if hdr.ty != quiche::Type::Initial {
            return None;
        }
        if !quiche::version_is_supported(hdr.version) {
            let mut out = [0u8; 1350];
            if let Ok(n) = quiche::negotiate_version(&hdr.scid, &hdr.dcid, &mut out) {
                let _ = self.sockets[socket].send_to(&out[..n], from);
            }
            return None;
        }
        let scid_bytes = crate::wake::random_bytes::<CID_LEN>();
        let scid = quiche::ConnectionId::from_ref(&scid_bytes);
        let quic = quiche::accept(&scid, None, local, from, &mut self.config).ok()?;
        let mut conn = Conn::new(quic, socket);
        if let Some(dir) = self.control.qlog_dir() {
            if let Some((file, name)) = control::qlog_file("quicbench-quiche", &dir, &hdr.dcid) {
                conn.set_qlog(
                    QlogWriter::new(file),
                    format!("quicbench-quiche {name}"),
                    format!("{} with {}", crate::LIBRARY, self.cc),
                );
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.by_cid.insert(hdr.dcid.to_vec(), id);
        self.by_cid.insert(scid_bytes.to_vec(), id);
        self.conns.insert(id, conn);
        Some(id)
    }

    /// Runs the queued control commands; false once the channel closed.
    fn run_commands(&mut self) -> bool {
        loop {
            match self.commands.try_recv() {
                Ok((line, reply)) => {
                    let mut view = View {
                        conns: &mut self.conns,
                        cc: &self.cc,
                    };
                    let _ = reply.send(self.control.command(&line, &mut view));
                }
                Err(mpsc::TryRecvError::Empty) => return true,
                Err(mpsc::TryRecvError::Disconnected) => return false,
            }
        }
    }

    fn close_every_connection(&mut self) {
        View {
            conns: &mut self.conns,
            cc: &self.cc,
        }
        .close_all();
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        for c in self.conns.values_mut() {
            if c.quic.timeout_instant().is_some_and(|t| t <= now) {
                c.quic.on_timeout();
            }
        }
    }

    /// Sends what each connection has through out, pacing it (all of it
    /// when `now`).
    fn flush_all(&mut self, out: &mut [u8], now: bool) {
        for c in self.conns.values_mut() {
            flush(&self.sockets[c.socket], c, out, now);
        }
    }

    /// Writes out the qlogs of closed connections, and drops the closed
    /// ones that are no longer in the records (forgotten by `close`).
    fn drop_finished(&mut self) {
        for c in self.conns.values_mut() {
            c.flush_qlog_if_closed();
        }
        let done: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.forgotten && c.quic.is_closed())
            .map(|(id, _)| *id)
            .collect();
        if done.is_empty() {
            return;
        }
        for id in done {
            self.conns.remove(&id);
        }
        let conns = &self.conns;
        self.by_cid.retain(|_, id| conns.contains_key(id));
    }
}

/// Sends c's packets until quiche has none or pacing holds one back;
/// `now` sends even those.
fn flush(sock: &UdpSocket, c: &mut Conn, out: &mut [u8], now: bool) {
    loop {
        let held = match c.held.take() {
            Some(h) => h,
            None => match c.quic.send(out) {
                Ok((n, info)) => Held {
                    data: out[..n].to_vec(),
                    to: info.to,
                    at: info.at,
                },
                Err(_) => return, // Done, or the connection's error (it closes)
            },
        };
        if !now && !due(held.at, Instant::now()) {
            c.held = Some(held);
            return;
        }
        if let Err(e) = sock.send_to(&held.data, held.to) {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                // The socket's buffer is full: try again shortly.
                c.held = Some(Held {
                    at: Instant::now() + PACING_QUANTUM,
                    ..held
                });
                return;
            }
        }
    }
}

/// Whether a packet paced for `at` may leave at `now`.
fn due(at: Instant, now: Instant) -> bool {
    at <= now + PACING_QUANTUM
}

/// The connections as the control commands see them.
struct View<'a> {
    conns: &'a mut HashMap<u64, Conn>,
    cc: &'a str,
}

impl Connections for View<'_> {
    fn close_all(&mut self) {
        for c in self.conns.values_mut() {
            if !c.forgotten {
                let _ = c.quic.close(true, 0x100, b""); // H3_NO_ERROR
                c.forgotten = true;
            }
        }
    }

    fn records(&self) -> Vec<Record> {
        let mut live: Vec<&Conn> = self.conns.values().filter(|c| !c.forgotten).collect();
        live.sort_by_key(|c| c.opened());
        live.iter().map(|c| c.record(self.cc)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_leave_within_the_pacing_quantum() {
        let now = Instant::now();
        assert!(due(now, now));
        assert!(
            due(now - Duration::from_millis(5), now),
            "late packets leave"
        );
        assert!(due(now + PACING_QUANTUM, now));
        assert!(!due(now + PACING_QUANTUM + Duration::from_micros(1), now));
    }
}
