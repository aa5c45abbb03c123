package experiment

import (
	"slices"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// flightTally gathers the first response flights of a testbed's loads
// that their windows ended, TCP's and QUIC's apart: what the servers'
// stacks did on the wire, for the testbed's record.
type flightTally struct {
	tcp, quic []breakdown.Flight
}

// add keeps the measurable flights of one load's packets.
func (f *flightTally) add(packets []breakdown.Packet) {
	for _, fl := range breakdown.FirstFlights(packets) {
		switch {
		case !fl.Limited:
		case fl.Conn.UDP:
			f.quic = append(f.quic, fl)
		default:
			f.tcp = append(f.tcp, fl)
		}
	}
}

// record puts the tally's medians and the pacing most flights showed into
// rec.
func (f *flightTally) record(rec *results.Testbed) {
	rec.MeasuredTCPFlight, rec.MeasuredTCPFlightBytes, rec.MeasuredTCPSpreadMs, rec.MeasuredTCPPacing = summarizeFlights(f.tcp)
	rec.MeasuredTCPConnections = int64(len(f.tcp))
	rec.MeasuredQUICFlight, rec.MeasuredQUICFlightBytes, rec.MeasuredQUICSpreadMs, rec.MeasuredQUICPacing = summarizeFlights(f.quic)
	rec.MeasuredQUICConnections = int64(len(f.quic))
}

// summarizeFlights is flights' median size in packets and bytes, median
// spread in ms, and the pacing most of them showed; nils and "" for none.
func summarizeFlights(flights []breakdown.Flight) (packets, bytes, spreadMs *float64, pacing string) {
	if len(flights) == 0 {
		return nil, nil, nil, ""
	}
	var p, b, s []float64
	votes := map[string]int{}
	for _, fl := range flights {
		p, b, s = append(p, float64(fl.Packets)), append(b, float64(fl.Bytes)), append(s, ms(fl.Spread.Seconds()))
		if v := fl.Paced(); v != "" {
			votes[v]++
		}
	}
	labels := []string{"paced", "partly paced", "burst"}
	best := slices.MaxFunc(labels, func(a, b string) int { return votes[a] - votes[b] })
	if votes[best] > 0 {
		pacing = best
	}
	return results.F(stats.Median(p)), results.F(stats.Median(b)), results.F(stats.Median(s)), pacing
}
