//! quicbench-quiche is quicbench's HTTP/3 server on Cloudflare's quiche
//! (QUIC and HTTP/3, with BoringSSL for TLS 1.3): the library that serves
//! much of the web's HTTP/3, with its own CUBIC, Reno and BBRv2 (the
//! "gcongestion" port of Google QUICHE's BBRv2). It answers as the Go origin
//! and quicbench-h3 do — the same manifest, matching rule, answers, control
//! protocol and records (servers/common) — with the initial window, pacing
//! and HyStart++ set explicitly and reported in its ready line.
//!
//! quicbench starts it with the UDP sockets it bound in the servers
//! namespace (descriptors 3 on) and drives it over stdin and stdout, one
//! JSON line per command and reply; it exits when stdin closes.

mod conn;
mod server;
mod wake;

use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::mpsc;

use quicbench_serve::args::Args;
use quicbench_serve::control;
use quicbench_serve::site::Site;

/// The QUIC library, for qlog descriptions.
pub const LIBRARY: &str = "quiche 0.30";

/// The controllers as quicbench names them, the default first, and
/// quiche's names for them ("bbr2" is quiche's gcongestion BBRv2).
const CONTROLLERS: [(&str, &str); 3] = [
    ("cubic", "cubic"),
    ("reno", "reno"),
    ("bbr2", "bbr2_gcongestion"),
];

/// The largest UDP payload the server sends, in bytes: quiche's examples'
/// and tokio-quiche's value; the initial window is counted in packets of it.
const MAX_SEND_UDP_PAYLOAD: usize = 1350;

fn main() {
    let names: Vec<&str> = CONTROLLERS.iter().map(|(ours, _)| *ours).collect();
    control::one_line_panics("quicbench-quiche");
    let a =
        match quicbench_serve::args::parse("quicbench-quiche", &names, std::env::args_os().skip(1))
        {
            Ok(a) => a,
            Err(e) => {
                eprintln!("quicbench-quiche: {e}");
                std::process::exit(2);
            }
        };
    if let Err(e) = run(a) {
        eprintln!("quicbench-quiche: {e}");
        std::process::exit(1);
    }
}

/// quiche's transport: TLS 1.3 with ALPN h3, session tickets and 0-RTT (the
/// ticket key lives as long as the process), the Go origin's idle timeout
/// (5 min) and the chosen controller with its initial window, HyStart++
/// and pacing on (quiche applies them where the controller has them); no
/// active migration, no retry.
fn config(a: &Args) -> Result<quiche::Config, String> {
    let q = |e: quiche::Error| format!("quiche: {e}");
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).map_err(q)?;
    let cert = OpenFile::new(&a.cert)?;
    c.load_cert_chain_from_pem_file(&cert.path)
        .map_err(|e| format!("certificate {}: {e}", a.cert.display()))?;
    let key = OpenFile::new(&a.key)?;
    c.load_priv_key_from_pem_file(&key.path)
        .map_err(|e| format!("key {}: {e}", a.key.display()))?;
    c.set_application_protos(quiche::h3::APPLICATION_PROTOCOL)
        .map_err(q)?;
    c.enable_early_data();
    c.set_max_idle_timeout(300_000);
    c.set_max_recv_udp_payload_size(MAX_SEND_UDP_PAYLOAD);
    c.set_max_send_udp_payload_size(MAX_SEND_UDP_PAYLOAD);
    // Receive windows for requests; the responses are limited by the
    // client's.
    c.set_initial_max_data(10_000_000);
    c.set_initial_max_stream_data_bidi_local(1_000_000);
    c.set_initial_max_stream_data_bidi_remote(1_000_000);
    c.set_initial_max_stream_data_uni(1_000_000);
    c.set_initial_max_streams_bidi(100);
    c.set_initial_max_streams_uni(100);
    c.set_disable_active_migration(true);
    let quiche_name = CONTROLLERS
        .iter()
        .find(|(ours, _)| *ours == a.cc)
        .map(|(_, theirs)| *theirs)
        .ok_or_else(|| format!("--cc {:?} is unknown", a.cc))?;
    c.set_cc_algorithm_name(quiche_name).map_err(q)?;
    c.set_initial_congestion_window_packets(a.initial_window_packets as usize);
    c.enable_hystart(true);
    c.enable_pacing(true);
    Ok(c)
}

/// A file opened by its path, whatever bytes the path has, and named
/// through /proc/self/fd for quiche, which takes paths as UTF-8 text only
/// (a run directory's name can be any bytes). The name is valid while the
/// file is open.
struct OpenFile {
    _file: std::fs::File,
    path: String,
}

impl OpenFile {
    fn new(p: &std::path::Path) -> Result<OpenFile, String> {
        let file = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        Ok(OpenFile { _file: file, path })
    }
}

fn run(a: Args) -> Result<(), String> {
    let site = Site::load(&a.manifest, &a.bodies)?;
    let config = config(&a)?;
    let mut h3_config = quiche::h3::Config::new().map_err(|e| format!("h3: {e}"))?;
    // quiche's default (32 KiB) refused requests the other stacks serve.
    h3_config.set_max_field_section_size(quicbench_serve::MAX_FIELD_SECTION_BYTES);
    let mut sockets = Vec::new();
    for i in 0..a.sockets {
        // SAFETY: quicbench passes a bound UDP socket at each of these
        // descriptors and nothing else in this process uses them.
        let sock = unsafe { std::net::UdpSocket::from_raw_fd(3 + i) };
        sock.set_nonblocking(true)
            .map_err(|e| format!("socket {}: {e}", 3 + i))?;
        sockets.push(sock);
    }
    let wake = wake::Wake::new().map_err(|e| format!("eventfd: {e}"))?;
    let waker = wake.try_clone().map_err(|e| format!("eventfd: {e}"))?;
    let (tx, rx) = mpsc::channel::<server::Command>();
    let mut srv = server::Server::new(sockets, config, h3_config, site, a.cc.clone(), rx, wake)?;
    let event_loop = std::thread::spawn(move || srv.run());
    // quiche 0.30 paces only with its gcongestion BBRv2 (its CUBIC and
    // Reno give every packet the time now, enable_pacing or not); HyStart++
    // is CUBIC's and Reno's, BBRv2 has its own startup.
    let bbr2 = a.cc == "bbr2";
    control::reply(&control::ready(
        &a.cc,
        a.initial_window_packets * MAX_SEND_UDP_PAYLOAD as u64,
        bbr2,
        !bbr2,
    ));
    for line in std::io::stdin().lock().split(b'\n') {
        let Ok(line) = line else { break };
        let text = match control::line_text(&line) {
            Ok(text) => text.to_string(),
            Err(refusal) => {
                control::reply(&refusal);
                continue;
            }
        };
        let (reply_tx, reply_rx) = mpsc::channel();
        if tx.send((text, reply_tx)).is_err() {
            break;
        }
        waker.wake();
        match reply_rx.recv() {
            Ok(v) => control::reply(&v),
            Err(_) => break,
        }
    }
    drop(tx);
    waker.wake();
    event_loop
        .join()
        .map_err(|_| "the event loop panicked".to_string())?
}
