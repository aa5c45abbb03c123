//! The site to serve, read from the manifest quicbench writes, and the rule
//! that picks the response for a request (the same as the Go origin's
//! site.Matcher: an exact method and path, then the exact target, else the
//! candidate whose target shares the longest prefix with the request's).

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use bytes::Bytes;
use serde::Deserialize;

/// One response as the manifest describes it.
#[derive(Deserialize)]
struct ManifestResponse {
    method: String,
    path: String,
    /// The request target: the path, then "?" and the query if it has one.
    target: String,
    status: u16,
    /// Header fields with the cache off, and with it on.
    header_off: Vec<(String, String)>,
    header_on: Vec<(String, String)>,
    /// Header fields of a 304 answer (cache on).
    header_304: Vec<(String, String)>,
    /// The validators a conditional request is compared with (cache on).
    etag: String,
    last_modified: String,
    /// Whether the status allows a body.
    body_allowed: bool,
    /// The body's file name in the bodies directory.
    body: String,
}

#[derive(Deserialize)]
struct ManifestOrigin {
    host: String,
    /// In the Go matcher's tie-break order (by resource key).
    responses: Vec<ManifestResponse>,
}

#[derive(Deserialize)]
struct Manifest {
    origins: Vec<ManifestOrigin>,
}

/// A response ready to send.
pub struct Response {
    pub status: http::StatusCode,
    pub header_off: http::HeaderMap,
    pub header_on: http::HeaderMap,
    pub header_304: http::HeaderMap,
    pub etag: String,
    pub last_modified: String,
    pub body_allowed: bool,
    pub body: Bytes,
    target: String,
}

/// The responses of every origin, indexed for matching.
pub struct Site {
    /// host → "METHOD path" → candidates in tie-break order.
    by_path: HashMap<String, HashMap<String, Vec<Response>>>,
}

impl Site {
    /// A site without responses, for tests of what needs none.
    #[cfg(test)]
    pub fn empty() -> Site {
        Site {
            by_path: HashMap::new(),
        }
    }

    /// Reads the manifest and every body it names from `bodies`.
    pub fn load(manifest: &Path, bodies: &Path) -> Result<Site, String> {
        let data =
            fs::read(manifest).map_err(|e| format!("read manifest {}: {e}", manifest.display()))?;
        let m: Manifest = serde_json::from_slice(&data)
            .map_err(|e| format!("manifest {}: {e}", manifest.display()))?;
        let mut cache: HashMap<String, Bytes> = HashMap::new();
        let mut by_path: HashMap<String, HashMap<String, Vec<Response>>> = HashMap::new();
        for o in m.origins {
            let paths = by_path.entry(o.host.to_ascii_lowercase()).or_default();
            for r in o.responses {
                let body = match cache.get(&r.body) {
                    Some(b) => b.clone(),
                    None => {
                        let b = read_body(bodies, &r.body)?;
                        cache.insert(r.body.clone(), b.clone());
                        b
                    }
                };
                let key = format!("{} {}", r.method, r.path);
                paths.entry(key).or_default().push(Response {
                    status: http::StatusCode::from_u16(r.status)
                        .map_err(|e| format!("status {}: {e}", r.status))?,
                    header_off: header_map(&r.header_off),
                    header_on: header_map(&r.header_on),
                    header_304: header_map(&r.header_304),
                    etag: r.etag,
                    last_modified: r.last_modified,
                    body_allowed: r.body_allowed,
                    body,
                    target: r.target,
                });
            }
        }
        Ok(Site { by_path })
    }

    /// The response for method on host at path and raw query, or None.
    pub fn lookup(
        &self,
        host: &str,
        method: &str,
        path: &str,
        query: Option<&str>,
    ) -> Option<&Response> {
        let method = if method == "HEAD" { "GET" } else { method };
        let candidates = self.by_path.get(host)?.get(&format!("{method} {path}"))?;
        let want = match query {
            Some(q) if !q.is_empty() => format!("{path}?{q}"),
            _ => path.to_string(),
        };
        let mut best: Option<&Response> = None;
        let mut best_len: isize = -1;
        for r in candidates {
            if r.target == want {
                return Some(r);
            }
            let n = common_prefix(&r.target, &want) as isize;
            if n > best_len {
                best = Some(r);
                best_len = n;
            }
        }
        best
    }
}

/// Reads one body file; the name must be a plain file name.
fn read_body(dir: &Path, name: &str) -> Result<Bytes, String> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(format!("body file name {name:?} is not a plain file name"));
    }
    let data = fs::read(dir.join(name)).map_err(|e| format!("read body {name}: {e}"))?;
    Ok(Bytes::from(data))
}

/// Builds a header map, skipping fields that HTTP/3 forbids or that do not
/// parse (the Go side sends none of them).
fn header_map(fields: &[(String, String)]) -> http::HeaderMap {
    let mut h = http::HeaderMap::new();
    for (name, value) in fields {
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
        ) {
            continue;
        }
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(lower.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            h.append(n, v);
        }
    }
    h
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(target: &str) -> Response {
        Response {
            status: http::StatusCode::OK,
            header_off: http::HeaderMap::new(),
            header_on: http::HeaderMap::new(),
            header_304: http::HeaderMap::new(),
            etag: String::new(),
            last_modified: String::new(),
            body_allowed: true,
            body: Bytes::new(),
            target: target.to_string(),
        }
    }

    #[test]
    fn exact_target_wins_then_longest_prefix_then_first() {
        let mut paths = HashMap::new();
        paths.insert(
            "GET /a".to_string(),
            vec![resp("/a?x=1"), resp("/a?x=12"), resp("/a?y=1")],
        );
        let mut by_path = HashMap::new();
        by_path.insert("h.test".to_string(), paths);
        let s = Site { by_path };
        assert_eq!(
            s.lookup("h.test", "GET", "/a", Some("x=12"))
                .unwrap()
                .target,
            "/a?x=12"
        );
        assert_eq!(
            s.lookup("h.test", "GET", "/a", Some("x=13"))
                .unwrap()
                .target,
            "/a?x=1"
        );
        assert_eq!(
            s.lookup("h.test", "HEAD", "/a", Some("y=2"))
                .unwrap()
                .target,
            "/a?y=1"
        );
        assert_eq!(
            s.lookup("h.test", "GET", "/a", None).unwrap().target,
            "/a?x=1"
        );
        assert!(s.lookup("h.test", "POST", "/a", None).is_none());
        assert!(s.lookup("other.test", "GET", "/a", None).is_none());
    }

    #[test]
    fn forbidden_and_invalid_fields_are_skipped() {
        let h = header_map(&[
            ("Content-Type".into(), "text/html".into()),
            ("Connection".into(), "close".into()),
            ("Bad Name".into(), "x".into()),
        ]);
        assert_eq!(h.len(), 1);
        assert_eq!(h["content-type"], "text/html");
    }

    #[test]
    fn body_names_cannot_leave_the_directory() {
        for name in ["../x", "a/b", ".hidden", ""] {
            assert!(
                read_body(Path::new("/nonexistent"), name).is_err(),
                "{name}"
            );
        }
    }
}
