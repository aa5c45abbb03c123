package loader

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/har"
)

// onePixelPNG is a valid 1×1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

// testSite serves a document with an image, a script and a stylesheet whose
// url() names a second image; /broken.png is not an image. It counts
// requests and can make responses cacheable.
func testSite(t *testing.T, cacheable, broken bool, requests *atomic.Int64) *httptest.Server {
	mux := http.NewServeMux()
	serve := func(path, ctype string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			if cacheable {
				w.Header().Set("Cache-Control", "max-age=600")
				w.Header().Set("ETag", `"v1"`)
			} else {
				w.Header().Set("Cache-Control", "no-store")
			}
			w.Header().Set("Content-Type", ctype)
			w.Write(body)
		})
	}
	doc := `<html><head><link rel="stylesheet" href="/s.css"><script src="/a.js"></script></head><body><img src="/1.png">`
	if broken {
		doc += `<img src="/broken.png">`
	}
	serve("/{$}", "text/html", []byte(doc+`</body></html>`))
	serve("/s.css", "text/css", []byte(`body { background: url(/bg.png) }`))
	serve("/a.js", "text/javascript", []byte(`1`))
	serve("/1.png", "image/png", onePixelPNG)
	serve("/bg.png", "image/png", onePixelPNG)
	serve("/broken.png", "image/png", []byte("not a png"))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func newLoader(srv *httptest.Server) *Loader {
	return &Loader{NewClient: func(proto factor.Protocol, sessions tls.ClientSessionCache, maxConns int) (*http.Client, func(), error) {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.ClientSessionCache = sessions
		tr.TLSClientConfig.NextProtos = nil
		tr.MaxConnsPerHost = maxConns
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(proto == factor.H1)
		tr.Protocols.SetHTTP2(proto == factor.H2)
		return &http.Client{Transport: tr}, tr.CloseIdleConnections, nil
	}}
}

func TestLoadsLikeABrowser(t *testing.T) {
	var requests atomic.Int64
	srv := testSite(t, false, true, &requests)
	l := newLoader(srv)
	harPath := filepath.Join(t.TempDir(), "load.har")
	expected := []string{srv.URL + "/s.css", srv.URL + "/a.js", srv.URL + "/1.png", srv.URL + "/bg.png"}
	for _, proto := range []factor.Protocol{factor.H1, factor.H2} {
		res, err := l.Load(context.Background(), client.Request{URL: srv.URL + "/", Protocol: proto, Expected: expected, HARPath: harPath})
		if err != nil {
			t.Fatal(err)
		}
		// The broken image arrived (status 200), so it is a resource, as in
		// a browser's Resource Timing; it does not decode.
		if res.DocumentProtocol != proto.NextHop() || res.Images != 2 || res.BrokenImages != 1 || len(res.Resources) != 5 {
			t.Errorf("%s: document over %q, %d images (%d broken), %d resources; want 2 images, 1 broken, 5 resources: %+v",
				proto, res.DocumentProtocol, res.Images, res.BrokenImages, len(res.Resources), res.Resources)
		}
		if !strings.Contains(res.Failure, "1 of 2 images broken") {
			t.Errorf("%s: failure %q, want the broken image named", proto, res.Failure)
		}
		var bg client.ResourceTiming
		for i, r := range res.Resources {
			if i > 0 && r.StartMs < res.Resources[i-1].StartMs {
				t.Errorf("%s: resources not in start order", proto)
			}
			if strings.HasSuffix(r.URL, "/bg.png") {
				bg = r
			}
			if r.Protocol != proto.NextHop() || r.Status != 200 || r.TransferBytes <= 0 {
				t.Errorf("%s: resource %+v", proto, r)
			}
		}
		if !(res.TTFBMs > 0 && res.TTFBMs <= res.DCLMs && res.DCLMs <= bg.StartMs && bg.ResponseEndMs <= res.PLTMs && res.PLTMs == res.OnLoadMs) {
			t.Errorf("%s: TTFB %.3f, DCL %.3f, bg.png %.3f–%.3f, PLT %.3f, onload %.3f: out of order", proto, res.TTFBMs, res.DCLMs, bg.StartMs, bg.ResponseEndMs, res.PLTMs, res.OnLoadMs)
		}
		h, err := har.ReadFile(harPath)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Log.Entries) != 6 || h.Log.Pages[0].PageTimings.OnLoad != res.PLTMs || h.Log.Entries[0].Request.URL != srv.URL+"/" {
			t.Errorf("%s: HAR with %d entries, onLoad %v", proto, len(h.Log.Entries), h.Log.Pages[0].PageTimings.OnLoad)
		}
		for _, e := range h.Log.Entries {
			if e.Time <= 0 || e.Timings.Wait < 0 || e.Timings.Receive < 0 || e.Response.Content.Size <= 0 {
				t.Errorf("%s: HAR entry %+v", proto, e)
			}
		}
	}
}

func TestRepeatVisitUsesTheCache(t *testing.T) {
	var requests atomic.Int64
	srv := testSite(t, true, false, &requests)
	l := newLoader(srv)
	expected := []string{srv.URL + "/s.css", srv.URL + "/a.js", srv.URL + "/1.png", srv.URL + "/bg.png"}
	between := 0
	res, err := l.Load(context.Background(), client.Request{URL: srv.URL + "/", Protocol: factor.H2, Expected: expected,
		Visit: factor.RepeatVisit, CacheAllowed: true, BetweenVisits: func(context.Context) error { between++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if between != 1 || res.FirstVisitPLTMs <= 0 || res.Visit != factor.RepeatVisit {
		t.Errorf("between %d, first visit PLT %v, visit %q", between, res.FirstVisitPLTMs, res.Visit)
	}
	if !res.OK() || len(res.Resources) != 4 || res.DocumentTransferBytes != 0 {
		t.Errorf("repeat visit: failure %q, %d resources, document transfer %d B", res.Failure, len(res.Resources), res.DocumentTransferBytes)
	}
	for _, r := range res.Resources {
		if r.TransferBytes != 0 {
			t.Errorf("%s came over the network on the repeat visit (%d B), want the cache", r.URL, r.TransferBytes)
		}
	}
	if n := requests.Load(); n != 5 {
		t.Errorf("%d requests, want only the first visit's 5", n)
	}
}

func TestHeaderSize(t *testing.T) {
	resp := &http.Response{Proto: "HTTP/1.1", Status: "200 OK", Header: http.Header{"A": {"b"}}}
	// "HTTP/1.1 200 OK\r\n" (17) + "A: b\r\n" (6) + "\r\n" (2)
	if got := headerSize(resp); got != 25 {
		t.Errorf("headerSize = %d, want 25", got)
	}
}
