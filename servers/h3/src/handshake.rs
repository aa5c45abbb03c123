//! Which handshake a connection made — full, resumed from a session ticket,
//! or resumed with the client's 0-RTT data accepted — read from the TLS
//! messages the server itself sent. quinn does not expose rustls's
//! handshake kind, so the server's TLS session is wrapped: in QUIC the
//! handshake messages pass through the session in plaintext (packet
//! protection is QUIC's), and the server's flight says it all. Its
//! ServerHello carries pre_shared_key when a ticket was accepted, and its
//! EncryptedExtensions carry early_data when 0-RTT was accepted (RFC 8446,
//! sections 4.2.10 and 4.2.11).

use std::any::Any;
use std::sync::Arc;

use quinn::crypto::{
    self, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey, UnsupportedVersion,
};
use quinn::ConnectionId;
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::TransportError;

pub use quicbench_serve::control::HandshakeKind as Kind;

/// What `Connection::handshake_data` returns for a wrapped session.
pub struct Data {
    pub kind: Kind,
    pub server_name: Option<String>,
    pub alpn: Option<Vec<u8>>,
}

const SERVER_HELLO: u8 = 2;
const ENCRYPTED_EXTENSIONS: u8 = 8;
const FINISHED: u8 = 20;
const EXT_PRE_SHARED_KEY: u16 = 41;
const EXT_EARLY_DATA: u16 = 42;

/// Reads the server's handshake messages as they are written.
#[derive(Default)]
pub struct FlightReader {
    pending: Vec<u8>,
    psk: bool,
    early_data: bool,
    finished: bool,
}

impl FlightReader {
    /// Takes the bytes of handshake messages the server wrote.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while self.pending.len() >= 4 {
            let len =
                u32::from_be_bytes([0, self.pending[1], self.pending[2], self.pending[3]]) as usize;
            if self.pending.len() < 4 + len {
                return;
            }
            let body: Vec<u8> = self.pending[4..4 + len].to_vec();
            match self.pending[0] {
                // A HelloRetryRequest is a ServerHello too; the second
                // ServerHello decides.
                SERVER_HELLO => {
                    self.psk = server_hello_extensions(&body)
                        .is_some_and(|e| has_extension(e, EXT_PRE_SHARED_KEY))
                }
                ENCRYPTED_EXTENSIONS => {
                    self.early_data =
                        extensions_block(&body).is_some_and(|e| has_extension(e, EXT_EARLY_DATA))
                }
                FINISHED => self.finished = true,
                _ => {}
            }
            self.pending.drain(..4 + len);
        }
    }

    /// The handshake's kind so far.
    pub fn kind(&self) -> Kind {
        match (self.finished, self.psk, self.early_data) {
            (false, _, _) => Kind::Incomplete,
            (true, true, true) => Kind::ZeroRtt,
            (true, true, false) => Kind::Resumed,
            _ => Kind::Full,
        }
    }
}

/// The extensions of a ServerHello body: version (2), random (32), session
/// id (1 + n), cipher suite (2), compression (1), then the extensions.
fn server_hello_extensions(body: &[u8]) -> Option<&[u8]> {
    let sid_len = *body.get(34)? as usize;
    extensions_block(body.get(35 + sid_len + 3..)?)
}

/// The extension list of a block that starts with its two-byte length.
fn extensions_block(b: &[u8]) -> Option<&[u8]> {
    let len = u16::from_be_bytes([*b.first()?, *b.get(1)?]) as usize;
    b.get(2..2 + len)
}

fn has_extension(mut list: &[u8], want: u16) -> bool {
    while list.len() >= 4 {
        let typ = u16::from_be_bytes([list[0], list[1]]);
        let len = u16::from_be_bytes([list[2], list[3]]) as usize;
        if typ == want {
            return true;
        }
        match list.get(4 + len..) {
            Some(rest) => list = rest,
            None => return false,
        }
    }
    false
}

/// A server crypto configuration whose sessions report their handshake kind.
pub struct ServerConfig(pub Arc<dyn crypto::ServerConfig>);

impl crypto::ServerConfig for ServerConfig {
    fn initial_keys(
        &self,
        version: u32,
        dst_cid: &ConnectionId,
    ) -> Result<Keys, UnsupportedVersion> {
        self.0.initial_keys(version, dst_cid)
    }

    fn retry_tag(&self, version: u32, orig_dst_cid: &ConnectionId, packet: &[u8]) -> [u8; 16] {
        self.0.retry_tag(version, orig_dst_cid, packet)
    }

