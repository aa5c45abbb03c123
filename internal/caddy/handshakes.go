package caddy

import (
	"encoding/json"
	"math"
	"net"
	"time"

	"github.com/quicbench/quicbench/internal/server"
)

// fullHandshake is a full TLS handshake as Caddy's certificate selection
// logs it: the client's address, the server name it asked for ("" where
// two handshakes' lines interleaved and the name is not sure), and when.
// A resumed handshake selects no certificate and logs none.
type fullHandshake struct {
	remote, sni string
	at          time.Time
}

// handshakeLine is the part of a certificate selection line quicbench
// reads: "choosing certificate" names the server name asked for, "matched
// certificate in cache" then the client's address, both from one
// handshake's goroutine.
type handshakeLine struct {
	Logger     string  `json:"logger"`
	Msg        string  `json:"msg"`
	TS         float64 `json:"ts"`
	Identifier string  `json:"identifier"`
	RemoteIP   string  `json:"remote_ip"`
	RemotePort string  `json:"remote_port"`
}

// handshakeReader pairs the lines of the certificate selection log into
// full handshakes.
type handshakeReader struct {
	// pending are the server names asked for whose handshakes have not
	// logged their address yet, oldest first.
	pending []pendingName
}

// pendingName is a server name a handshake asked for, and when.
type pendingName struct {
	name string
	at   time.Time
}

// pendingFor is how long a name waits for its handshake's address line:
// the two are logged microseconds apart by one goroutine, so a name older
// than this belongs to a handshake that logged no address (one that
// failed) and is dropped.
const pendingFor = time.Second

// line reads one log line; it returns a handshake when the line completes
// one. The name is the pending one where only one is pending, or all
// pending name the same host; else it is unknown ("").
func (r *handshakeReader) line(text string) (fullHandshake, bool) {
	var l handshakeLine
	if json.Unmarshal([]byte(text), &l) != nil || l.Logger != handshakeLogger {
		return fullHandshake{}, false
	}
	at := unixSeconds(l.TS)
	switch l.Msg {
	case "choosing certificate":
		r.pending = append(r.pending, pendingName{name: l.Identifier, at: at})
	case "matched certificate in cache":
		if l.RemoteIP == "" {
			return fullHandshake{}, false
		}
		r.dropStale(at)
		h := fullHandshake{remote: net.JoinHostPort(l.RemoteIP, l.RemotePort), sni: r.soleName(), at: at}
		if len(r.pending) > 0 {
			r.pending = r.pending[1:]
		}
		return h, true
	}
	return fullHandshake{}, false
}

// dropStale drops the pending names asked for pendingFor or longer before
// now.
func (r *handshakeReader) dropStale(now time.Time) {
	for len(r.pending) > 0 && now.Sub(r.pending[0].at) >= pendingFor {
		r.pending = r.pending[1:]
	}
}

// soleName is the server name every pending handshake asked for, "" if
// none is pending or they differ.
func (r *handshakeReader) soleName() string {
	if len(r.pending) == 0 {
		return ""
	}
	for _, p := range r.pending[1:] {
		if p.name != r.pending[0].name {
			return ""
		}
	}
	return r.pending[0].name
}

// unixSeconds is a log's timestamp, seconds since 1970, as a time.
func unixSeconds(ts float64) time.Time {
	sec, frac := math.Modf(ts)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// withHandshakes completes the connection records of the access log with
// the full handshakes: a TCP record learns when its handshake happened
// (the access log does not say), and a handshake whose client address no
// record has is a connection that served no request (a browser's spare
// or raced connection), recorded with no requests and an unknown
// transport (the log does not say which). A QUIC record's handshake stays
// unknown: one client socket may carry several hosts' connections, which
// its records do not tell apart.
func withHandshakes(recs []server.ConnRecord, hs []fullHandshake) []server.ConnRecord {
	byRemote := map[string][]int{}
	for i, r := range recs {
		byRemote[r.Remote] = append(byRemote[r.Remote], i)
	}
	for _, h := range hs {
		idx, ok := byRemote[h.remote]
		if !ok {
			recs = append(recs, server.ConnRecord{ServerName: h.sni, Remote: h.remote, Handshake: server.HandshakeFull, OpenedAt: h.at})
			continue
		}
		for _, i := range idx {
			r := &recs[i]
			if r.Transport == "tcp" && r.Handshake == server.HandshakeFull && r.OpenedAt.IsZero() {
				r.OpenedAt = h.at
			}
		}
	}
	return recs
}
