package server

import "testing"

func TestCountsArithmetic(t *testing.T) {
	a, b := Counts{H1: 1, H2: 5, H3: 7}, Counts{H1: 1, H2: 2, H3: 3}
	if got := a.Add(b).Sub(b); got != a {
		t.Errorf("a + b − b = %+v, want %+v", got, a)
	}
	if a.Total() != 13 || a.Of("h2") != 5 || a.Of("h3") != 7 || a.Of("h4") != 0 {
		t.Errorf("total %d, h2 %d, h3 %d, h4 %d", a.Total(), a.Of("h2"), a.Of("h3"), a.Of("h4"))
	}
}

func TestHandshakeCountsInTableOrder(t *testing.T) {
	recs := []ConnRecord{{Handshake: HandshakeFull}, {Handshake: Handshake0RTT}, {Handshake: HandshakeFull}}
	got := HandshakeCounts(recs)
	if got[HandshakeFull] != 2 || got[Handshake0RTT] != 1 || len(got) != 2 {
		t.Errorf("counts %v", got)
	}
	if kinds := HandshakeKinds(); kinds[0] != Handshake0RTT || kinds[len(kinds)-1] != HandshakeUnknown {
		t.Errorf("kinds %v", kinds)
	}
}
