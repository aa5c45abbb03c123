//! The answer to a request as the Go origin gives it (origin.Server's
//! ServeHTTP): the site's response with the header fields of the cache
//! policy, a 304 to a conditional request that still holds (cache on), or
//! a 404 naming what is not in the site. It counts the request and notes
//! how it matched.

use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::control::Control;
use crate::site::{MatchKind, Site};

/// A request's fields that decide its answer.
pub struct Request<'a> {
    /// The method, "GET" or another.
    pub method: &'a str,
    /// The authority's host, without a port.
    pub host: &'a str,
    /// The target: the path, then "?" and the query if it has one.
    pub target: &'a str,
    /// The request's header fields (for conditional requests).
    pub headers: &'a http::HeaderMap,
}

/// What to send back.
pub struct Answer {
    /// The status code.
    pub status: http::StatusCode,
    /// The header fields, without pseudo-header fields.
    pub headers: http::HeaderMap,
    /// The body, empty when none is sent (a HEAD, a 304, a status without a
    /// body).
    pub body: Bytes,
}

/// Answers req from site under control's cache policy, counting it and
/// noting how it matched.
pub fn answer(control: &Control, site: &Site, req: &Request) -> Answer {
    control.requests.fetch_add(1, Ordering::SeqCst);
    let head = req.method == "HEAD";
    let (path, query) = match req.target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (req.target, None),
    };
    let Some((res, kind)) = site.lookup(req.host, req.method, path, query) else {
        control.note_unmatched(format!("{} https://{}{}", req.method, req.host, req.target));
        return not_found(req.host, path, head);
    };
    if kind == MatchKind::Variant {
        control.note_variant(
            format!("{} https://{}{}", req.method, req.host, req.target),
            res.target(),
        );
    }
    let cache = control.cache.load(Ordering::SeqCst);
    if cache && not_modified(req.headers, &res.etag, &res.last_modified) {
        control.note_match(kind, 0);
        return Answer {
            status: http::StatusCode::NOT_MODIFIED,
            headers: res.header_304.clone(),
            body: Bytes::new(),
        };
    }
    let headers = if cache {
        res.header_on.clone()
    } else {
        res.header_off.clone()
    };
    let body = if res.body_allowed && !head {
        res.body.clone()
    } else {
        Bytes::new()
    };
    control.note_match(kind, body.len());
    Answer {
        status: res.status,
        headers,
        body,
    }
}

/// The Go origin's 404: a line naming what is not in the site.
fn not_found(host: &str, path: &str, head: bool) -> Answer {
    let text = format!("{host}{path} is not in the site\n");
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    headers.insert(http::header::CONTENT_LENGTH, text.len().into());
    Answer {
        status: http::StatusCode::NOT_FOUND,
        headers,
        body: if head {
            Bytes::new()
        } else {
            Bytes::from(text)
        },
    }
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

/// The host of an authority ("host" or "host:port"), lower-cased; "" when
/// it does not parse.
pub fn host_of(authority: &str) -> String {
    authority
        .parse::<http::uri::Authority>()
        .map(|a| a.host().to_ascii_lowercase())
        .unwrap_or_default()
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

    #[test]
    fn unmatched_requests_get_the_go_origins_404() {
        let control = Control::default();
        let h = http::HeaderMap::new();
        let req = Request {
            method: "GET",
            host: "www.quicbench.test",
            target: "/missing?x=1",
            headers: &h,
        };
        let a = answer(&control, &Site::empty(), &req);
        assert_eq!(a.status, http::StatusCode::NOT_FOUND);
        assert_eq!(
            &a.body[..],
            b"www.quicbench.test/missing is not in the site\n"
        );
        assert_eq!(
            a.headers["content-length"],
            a.body.len().to_string().as_str()
        );
        let head = Request {
            method: "HEAD",
            ..req
        };
        assert!(answer(&control, &Site::empty(), &head).body.is_empty());
        assert_eq!(control.requests.load(Ordering::SeqCst), 2);
        let replay = control.command("replay", &mut NoConns);
        assert_eq!(replay["unmatched"], 2);
        assert_eq!(
            replay["unmatched_requests"][0],
            "GET https://www.quicbench.test/missing?x=1"
        );
    }

    #[test]
    fn hosts_lose_their_port_and_case() {
        assert_eq!(host_of("WWW.Quicbench.test:443"), "www.quicbench.test");
        assert_eq!(host_of("a.test"), "a.test");
        assert_eq!(host_of("bad host"), "");
    }

    struct NoConns;

    impl crate::control::Connections for NoConns {
        fn close_all(&mut self) {}
        fn records(&self) -> Vec<crate::control::Record> {
            Vec::new()
        }
    }
}
