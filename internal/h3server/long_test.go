package h3server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestLongRequestsAreAnswered: round four found that quiche refused
// requests of 40 KB and 100 KB (its 32 KiB field section default) and
// quinn of 100 KB while Go's h2 and quic-go served them; every stack now
// takes server.MaxHeaderBytes, and quinn answers up to its URI limit.
func TestLongRequestsAreAnswered(t *testing.T) {
	for _, c := range []struct {
		binary  string
		quic    factor.QUICServer
		lengths []int
	}{
		{BinaryQuinn, factor.QUICQuinn, []int{10_000, 40_000, server.MaxQuinnRequestTarget - 100}},
		{BinaryQuiche, factor.QUICQuiche, []int{10_000, 40_000, 100_000, 500_000}},
	} {
		t.Run(c.binary, func(t *testing.T) {
			if _, err := FindBinary(c.binary); err != nil {
				testenv.RequireFile(t, filepath.Join(os.Getenv(EnvBinDir), c.binary), "make deps builds it; set "+EnvBinDir)
			}
			s, port, host := startOnPort(t, t.TempDir(), c.binary, c.quic, "cubic")
			defer s.Close()
			tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: host, NextProtos: []string{http3.NextProtoH3}},
				Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
					return quic.DialAddrEarly(ctx, fmt.Sprintf("127.0.0.1:%d", port), tlsCfg, cfg)
				}}
			defer tr.Close()
			for _, n := range c.lengths {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+"/long?"+strings.Repeat("a", n), nil)
				resp, err := tr.RoundTrip(req)
				cancel()
				if err != nil {
					t.Errorf("a request of %d bytes: %v, want an answer", n, err)
					continue
				}
				resp.Body.Close()
			}
		})
	}
}

// TestQuinnRefusesTargetsItCannotTake: a site whose request target is
// longer than quinn's URI limit is refused when quinn starts, naming the
// stacks that serve it, rather than served without that request.
func TestQuinnRefusesTargetsItCannotTake(t *testing.T) {
	st := syntheticSite(t)
	st.Origins[0].Resources["/long"] = &site.Resource{Path: "/long", Query: strings.Repeat("a", server.MaxQuinnRequestTarget), ContentType: "image/png"}
	if err := checkTargets(BinaryQuinn, st); err == nil || !strings.Contains(err.Error(), "--quic-server quic-go or quiche") {
		t.Errorf("quinn with a %d-byte target: %v, want it refused", server.MaxQuinnRequestTarget+6, err)
	}
	if err := checkTargets(BinaryQuiche, st); err != nil {
		t.Errorf("quiche with the same site: %v", err)
	}
}

func syntheticSite(t *testing.T) *site.Site {
	t.Helper()
	page, err := factor.ParsePage("synthetic:2x1KB")
	if err != nil {
		t.Fatal(err)
	}
	st, err := gen.Build(page, 1, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	return st
}
