package caddy

import (
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/server"
)

// handshakeLog is certificate selection lines as Caddy 2.6 writes them:
// two handshakes one after the other, then two whose lines interleave
// (their names differ), with lines of other kinds between; then a
// handshake that logged no address (it failed) and, a second and a half
// later, one that did.
var handshakeLog = []string{
	`{"level":"debug","ts":1796009572.438093,"logger":"tls.handshake","msg":"choosing certificate","identifier":"www.quicbench.test","num_choices":1}`,
	`{"level":"debug","ts":1796009572.4381754,"logger":"tls.handshake","msg":"custom certificate selection results","identifier":"www.quicbench.test","managed":false}`,
	`{"level":"debug","ts":1796009572.4381895,"logger":"tls.handshake","msg":"matched certificate in cache","remote_ip":"198.18.0.1","remote_port":"42436","managed":false}`,
	`{"level":"debug","ts":1796009572.4986427,"logger":"tls.handshake","msg":"choosing certificate","identifier":"o2.quicbench.test","num_choices":1}`,
	`{"level":"debug","ts":1796009572.4987223,"logger":"tls.handshake","msg":"matched certificate in cache","remote_ip":"198.18.0.1","remote_port":"41990"}`,
	`not json`,
	`{"level":"info","ts":1796009572.5,"logger":"http.log.access.quicbench","msg":"handled request"}`,
	`{"level":"debug","ts":1796009572.6,"logger":"tls.handshake","msg":"choosing certificate","identifier":"www.quicbench.test"}`,
	`{"level":"debug","ts":1796009572.6001,"logger":"tls.handshake","msg":"choosing certificate","identifier":"o2.quicbench.test"}`,
	`{"level":"debug","ts":1796009572.6002,"logger":"tls.handshake","msg":"matched certificate in cache","remote_ip":"198.18.0.1","remote_port":"42450"}`,
	`{"level":"debug","ts":1796009572.6003,"logger":"tls.handshake","msg":"matched certificate in cache","remote_ip":"198.18.0.1","remote_port":"42452"}`,
	`{"level":"debug","ts":1796009573.0,"logger":"tls.handshake","msg":"choosing certificate","identifier":"failed.quicbench.test"}`,
	`{"level":"debug","ts":1796009574.5,"logger":"tls.handshake","msg":"choosing certificate","identifier":"www.quicbench.test"}`,
	`{"level":"debug","ts":1796009574.5001,"logger":"tls.handshake","msg":"matched certificate in cache","remote_ip":"198.18.0.1","remote_port":"42460"}`,
}

// TestFullHandshakesArePairedWithTheirNames: each address line completes
// the handshake whose name came before it; where two handshakes' lines
// interleave, the first to finish gets no name (it may be either), the
// last the one left; a name whose handshake logged no address within a
// second is forgotten.
func TestFullHandshakesArePairedWithTheirNames(t *testing.T) {
	var r handshakeReader
	var got []fullHandshake
	for _, l := range handshakeLog {
		if h, ok := r.line(l); ok {
			got = append(got, h)
		}
	}
	want := []fullHandshake{
		{remote: "198.18.0.1:42436", sni: "www.quicbench.test"},
		{remote: "198.18.0.1:41990", sni: "o2.quicbench.test"},
		{remote: "198.18.0.1:42450", sni: ""},
		{remote: "198.18.0.1:42452", sni: "o2.quicbench.test"},
		{remote: "198.18.0.1:42460", sni: "www.quicbench.test"},
	}
	if len(got) != len(want) {
		t.Fatalf("handshakes %+v, want %d", got, len(want))
	}
	for i := range want {
		if got[i].remote != want[i].remote || got[i].sni != want[i].sni {
			t.Errorf("handshake %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if at := got[0].at.UnixMicro(); at != 1796009572438189 {
		t.Errorf("first handshake at %d µs, want its address line's 1796009572438189", at)
	}
}

// TestHandshakesCompleteTheAccessRecords: a TCP connection learns when it
// made its full handshake; one that served nothing gets a record of its
// own, no transport; a QUIC socket's handshakes add nothing.
func TestHandshakesCompleteTheAccessRecords(t *testing.T) {
	t0 := time.Unix(1796009572, 0)
	recs := []server.ConnRecord{
		{Transport: "tcp", ServerName: "a.test", Remote: "198.18.0.1:1000", Handshake: server.HandshakeFull, Requests: 2},
		{Transport: "tcp", ServerName: "a.test", Remote: "198.18.0.1:1002", Handshake: server.HandshakeResumed, Requests: 1},
		{Transport: "quic", Remote: "198.18.0.1:2000", Handshake: server.HandshakeUnknown, Requests: 3},
	}
	hs := []fullHandshake{
		{remote: "198.18.0.1:1000", sni: "a.test", at: t0},
		{remote: "198.18.0.1:1001", sni: "a.test", at: t0.Add(time.Millisecond)},
		{remote: "198.18.0.1:2000", sni: "a.test", at: t0.Add(2 * time.Millisecond)},
		{remote: "198.18.0.1:2000", sni: "b.test", at: t0.Add(3 * time.Millisecond)},
	}
	got := withHandshakes(recs, hs)
	if len(got) != 4 {
		t.Fatalf("records %+v, want the three and one that served nothing", got)
	}
	if !got[0].OpenedAt.Equal(t0) || !got[1].OpenedAt.IsZero() || !got[2].OpenedAt.IsZero() || got[2].Handshake != server.HandshakeUnknown {
		t.Errorf("records %+v: want the full TCP one opened at its handshake, the others as they were", got[:3])
	}
	spare := got[3]
	if spare.Transport != "" || spare.Remote != "198.18.0.1:1001" || spare.ServerName != "a.test" || spare.Requests != 0 ||
		spare.Handshake != server.HandshakeFull || !spare.OpenedAt.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("the connection that served nothing: %+v", spare)
	}
}
