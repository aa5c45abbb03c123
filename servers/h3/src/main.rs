//! quicbench-h3 is quicbench's second HTTP/3 server, independent of
//! quic-go: quinn (QUIC) with h3 (HTTP/3) and rustls (TLS 1.3), with a
//! congestion controller chosen at start (CUBIC, NewReno or BBR) and an
//! explicit initial window. quicbench starts it with the UDP sockets it
//! bound in the servers namespace (inherited from descriptor 3 on), a
//! manifest of the site's responses with their header fields (computed by
//! the Go origin's own code, so both servers send the same fields), and
//! drives it over stdin and stdout, one JSON line per command and reply
//! (cache policy, closing connections, records, request counts, unmatched
//! requests, qlog directory): testdata/control.txt is the protocol's
//! transcript, which this crate's tests and quicbench's (internal/quinn)
//! are checked against.
//!
//! It prints one `{"ready":…}` line when it serves, and exits when stdin
//! closes (quicbench also kills it with its parent).

mod conns;
mod handshake;
mod serve;

use std::os::fd::FromRawFd;
use std::sync::Arc;
use std::time::Duration;

use quicbench_serve::args::Args;
use quicbench_serve::control;
use quicbench_serve::site;
use quinn::congestion;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::AsyncBufReadExt;

/// The controllers, the default first.
const CONTROLLERS: [&str; 3] = ["cubic", "newreno", "bbr"];

/// quinn's datagram size at the start of a connection (its
/// BASE_DATAGRAM_SIZE), in bytes: the initial window is set in packets of it.
const BASE_DATAGRAM_SIZE: u64 = 1200;

/// The transport: the chosen controller with the initial window, and the
/// Go origin's idle timeout (5 min). Pacing is always on in quinn.
pub fn transport(cc: &str, initial_window: u64) -> Result<quinn::TransportConfig, String> {
    let mut t = quinn::TransportConfig::default();
    t.max_idle_timeout(Some(
        Duration::from_secs(300)
            .try_into()
            .map_err(|e| format!("idle timeout: {e}"))?,
    ));
    match cc {
        "cubic" => {
            let mut c = congestion::CubicConfig::default();
            c.initial_window(initial_window);
            t.congestion_controller_factory(Arc::new(c));
        }
        "newreno" => {
            let mut c = congestion::NewRenoConfig::default();
            c.initial_window(initial_window);
            t.congestion_controller_factory(Arc::new(c));
        }
        "bbr" => {
            let mut c = congestion::BbrConfig::default();
            c.initial_window(initial_window);
            t.congestion_controller_factory(Arc::new(c));
        }
        other => return Err(format!("--cc {other:?} is unknown")),
    }
    Ok(t)
}

/// The TLS sessions kept for resumption: two tickets per connection for
/// thousands of connections.
const SESSIONS: usize = 8192;

/// TLS 1.3 with ALPN h3, session tickets and 0-RTT, wrapped so
/// that each connection reports its handshake kind.
fn server_config(a: &Args) -> Result<quinn::ServerConfig, String> {
    let certs = CertificateDer::pem_file_iter(&a.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("certificate {}: {e}", a.cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(&a.key)
        .map_err(|e| format!("key {}: {e}", a.key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("tls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("tls: {e}"))?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.max_early_data_size = u32::MAX;
    // Stateful resumption (rustls accepts 0-RTT only with it): the
    // sessions live as long as the server, as the Go origin's ticket keys.
    tls.session_storage = rustls::server::ServerSessionMemoryCache::new(SESSIONS);
    let quic_tls =
        quinn::crypto::rustls::QuicServerConfig::try_from(tls).map_err(|e| format!("tls: {e}"))?;
    let mut sc =
        quinn::ServerConfig::with_crypto(Arc::new(handshake::ServerConfig(Arc::new(quic_tls))));
    sc.transport_config(Arc::new(transport(
        &a.cc,
        a.initial_window_packets * BASE_DATAGRAM_SIZE,
    )?));
    Ok(sc)
}

fn main() {
    control::one_line_panics("quicbench-h3");
    let a = match quicbench_serve::args::parse(
        "quicbench-h3",
        &CONTROLLERS,
        std::env::args_os().skip(1),
    ) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("quicbench-h3: {e}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = rt.block_on(run(a)) {
        eprintln!("quicbench-h3: {e}");
        std::process::exit(1);
    }
}

async fn run(a: Args) -> Result<(), String> {
    let site = Arc::new(site::Site::load(&a.manifest, &a.bodies)?);
    let sc = server_config(&a)?;
    let state = Arc::new(conns::State::new(
        site,
        a.cc.clone(),
        a.initial_window_packets * BASE_DATAGRAM_SIZE,
        sc.clone(),
    ));
    let ctl = &state.control;
    let mut endpoints = Vec::new();
    for i in 0..a.sockets {
        // SAFETY: quicbench passes a bound UDP socket at each of these
        // descriptors and nothing else in this process uses them.
        let sock = unsafe { std::net::UdpSocket::from_raw_fd(3 + i) };
        sock.set_nonblocking(true)
            .map_err(|e| format!("socket {}: {e}", 3 + i))?;
        let ep = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(sc.clone()),
            sock,
            Arc::new(quinn::TokioRuntime),
        )
        .map_err(|e| format!("endpoint on socket {}: {e}", 3 + i))?;
        tokio::spawn(serve::accept_loop(ep.clone(), state.clone()));
        endpoints.push(ep);
    }
    // quinn always paces; its CUBIC has no HyStart.
    control::reply(&control::ready(
        &a.cc,
        a.initial_window_packets * BASE_DATAGRAM_SIZE,
        true,
        false,
    ));
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        match control::line_text(&line) {
            Ok(text) => control::reply(&ctl.command(text, &mut conns::Tracker(&state))),
            Err(refusal) => control::reply(&refusal),
        }
    }
    for ep in &endpoints {
        ep.close(quinn::VarInt::from_u32(0x100), b"");
    }
    Ok(())
}
