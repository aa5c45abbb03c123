//! What quicbench's HTTP/3 servers in their own processes share, whatever
//! their QUIC library: the site they serve and its matching rule (`site`),
//! the answer to a request as the Go origin gives it (`answer`), the
//! command line (`args`), and the control protocol with its connection
//! records (`control`). testdata/ holds the transcripts that this crate's
//! tests and quicbench's Go tests are both checked against.

/// The most a request's header section (its URL among it) may hold, in
/// bytes: Go's http.DefaultMaxHeaderBytes, quicbench's server.MaxHeaderBytes,
/// the same on every server stack.
pub const MAX_FIELD_SECTION_BYTES: u64 = 1 << 20;

pub mod answer;
pub mod args;
pub mod control;
pub mod site;
