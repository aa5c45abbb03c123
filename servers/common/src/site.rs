//! The site to serve, read from the manifest quicbench writes, and the rule
//! that picks the response for a request (the same as the Go origin's
//! site.Matcher: an exact method and path, then the exact target, else the
//! candidate whose query parameters agree best with the request's, by
//! WebPageReplay's ratio; testdata/match.txt holds the cases both sides
//! check).
//!
//! The manifest is quicbench's own file, written by the Go origin's code
//! into the server's directory; body names are checked to be plain names.

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
    /// Whether the response may answer for a variant of itself (an image,
    /// video or audio response with a 2xx status).
    #[serde(default)]
    media: bool,
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
    params: Params,
    /// Whether it may answer for a variant of itself.
    media: bool,
}

/// How a request matched: its exact target, the nearest recorded query of
/// its path, or the nearest recorded size of an image or media file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Fuzzy,
    Variant,
}

/// How many path segments, besides the file name, a variant may differ in
/// (the Go side's site.MaxVariantSegments).
const MAX_VARIANT_SEGMENTS: usize = 2;

/// The responses of every origin, indexed for matching.
pub struct Site {
    /// host → "METHOD path" → candidates in tie-break order.
    by_path: HashMap<String, HashMap<String, Vec<Response>>>,
    /// host → "METHOD name" (the path's last segment) → the media
    /// responses with that file name, as ("METHOD path", index into
    /// by_path's list), in tie-break order.
    by_name: HashMap<String, HashMap<String, Vec<(String, usize)>>>,
}

impl Response {
    /// The recorded request target: the path, then "?" and the query if it
    /// has one.
    pub fn target(&self) -> &str {
        &self.target
    }
}

impl Site {
    /// A site without responses, for tests of what needs none.
    #[cfg(test)]
    pub fn empty() -> Site {
        Site {
            by_path: HashMap::new(),
            by_name: HashMap::new(),
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
                let params = parse_query(r.target.split_once('?').map_or("", |(_, q)| q));
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
                    params,
                    media: r.media,
                });
            }
        }
        Ok(Site::new(by_path))
    }

    /// The site of by_path, whose lists are in tie-break order, with its
    /// index of media responses by file name.
    fn new(by_path: HashMap<String, HashMap<String, Vec<Response>>>) -> Site {
        let mut by_name: HashMap<String, HashMap<String, Vec<(String, usize)>>> = HashMap::new();
        for (host, paths) in &by_path {
            let names = by_name.entry(host.clone()).or_default();
            for (key, list) in paths {
                let (method, path) = key.split_once(' ').unwrap_or(("GET", key));
                for (i, _) in list.iter().enumerate().filter(|(_, r)| r.media) {
                    let name = format!("{method} {}", file_name(path));
                    names.entry(name).or_default().push((key.clone(), i));
                }
            }
            // one method per list: the tie-break order is the targets'
            for list in names.values_mut() {
                list.sort_by(|a, b| paths[&a.0][a.1].target.cmp(&paths[&b.0][b.1].target));
            }
        }
        Site { by_path, by_name }
    }

    /// The response for method on host at path and raw query, and how it
    /// matched, or None.
    pub fn lookup(
        &self,
        host: &str,
        method: &str,
        path: &str,
        query: Option<&str>,
    ) -> Option<(&Response, MatchKind)> {
        let method = if method == "HEAD" { "GET" } else { method };
        let paths = self.by_path.get(host)?;
        let Some(candidates) = paths.get(&format!("{method} {path}")) else {
            return self
                .variant_of(host, method, path)
                .map(|r| (r, MatchKind::Variant));
        };
        let query = query.unwrap_or("");
        let want = if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        };
        if let Some(r) = candidates.iter().find(|r| r.target == want) {
            return Some((r, MatchKind::Exact));
        }
        let params = parse_query(query);
        let mut best = candidates.first()?;
        let mut best_score = agreement(&params, &best.params);
        for r in &candidates[1..] {
            let score = agreement(&params, &r.params);
            if better(score, best_score) {
                best = r;
                best_score = score;
            }
        }
        Some((best, MatchKind::Fuzzy))
    }

    /// The recorded media response nearest to a request for path that no
    /// response answers: of those on host with method, the same file name
    /// and as many segments, the one whose segments differ from the
    /// request's in the fewest places, at most MAX_VARIANT_SEGMENTS; ties
    /// to the first in tie-break order.
    fn variant_of(&self, host: &str, method: &str, path: &str) -> Option<&Response> {
        let name = file_name(path);
        if name.is_empty() {
            return None;
        }
        let want: Vec<&str> = path.split('/').collect();
        let paths = self.by_path.get(host)?;
        let mut best = None;
        let mut best_differ = MAX_VARIANT_SEGMENTS + 1;
        for (key, i) in self.by_name.get(host)?.get(&format!("{method} {name}"))? {
            let r = &paths[key][*i];
            let got: Vec<&str> = r
                .target
                .split('?')
                .next()
                .unwrap_or("")
                .split('/')
                .collect();
            if got.len() != want.len() {
                continue;
            }
            let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            if differ < best_differ {
                best = Some(r);
                best_differ = differ;
            }
        }
        best
    }
}

