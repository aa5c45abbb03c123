package h3server

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestOddPathsAndLines: both Rust servers start from a run directory whose
// path is not UTF-8, answer a control line that is not UTF-8 with an
// error, and go on serving commands (issue 44, item 4).
func TestOddPathsAndLines(t *testing.T) {
	for _, c := range []struct {
		binary string
		quic   factor.QUICServer
		cc     factor.CC
	}{{BinaryQuinn, factor.QUICQuinn, "cubic"}, {BinaryQuiche, factor.QUICQuiche, "cubic"}} {
		t.Run(c.binary, func(t *testing.T) {
			if _, err := FindBinary(c.binary); err != nil {
				testenv.RequireFile(t, filepath.Join(os.Getenv(EnvBinDir), c.binary), "make deps builds it; set "+EnvBinDir)
			}
			dir := filepath.Join(t.TempDir(), "run-\xff\xfe")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			s := startIn(t, dir, c.binary, c.quic, c.cc)
			defer s.Close()
			err := s.do("qlog /runs/\xff", &struct{}{})
			if err == nil || !strings.Contains(err.Error(), "not UTF-8") {
				t.Fatalf("a control line that is not UTF-8: %v; want an error reply saying so", err)
			}
			if _, err := s.Counts(); err != nil {
				t.Fatalf("the next command: %v (%s)", err, s.ExitReason())
			}
		})
	}
}

func startIn(t *testing.T, dir, binary string, quic factor.QUICServer, cc factor.CC) *Server {
	t.Helper()
	s, _, _ := startOnPort(t, dir, binary, quic, cc)
	return s
}

// startOnPort starts binary in dir on a UDP port of 127.0.0.1 serving a
// synthetic page, and returns it, the port and the page's host.
func startOnPort(t *testing.T, dir, binary string, quic factor.QUICServer, cc factor.CC) (*Server, int, string) {
	t.Helper()
	s, port, err := startSite(t, dir, binary, quic, cc, syntheticSite(t))
	if err != nil {
		t.Fatalf("start in %q: %v", dir, err)
	}
	return s, port, syntheticSite(t).Hosts()[0]
}

// TestAResponseWithoutFieldsIsServed: a recorded response with no header
// field and no content type (www.kernel.org's HAR has one) starts both
// Rust servers; its manifest once held null for its fields, which they
// refused.
func TestAResponseWithoutFieldsIsServed(t *testing.T) {
	o := &site.Origin{Host: "www.quicbench.test", Resources: map[string]*site.Resource{
		"/":       {Path: "/", ContentType: "text/html", Body: []byte("<html></html>")},
		"/beacon": {Path: "/beacon", Status: 204},
	}}
	st := &site.Site{Origins: []*site.Origin{o}, DocumentPath: "/", Recorded: true}
	for _, c := range []struct {
		binary string
		quic   factor.QUICServer
	}{{BinaryQuinn, factor.QUICQuinn}, {BinaryQuiche, factor.QUICQuiche}} {
		t.Run(c.binary, func(t *testing.T) {
			if _, err := FindBinary(c.binary); err != nil {
				testenv.RequireFile(t, filepath.Join(os.Getenv(EnvBinDir), c.binary), "make deps builds it; set "+EnvBinDir)
			}
			s, _, err := startSite(t, t.TempDir(), c.binary, c.quic, "cubic", st)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
		})
	}
}

// startSite starts binary in dir on a UDP port of 127.0.0.1 serving st.
func startSite(t *testing.T, dir, binary string, quic factor.QUICServer, cc factor.CC, st *site.Site) (*Server, int, error) {
	t.Helper()
	certs, err := origin.NewCerts(dir, st.Hosts(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := Start(Config{Binary: binary, QUIC: quic, Site: st, Dir: dir, UDP: []*net.UDPConn{conn},
		CertFile: certs.LeafFile, KeyFile: certs.LeafKeyFile, CC: cc})
	return s, conn.LocalAddr().(*net.UDPAddr).Port, err
}

// TestPanicsAreShown: a server's failure names its panic, in Rust's
// default form and in our servers' one-line form, not the note or the
// backtrace after it.
func TestPanicsAreShown(t *testing.T) {
	for stderr, want := range map[string]string{
		"thread 'main' panicked at h3/src/main.rs:109:51:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n": "panicked at h3/src/main.rs:109:51: called `Option::unwrap()` on a `None` value",
		"thread 'main' panicked at src/x.rs:1:2:\nboom\nstack backtrace:\n   0: rust_begin_unwind\n":                                                                                     "panicked at src/x.rs:1:2: boom",
		"quicbench-h3: panicked at h3/src/main.rs:3: boom\n":                                                                                                                             "panicked at h3/src/main.rs:3: boom",
		"quicbench-h3: tls: bad key\n": "",
	} {
		if got := panicMessage(stderr); got != want {
			t.Errorf("panicMessage(%q) = %q, want %q", stderr, got, want)
		}
	}
}