    fn start_session(
        self: Arc<Self>,
        version: u32,
        params: &TransportParameters,
    ) -> Box<dyn crypto::Session> {
        Box::new(Session {
            inner: self.0.clone().start_session(version, params),
            flight: FlightReader::default(),
        })
    }
}

struct Session {
    inner: Box<dyn crypto::Session>,
    flight: FlightReader,
}

impl crypto::Session for Session {
    fn initial_keys(&self, dst_cid: &ConnectionId, side: quinn::Side) -> Keys {
        self.inner.initial_keys(dst_cid, side)
    }

    fn handshake_data(&self) -> Option<Box<dyn Any>> {
        let data = self.inner.handshake_data()?;
        let (server_name, alpn) = match data.downcast::<quinn::crypto::rustls::HandshakeData>() {
            Ok(d) => (d.server_name, d.protocol),
            Err(_) => (None, None),
        };
        Some(Box::new(Data {
            kind: self.flight.kind(),
            server_name,
            alpn,
        }))
    }

    fn peer_identity(&self) -> Option<Box<dyn Any>> {
        self.inner.peer_identity()
    }

    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.inner.early_crypto()
    }

    fn early_data_accepted(&self) -> Option<bool> {
        self.inner.early_data_accepted()
    }

    fn is_handshaking(&self) -> bool {
        self.inner.is_handshaking()
    }

    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.inner.read_handshake(buf)
    }

    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        self.inner.transport_parameters()
    }

    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        let start = buf.len();
        let keys = self.inner.write_handshake(buf);
        self.flight.feed(&buf[start..]);
        keys
    }

    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        self.inner.next_1rtt_keys()
    }

    fn is_valid_retry(&self, orig_dst_cid: &ConnectionId, header: &[u8], payload: &[u8]) -> bool {
        self.inner.is_valid_retry(orig_dst_cid, header, payload)
    }

    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.inner.export_keying_material(output, label, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(typ: u8, body: &[u8]) -> Vec<u8> {
        let n = body.len() as u32;
        let mut m = vec![typ, (n >> 16) as u8, (n >> 8) as u8, n as u8];
        m.extend_from_slice(body);
        m
    }

    fn extensions(list: &[(u16, &[u8])]) -> Vec<u8> {
        let mut inner = Vec::new();
        for (typ, data) in list {
            inner.extend_from_slice(&typ.to_be_bytes());
            inner.extend_from_slice(&(data.len() as u16).to_be_bytes());
            inner.extend_from_slice(data);
        }
        let mut out = (inner.len() as u16).to_be_bytes().to_vec();
        out.extend(inner);
        out
    }

    fn server_hello(ext: &[(u16, &[u8])]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.push(0); // empty session id
        body.extend_from_slice(&[0x13, 0x01, 0]);
        body.extend(extensions(ext));
        message(SERVER_HELLO, &body)
    }

    fn flight(hello: &[(u16, &[u8])], ee: &[(u16, &[u8])]) -> Vec<u8> {
        let mut f = server_hello(hello);
        f.extend(message(ENCRYPTED_EXTENSIONS, &extensions(ee)));
        f.extend(message(FINISHED, &[0; 32]));
        f
    }

    #[test]
    fn kinds_from_the_servers_flight() {
        let key_share: (u16, &[u8]) = (51, &[0, 29, 0, 1, 9]);
        let versions: (u16, &[u8]) = (43, &[3, 4]);
        let psk: (u16, &[u8]) = (EXT_PRE_SHARED_KEY, &[0, 0]);
        let cases = [
            (
                flight(&[key_share, versions], &[(16, b"\x00\x03\x02h3")]),
                Kind::Full,
            ),
            (flight(&[key_share, versions, psk], &[]), Kind::Resumed),
            (
                flight(&[versions, psk], &[(EXT_EARLY_DATA, &[])]),
                Kind::ZeroRtt,
            ),
        ];
        for (bytes, want) in cases {
            // fed whole, and byte by byte (messages split across writes)
            let mut whole = FlightReader::default();
            whole.feed(&bytes);
            assert_eq!(whole.kind(), want);
            let mut split = FlightReader::default();
            for b in &bytes {
                split.feed(std::slice::from_ref(b));
            }
            assert_eq!(split.kind(), want);
        }
    }

    #[test]
    fn unfinished_and_truncated_flights() {
        let mut r = FlightReader::default();
        r.feed(&server_hello(&[(EXT_PRE_SHARED_KEY, &[0, 0])]));
        assert_eq!(r.kind(), Kind::Incomplete);
        assert!(server_hello_extensions(&[3, 3, 1]).is_none());
        assert!(!has_extension(&[0, 41, 0, 9, 1], EXT_EARLY_DATA));
    }
}
