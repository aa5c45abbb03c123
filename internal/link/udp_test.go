package link

import (
	"testing"
	"time"
)

func TestUDPPoliciesParseAndPrintAsGiven(t *testing.T) {
	for _, text := range []string{"pass", "block", "block-after-20", "1mbit", "170kbit", "1500bit"} {
		p, err := ParseUDPPolicy(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if p.String() != text {
			t.Errorf("%s reads back as %s", text, p.String())
		}
	}
	for _, bad := range []string{"drop", "block-after-0", "block-after-x", "10", "1mbps", "-1mbit"} {
		if _, err := ParseUDPPolicy(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestBlockAfterCountsEachFlowBothWays(t *testing.T) {
	f := NewUDPFilter(UDPPolicy{Block: true, After: 3})
	now := time.Unix(0, 0)
	client, server, other := [6]byte{10, 0, 0, 1, 0xc3, 0x50}, [6]byte{10, 0, 1, 1, 1, 0xbb}, [6]byte{10, 0, 1, 2, 1, 0xbb}
	var dropped []bool
	for i := range 5 {
		up := i%2 == 0
		flow := FlowOf(client, server)
		if !up {
			flow = FlowOf(server, client)
		}
		dropped = append(dropped, f.Drop(now, flow, up, 1200))
	}
	want := []bool{false, false, false, true, true}
	for i := range want {
		if dropped[i] != want[i] {
			t.Fatalf("drops %v, want %v", dropped, want)
		}
	}
	if f.Drop(now, FlowOf(client, other), true, 1200) {
		t.Error("another flow's first packet was dropped")
	}
	if !NewUDPFilter(UDPPolicy{Block: true}).Drop(now, FlowOf(client, server), true, 60) {
		t.Error("block passed a packet")
	}
	if NewUDPFilter(UDPPolicy{}).Drop(now, FlowOf(client, server), true, 60) {
		t.Error("pass dropped a packet")
	}
}

func TestPolicerPassesItsRateAndDropsTheRest(t *testing.T) {
	// 1 Mbit/s for 2 s of 1250-byte packets offered at 2 Mbit/s: about
	// half pass, the burst's 6,250 bytes (5 packets) beyond it.
	f := NewUDPFilter(UDPPolicy{RateBitsPerSecond: 1_000_000})
	start := time.Unix(0, 0)
	passed := 0
	const size, every = 1250, 5 * time.Millisecond
	for i := range 400 {
		if !f.Drop(start.Add(time.Duration(i)*every), FlowOf([6]byte{1}, [6]byte{2}), false, size) {
			passed++
		}
	}
	if want := 200 + 5; passed < want-2 || passed > want+2 {
		t.Errorf("%d packets passed, want about %d", passed, want)
	}
	// the other direction has a bucket of its own
	if f.Drop(start.Add(time.Second), FlowOf([6]byte{1}, [6]byte{2}), true, size) {
		t.Error("the uplink's first packet was dropped")
	}
}
