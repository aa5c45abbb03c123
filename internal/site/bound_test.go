package site_test

import (
	"math"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
)

// TestLowerBoundOfASyntheticPage: a document and 4 images on 2 origins at
// 100 ms: over TCP+TLS the chain is the document's 2 + 1 round trips, then
// the second origin's handshake and a request (6 RTT); over QUIC 4, with
// 0-RTT 2; a 1 Mbit/s bottleneck makes the bytes the bound.
func TestLowerBoundOfASyntheticPage(t *testing.T) {
	s, err := gen.Synthetic(factor.Page{Kind: factor.PageSynthetic, Objects: 4, ObjectBytes: 10_000}, []string{"a.test", "b.test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	rtt := func(string) time.Duration { return 100 * time.Millisecond }
	for _, tc := range []struct {
		handshake int
		rate      float64
		wantMs    float64
		chainRTTs float64
	}{
		{2, 0, 600, 6},
		{1, 0, 400, 4},
		{0, 0, 200, 2},
		{1, 1e6, 200 + float64(s.Bytes())*8/1e6*1000, 4},
	} {
		b := s.LowerBound(site.BoundInput{RTT: rtt, Handshake: tc.handshake, RateBps: tc.rate, Required: s.Subresources})
		if math.Abs(b.Ms-tc.wantMs) > 1e-6 || b.ChainRTTs != tc.chainRTTs || b.Bytes != s.Bytes() {
			t.Errorf("handshake %d, rate %g: bound %+v, want %.1f ms and %g RTTs of chain", tc.handshake, tc.rate, b, tc.wantMs, tc.chainRTTs)
		}
	}
}

// TestLowerBoundFollowsTheChain: on a generated page a font comes after
// its style sheet and an injected image after its script, so the chain
// is longer than the document and one request.
func TestLowerBoundFollowsTheChain(t *testing.T) {
	s, err := gen.Web2024(factor.Page{Kind: factor.PageWeb2024, Number: 12, CorpusSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Parents) == 0 {
		t.Fatal("a generated page without parents")
	}
	rtt := func(string) time.Duration { return 50 * time.Millisecond }
	all := s.LowerBound(site.BoundInput{RTT: rtt, Handshake: 1, Required: s.Subresources})
	flat := s.LowerBound(site.BoundInput{RTT: rtt, Handshake: 1, Required: s.WithoutScripts()})
	if all.ChainRTTs < 5 || flat.ChainRTTs > all.ChainRTTs || all.Bytes <= flat.Bytes {
		t.Errorf("chain with scripts %+v, without %+v", all, flat)
	}
}
