package report

import (
	"slices"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
)

// phaseNames are ps's names and spans, to compare.
func phaseNames(ps []drawnPhase) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.phase.name+" "+num(p.from, 0)+"–"+num(p.to, 0))
	}
	return out
}

func TestResourceTimingPhasesInWebPageTestsOrder(t *testing.T) {
	f := results.F
	fresh := results.Resource{URL: "https://a.test/1.png", Protocol: "h2", StartMs: 10, DNSStartMs: f(11), ConnectStartMs: f(11), TLSStartMs: f(111),
		ConnectEndMs: f(211), RequestStartMs: f(212), ResponseStartMs: f(312), ResponseEndMs: 320}
	want := []string{"blocked 10–11", "connect (TCP) 11–111", "TLS 111–211", "blocked 211–212", "wait 212–312", "receive 312–320"}
	if got := phaseNames(rtPhases(fresh)); !slices.Equal(got, want) {
		t.Errorf("a new TLS connection: %v, want %v", got, want)
	}
	quic := fresh
	quic.Protocol = "h3"
	want = []string{"blocked 10–11", "QUIC handshake 11–211", "blocked 211–212", "wait 212–312", "receive 312–320"}
	if got := phaseNames(rtPhases(quic)); !slices.Equal(got, want) {
		t.Errorf("a new QUIC connection: %v, want %v", got, want)
	}
	reused := results.Resource{Protocol: "h2", StartMs: 400, DNSStartMs: f(400), ConnectStartMs: f(400), ConnectEndMs: f(400),
		RequestStartMs: f(401), ResponseStartMs: f(450), ResponseEndMs: 460}
	want = []string{"blocked 400–401", "wait 401–450", "receive 450–460"}
	if got := phaseNames(rtPhases(reused)); !slices.Equal(got, want) {
		t.Errorf("a reused connection: %v, want %v", got, want)
	}
	hidden := results.Resource{Protocol: "h2", StartMs: 500, ResponseEndMs: 600}
	if got := phaseNames(rtPhases(hidden)); !slices.Equal(got, []string{"phases not exposed 500–600"}) {
		t.Errorf("a cross-origin response without Timing-Allow-Origin: %v, want it unknown, not zero", got)
	}
	rows := documentFirstResources([]results.Resource{{URL: "b", StartMs: 5}, {URL: "doc", Navigation: true, StartMs: 0}, {URL: "a", StartMs: 1}})
	if rows[0].URL != "doc" || rows[1].URL != "a" || rows[2].URL != "b" {
		t.Errorf("rows %v, want the document first, then by start", rows)
	}
}
