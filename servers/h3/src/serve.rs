//! Accepting connections and answering HTTP/3 requests from the site.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use h3::server::RequestResolver;
use quicbench_serve::{answer, control};

use crate::conns::{State, Tracked};

/// Accepts connections on one endpoint until it closes.
pub async fn accept_loop(ep: quinn::Endpoint, state: Arc<State>) {
    while let Some(incoming) = ep.accept().await {
        let state = state.clone();
        tokio::spawn(async move {
            let config = state.config_for(&incoming.orig_dst_cid());
            let Ok(mut connecting) = incoming.accept_with(Arc::new(config)) else {
                return;
            };
            // The ClientHello must have been read first: before, the
            // client's transport parameters (its stream limits) are
            // unknown, and opening h3's control streams can wait for ever.
            if connecting.handshake_data().await.is_err() {
                return;
            }
            // 0.5-RTT: requests sent as 0-RTT data are served at once, as
            // quic-go's early listener serves them.
            let conn = match connecting.into_0rtt() {
                Ok((conn, _)) => conn,
                Err(connecting) => match connecting.await {
                    Ok(conn) => conn,
                    Err(_) => return,
                },
            };
            let tracked = state.track(conn.clone());
            serve_connection(conn, tracked, state).await;
        });
    }
}

type H3Conn = h3::server::Connection<h3_quinn::Connection, Bytes>;

async fn serve_connection(conn: quinn::Connection, tracked: Arc<Tracked>, state: Arc<State>) {
    let Ok(mut h3conn): Result<H3Conn, _> = h3::server::builder()
        .max_field_section_size(quicbench_serve::MAX_FIELD_SECTION_BYTES)
        .build(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    loop {
        match h3conn.accept().await {
            Ok(Some(resolver)) => {
                let (tracked, state) = (tracked.clone(), state.clone());
                tokio::spawn(async move {
                    let _ = serve_request(resolver, &tracked, &state).await;
                });
            }
            _ => return,
        }
    }
}

type Resolver = RequestResolver<h3_quinn::Connection, Bytes>;

/// Answers one request as the Go origin does (quicbench_serve::answer).
async fn serve_request(
    resolver: Resolver,
    tracked: &Tracked,
    state: &State,
) -> Result<(), h3::error::StreamError> {
    let (req, mut stream) = resolver.resolve_request().await?;
    let started = control::unix_now_ns();
    tracked.requests.fetch_add(1, Ordering::SeqCst);
    let uri = req.uri();
    let host = uri
        .authority()
        .map(|a| a.host().to_ascii_lowercase())
        .unwrap_or_default();
    let a = answer::answer(
        &state.control,
        &state.site,
        &answer::Request {
            method: req.method().as_str(),
            host: &host,
            target: uri.path_and_query().map_or("/", |p| p.as_str()),
            headers: req.headers(),
        },
    );
    let mut resp = http::Response::new(());
    *resp.status_mut() = a.status;
    *resp.headers_mut() = a.headers;
    stream.send_response(resp).await?;
    tracked
        .serving
        .lock()
        .unwrap()
        .push([started, control::unix_now_ns()]);
    if !a.body.is_empty() {
        stream.send_data(a.body).await?;
    }
    stream.finish().await
}
