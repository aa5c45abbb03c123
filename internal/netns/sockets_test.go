package netns

import (
	"net"
	"os"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
)

// TestCountUDPSocketsLeavesOutDNS reads tables as Linux 6.18 writes them:
// an unconnected IPv4 socket (Firefox's QUIC socket), a connected one to
// port 443 (Chromium's), a resolver question to port 53, and IPv6 alike.
func TestCountUDPSocketsLeavesOutDNS(t *testing.T) {
	const udp = `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
 1948: 00000000:A88B 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6112439 2 000000008bbe6f47 0
 2103: 010012C6:E3A1 0A0013C6:01BB 01 00000000:00000000 00:00000000 00000000     0        0 6112512 2 00000000aa0e91c1 0
 2210: 010012C6:C4F0 0A0013C6:0035 01 00000000:00000000 00:00000000 00000000     0        0 6112530 2 00000000bb1e91c1 0
`
	const udp6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  311: 00000000000000000000000000000000:B1C2 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 6113001 2 00000000cc2e91c1 0
  312: 00000000000000000000000001000000:D0D0 00000000000000000000000001000000:0035 01 00000000:00000000 00:00000000 00000000     0        0 6113002 2 00000000dd2e91c1 0
`
	for _, c := range []struct {
		name  string
		table string
		want  int
	}{{"udp", udp, 2}, {"udp6", udp6, 1}, {"header only", "  sl  local_address rem_address\n", 0}, {"empty", "", 0}} {
		if got := countUDPSockets([]byte(c.table)); got != c.want {
			t.Errorf("%s: %d sockets, want %d", c.name, got, c.want)
		}
	}
}

// TestUDPTablesSeeTheirNamespaceOnly: tables opened in a new namespace
// count a socket opened there, from the open files, and not this
// process's own outside it; they count it no more once it is closed.
func TestUDPTablesSeeTheirNamespaceOnly(t *testing.T) {
	testenv.RequireRoot(t)
	ns, err := Create(RunName(os.Getpid(), "udpt"))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	tables, err := ns.OpenUDPTables()
	if err != nil {
		t.Fatal(err)
	}
	defer tables.Close()
	outside, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	if n, err := tables.Sockets(); err != nil || n != 0 {
		t.Fatalf("a new namespace: %d sockets (%v), want 0", n, err)
	}
	inside, err := ns.ListenPacket("udp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tables.Sockets(); err != nil || n != 1 {
		t.Errorf("one socket open inside: %d (%v), want 1", n, err)
	}
	inside.Close()
	if n, err := tables.Sockets(); err != nil || n != 0 {
		t.Errorf("the socket closed: %d (%v), want 0", n, err)
	}
}