/// A path's last segment ("" for a path that ends in "/").
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}

/// A query's parameters: each key once, with its values in order, the
/// keys in their first order; keys and values decoded.
type Params = Vec<(Vec<u8>, Vec<Vec<u8>>)>;

/// Splits a raw query as the Go side's site.ParseQuery does: at "&", a
/// part without "=" is a key with the empty value, empty parts skipped,
/// "+" decoded to a space and "%XX" to its byte, a lone "%" kept.
fn parse_query(raw: &str) -> Params {
    let mut params: Params = Vec::new();
    for part in raw.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let (key, value) = (unescape(k), unescape(v));
        match params.iter_mut().find(|(pk, _)| *pk == key) {
            Some((_, values)) => values.push(value),
            None => params.push((key, vec![value])),
        }
    }
    params
}

/// Decodes one key or value of a query (see parse_query).
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() && hex(b[i + 1]).is_some() && hex(b[i + 2]).is_some() => {
                out.push(hex(b[i + 1]).unwrap() << 4 | hex(b[i + 2]).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// The M and T of WebPageReplay's ratio 2M/T: one plus the request's
/// parameters whose values equal the recorded ones, and the parameters of
/// both.
fn agreement(req: &Params, rec: &Params) -> (usize, usize) {
    let m = 1 + req
        .iter()
        .filter(|(k, v)| rec.iter().any(|(rk, rv)| rk == k && rv == v))
        .count();
    (m, req.len() + rec.len())
}

/// Whether the ratio of a is above that of b (a T of 0, two requests
/// without parameters, is the highest).
fn better(a: (usize, usize), b: (usize, usize)) -> bool {
    match (a.1, b.1) {
        (0, t) => t != 0,
        (_, 0) => false,
        _ => a.0 * b.1 > b.0 * a.1,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(target: &str, media: bool) -> Response {
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
            params: parse_query(target.split_once('?').map_or("", |(_, q)| q)),
            media,
        }
    }

    /// The cases of testdata/match.txt, which the Go side checks too.
    #[test]
    fn match_cases() {
        let text = include_str!("../testdata/match.txt");
        let mut paths: HashMap<String, Vec<Response>> = HashMap::new();
        let mut cases = 0;
        for (n, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.is_empty() || fields[0].starts_with('#') {
                continue;
            }
            match fields[0] {
                "reset" => paths.clear(),
                "have" => {
                    let path = fields[2].split('?').next().unwrap();
                    let key = format!("{} {path}", fields[1]);
                    let list = paths.entry(key).or_default();
                    list.push(resp(fields[2], fields.get(3) == Some(&"media")));
                    // the Go side's tie-break order: by target
                    list.sort_by(|a, b| a.target.cmp(&b.target));
                }
                "want" => {
                    cases += 1;
                    let mut by_path = HashMap::new();
                    let cloned: HashMap<String, Vec<Response>> = paths
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.iter().map(|r| resp(&r.target, r.media)).collect(),
                            )
                        })
                        .collect();
                    by_path.insert("h.test".to_string(), cloned);
                    let site = Site::new(by_path);
                    let (path, query) = match fields[2].split_once('?') {
                        Some((p, q)) => (p, Some(q)),
                        None => (fields[2], None),
                    };
                    let got = match site.lookup("h.test", fields[1], path, query) {
                        None => "none".to_string(),
                        Some((r, MatchKind::Exact)) => format!("exact {}", r.target),
                        Some((r, MatchKind::Fuzzy)) => format!("fuzzy {}", r.target),
                        Some((r, MatchKind::Variant)) => format!("variant {}", r.target),
                    };
                    assert_eq!(got, fields[3..].join(" "), "line {}: {line}", n + 1);
                }
                other => panic!("line {}: unknown directive {other:?}", n + 1),
            }
        }
        assert!(cases >= 20, "only {cases} cases");
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
