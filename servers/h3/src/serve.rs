//! Accepting connections and answering HTTP/3 requests from the site.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use h3::server::RequestResolver;

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
    let Ok(mut h3conn): Result<H3Conn, _> =
        h3::server::Connection::new(h3_quinn::Connection::new(conn)).await
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

/// Answers one request as the Go origin does (origin.Server.ServeHTTP).
async fn serve_request(
    resolver: Resolver,
    tracked: &Tracked,
    state: &State,
) -> Result<(), h3::error::StreamError> {
    let (req, mut stream) = resolver.resolve_request().await?;
    state.requests.fetch_add(1, Ordering::SeqCst);
    tracked.requests.fetch_add(1, Ordering::SeqCst);
    let uri = req.uri();
    let authority = uri
        .authority()
        .map(|a| a.host().to_ascii_lowercase())
        .unwrap_or_default();
    let method = req.method().as_str();
    let Some((res, kind)) = state
        .site
        .lookup(&authority, method, uri.path(), uri.query())
    else {
        let target = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        state.note_unmatched(format!("{method} https://{authority}{target}"));
        let body = Bytes::from(format!("{authority}{} is not in the site\n", uri.path()));
        let resp = http::Response::builder()
            .status(http::StatusCode::NOT_FOUND)
            .header("content-type", "text/plain; charset=utf-8")
            .header("x-content-type-options", "nosniff")
            .header("content-length", body.len())
            .body(())
            .expect("static response");
        stream.send_response(resp).await?;
        if req.method() != http::Method::HEAD {
            stream.send_data(body).await?;
        }
        return stream.finish().await;
    };
    let cache = state.cache.load(Ordering::SeqCst);
    if cache && not_modified(req.headers(), &res.etag, &res.last_modified) {
        state.note_match(kind, 0);
        let mut resp = http::Response::new(());
        *resp.status_mut() = http::StatusCode::NOT_MODIFIED;
        *resp.headers_mut() = res.header_304.clone();
        stream.send_response(resp).await?;
        return stream.finish().await;
    }
    let mut resp = http::Response::new(());
    *resp.status_mut() = res.status;
    *resp.headers_mut() = if cache {
        res.header_on.clone()
    } else {
        res.header_off.clone()
    };
    let send_body = res.body_allowed && req.method() != http::Method::HEAD && !res.body.is_empty();
    state.note_match(kind, if send_body { res.body.len() } else { 0 });
    stream.send_response(resp).await?;
    if send_body {
        stream.send_data(res.body.clone()).await?;
    }
    stream.finish().await
}

/// The Go origin's rule: with an ETag and an If-None-Match, not modified
/// when they are equal; else with a Last-Modified and an If-Modified-Since,
/// when those are.
fn not_modified(h: &http::HeaderMap, etag: &str, last_modified: &str) -> bool {
    let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !etag.is_empty() && !get("if-none-match").is_empty() {
        return get("if-none-match") == etag;
    }
    if !last_modified.is_empty() && !get("if-modified-since").is_empty() {
        return get("if-modified-since") == last_modified;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_requests_follow_the_go_origin() {
        let mut h = http::HeaderMap::new();
        assert!(!not_modified(&h, "\"a\"", "Mon"));
        h.insert("if-none-match", "\"a\"".parse().unwrap());
        assert!(not_modified(&h, "\"a\"", "Mon"));
        assert!(!not_modified(&h, "\"b\"", "Mon"));
        h.insert("if-modified-since", "Mon".parse().unwrap());
        assert!(
            !not_modified(&h, "\"b\"", "Mon"),
            "If-None-Match decides when both are there"
        );
        assert!(not_modified(&h, "", "Mon"));
        assert!(!not_modified(&h, "", ""));
    }
}
