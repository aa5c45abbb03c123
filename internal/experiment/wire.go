package experiment

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/breakdown"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// flightTally gathers the first response flights of a testbed's loads
// that their windows ended, and its calibrations' answers to a loss (the
// share of its sending a sender kept, breakdown.Backoff.Ratio), TCP's and
// QUIC's apart: what the servers' stacks did on the wire, for the
// testbed's record.
type flightTally struct {
	tcp, quic               []breakdown.Flight
	tcpBackoff, quicBackoff []float64
}

// merge adds what another tally holds.
func (f *flightTally) merge(o flightTally) {
	f.tcp, f.quic = append(f.tcp, o.tcp...), append(f.quic, o.quic...)
	f.tcpBackoff, f.quicBackoff = append(f.tcpBackoff, o.tcpBackoff...), append(f.quicBackoff, o.quicBackoff...)
}

// addBackoffs keeps the answers to a loss that a calibration's packets
// show.
func (f *flightTally) addBackoffs(packets []breakdown.Packet) {
	for _, b := range breakdown.Backoffs(packets) {
		if b.Conn.UDP {
			f.quicBackoff = append(f.quicBackoff, b.Ratio())
		} else {
			f.tcpBackoff = append(f.tcpBackoff, b.Ratio())
		}
	}
}

// add keeps the measurable flights of one load's packets (those their
// windows ended), and reports whether it kept any of QUIC's (quic) or
// TCP's.
func (f *flightTally) add(packets []breakdown.Packet, quic bool) (seen bool) {
	for _, fl := range breakdown.FirstFlights(packets) {
		switch {
		case !fl.Limited:
			continue
		case fl.Conn.UDP:
			f.quic = append(f.quic, fl)
		default:
			f.tcp = append(f.tcp, fl)
		}
		seen = seen || fl.Conn.UDP == quic
	}
	return seen
}

// record puts the tally's medians and the pacing most flights showed into
// rec.
func (f *flightTally) record(rec *results.Testbed) {
	rec.MeasuredTCPFlight, rec.MeasuredTCPFlightBytes, rec.MeasuredTCPSpreadMs, rec.MeasuredTCPPacing = summarizeFlights(f.tcp)
	rec.MeasuredTCPConnections = int64(len(f.tcp))
	rec.MeasuredQUICFlight, rec.MeasuredQUICFlightBytes, rec.MeasuredQUICSpreadMs, rec.MeasuredQUICPacing = summarizeFlights(f.quic)
	rec.MeasuredQUICConnections = int64(len(f.quic))
	rec.MeasuredTCPBackoff, rec.MeasuredTCPBackoffs = backoffMedian(f.tcpBackoff)
	rec.MeasuredQUICBackoff, rec.MeasuredQUICBackoffs = backoffMedian(f.quicBackoff)
}

// backoffMedian is vs' median (nil for none) and how many there are.
func backoffMedian(vs []float64) (*float64, int64) {
	if len(vs) == 0 {
		return nil, 0
	}
	return results.F(stats.Median(vs)), int64(len(vs))
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

// Stack calibration bounds: at most this many requests of at most this
// many bytes together (a 32-packet window, a loss at the start of the
// next, and two rounds after the sender learned of it: breakdown.Backoff),
// or what the link's downlink carries in calibrationAirtime if less, and
// this long.
const (
	calibrationRequests = 64
	calibrationBytes    = 512 << 10
	calibrationAirtime  = 2 * time.Second
	calibrationTimeout  = 30 * time.Second
)

// calibrationBudget is how many body bytes a calibration asks for over a
// downlink down: calibrationBytes, or calibrationAirtime of its rate where
// that is less (a slow link's calibration stays short, and shows its
// first flights, if not always a round trip after a loss), at least
// calibrationFill.
func calibrationBudget(down link.Config) int {
	if down.RateBitsPerSecond <= 0 {
		return calibrationBytes
	}
	airtime := int(float64(down.RateBitsPerSecond) / 8 * calibrationAirtime.Seconds())
	return max(min(calibrationBytes, airtime), calibrationFill)
}

// A calibration drops the first packet of the response's second flight
// (emulator.Emulator.DropFlightStart: the third burst from the servers,
// after the handshake's and the first flight, a burst beginning after a
// gap of a quarter of the link's round trip), so that it shows how the
// server's congestion control answers a loss at the start of a round
// trip; where no such gap comes (a link under breakdown.MinJudgedRTT, a
// sender that paces over the whole round trip), it drops the
// calibrationDropPackets-th full-size packet.
const (
	calibrationDropFlight  = 3
	calibrationDropPackets = 100
)

// calibrationGap is the gap before a flight on a link of round trip rtt;
// 0 (no flights told apart) under breakdown.MinJudgedRTT, the round trip
// from which the wire reads pacing and the answer to a loss.
func calibrationGap(rtt time.Duration) time.Duration {
	if rtt < breakdown.MinJudgedRTT {
		return 0
	}
	return rtt / 4
}

// calibrateStacks downloads, before a setup's loads, what the page's
// largest origin serves (its largest resources at once over h2 and h3, up
// to calibrationBytes; its largest resource over h1) over one TCP
// protocol and over h3 where the spec loads over them, each with a fresh
// Go client, the link's packet log on and one packet dropped
// (calibrationDropFlight), and tallies the connections' first flights and their
// answers to the loss: a measurement of what each stack does that does
// not hang on whether a browser's first request fills a window. A setup
// that differs from one calibrated before only in its page reuses that
// calibration, where it saw a window over every protocol. A failure is
// logged, never the run's.
func (r *runner) calibrateStacks(ctx context.Context, b *bed, setup *plan.Setup) {
	key := calibrationKey(setup)
	if done, ok := r.calibrated[key]; ok {
		b.flights.merge(done)
		return
	}
	var cal flightTally
	complete := true
	for _, p := range calibrationProtocols(r.spec.Protocols()) {
		if p == factor.H3 && setup.Network.UDP.Block {
			continue // no QUIC gets through: nothing of its stack to see
		}
		complete = r.calibrateOver(ctx, b, p, calibrationGap(setup.Network.RTT), calibrationBudget(setup.Network.Down), &cal) && complete
	}
	b.flights.merge(cal)
	if complete && ctx.Err() == nil {
		if r.calibrated == nil {
			r.calibrated = map[string]flightTally{}
		}
		r.calibrated[key] = cal
	}
}

// calibrationKey names what a stack calibration measures: the setup's
// network and stacks, not its page.
func calibrationKey(setup *plan.Setup) string {
	l := setup.Levels
	return strings.Join([]string{l[factor.IDNetwork], string(l.Stack()), string(l.Server()), string(l.QUIC())}, "|")
}

// calibrationProtocols are the protocols a calibration downloads over:
// one TCP protocol (h2 before h1) and h3, those among protocols.
func calibrationProtocols(protocols []factor.Protocol) []factor.Protocol {
	var chosen []factor.Protocol
	for _, tcp := range []factor.Protocol{factor.H2, factor.H1} {
		if slices.Contains(protocols, tcp) {
			chosen = append(chosen, tcp)
			break
		}
	}
	if slices.Contains(protocols, factor.H3) {
		chosen = append(chosen, factor.H3)
	}
	return chosen
}

// calibrateOver downloads b's calibration of budget bytes over p into
// cal (flights told apart by gap: calibrationDownload), a second time
// where the first saw no window (calibrationTries), and reports whether
// a window was seen.
func (r *runner) calibrateOver(ctx context.Context, b *bed, p factor.Protocol, gap time.Duration, budget int, cal *flightTally) bool {
	for try := 1; try <= calibrationTries && ctx.Err() == nil; try++ {
		packets, err := calibrationDownload(ctx, b.Testbed, calibrationResources(b.page, p == factor.H1, budget), budget, p, gap)
		if err != nil {
			r.cfg.Log.Warn("stack calibration failed", "protocol", p, "err", err)
			return false
		}
		cal.addBackoffs(packets)
		if cal.add(packets, p == factor.H3) {
			return true
		}
		if calibrationSize(calibrationResources(b.page, p == factor.H1, budget)) < calibrationFill {
			return false // the page cannot fill a window: no second try
		}
	}
	return false
}

// A calibration is tried again, up to calibrationTries times, when it saw
// no window although it asked for at least calibrationFill bytes (more
// than a 32-packet window): a loss in the first flight or its answer on a
// lossy link keeps the flight from counting.
const (
	calibrationTries = 2
	calibrationFill  = 64 << 10
)

// calibrationSize is how many body bytes the resources of a calibration
// hold.
func calibrationSize(resources []hostedResource) int {
	n := 0
	for _, res := range resources {
		n += len(res.Body)
	}
	return n
}

// calibrationDownload fetches resources over proto with a fresh client,
// until their bodies reach budget bytes, the first packet of the flight
// after a gap of gap dropped (calibrationDropFlight), and returns the
// link's packets meanwhile.
func calibrationDownload(ctx context.Context, tb *testbed.Testbed, resources []hostedResource, budget int, proto factor.Protocol, gap time.Duration) ([]breakdown.Packet, error) {
	urls := calibrationURLs(resources)
	if len(urls) == 0 {
		return nil, nil
	}
	client, err := tb.NewGoClient(string(proto))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, calibrationTimeout)
	defer cancel()
	log := emulator.NewPacketLog(time.Now())
	tb.Emulator.SetPacketLog(log)
	defer tb.Emulator.SetPacketLog(nil)
	tb.Emulator.DropFlightStart(calibrationDropFlight, gap, calibrationDropPackets)
	defer tb.Emulator.DropFlightStart(0, 0, 0)
	// The network's own losses would blur what the stack does, and leave
	// no loss alone for its answer: only the drop above is made.
	tb.Emulator.SuspendLoss(true)
	defer tb.Emulator.SuspendLoss(false)
	got := &budgetWriter{left: int64(budget), done: cancel}
	var wg sync.WaitGroup
	errs := make([]error, len(urls))
	for i, u := range urls {
		wg.Go(func() { errs[i] = fetchAll(ctx, client.Client, u, got) })
	}
	wg.Wait()
	if got.spent() {
		return log.Packets(), nil // the budget cut the responses short, as meant
	}
	return log.Packets(), errors.Join(errs...)
}

// budgetWriter counts the bytes the calibration's responses brought and
// ends the calibration (done) once they reach its budget: a resource
// larger than the budget is read only in part.
type budgetWriter struct {
	mu   sync.Mutex
	left int64
	done context.CancelFunc
}

// Write counts p.
func (w *budgetWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.left -= int64(len(p))
	if w.left <= 0 {
		w.done()
	}
	return len(p), nil
}

// spent reports whether the budget was reached.
func (w *budgetWriter) spent() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.left <= 0
}

// fetchAll reads the response to a GET of url to its end, into to.
func fetchAll(ctx context.Context, c *http.Client, url string, to io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(to, resp.Body)
	return err
}

// calibrationURLs are the URLs of resources.
func calibrationURLs(resources []hostedResource) []string {
	var urls []string
	for _, res := range resources {
		u := "https://" + res.host + res.Path
		if res.Query != "" {
			u += "?" + res.Query
		}
		urls = append(urls, u)
	}
	return urls
}

// hostedResource is a resource with the host that serves it.
type hostedResource struct {
	*site.Resource
	host string
}

// calibrationResources are the GET resources of page's origin that
// serves the most bytes, the largest first (only it, with one), until
// they add up to budget bytes, asked for again from the largest where
// they fall short: at most calibrationRequests.
func calibrationResources(page *site.Site, one bool, budget int) []hostedResource {
	if page == nil {
		return nil
	}
	gettable := func(res *site.Resource) bool {
		return res.Method == "" && (res.Status == 0 || res.Status == http.StatusOK)
	}
	var best *site.Origin
	most := 0
	for _, o := range page.Origins {
		n := 0
		for _, res := range o.Resources {
			if gettable(res) {
				n += len(res.Body)
			}
		}
		if n > most {
			best, most = o, n
		}
	}
	if best == nil {
		return nil
	}
	var rs []*site.Resource
	for _, res := range best.Resources {
		if gettable(res) {
			rs = append(rs, res)
		}
	}
	slices.SortFunc(rs, func(a, b *site.Resource) int { return cmp.Or(len(b.Body)-len(a.Body), strings.Compare(a.Path, b.Path)) })
	if one {
		return []hostedResource{{rs[0], best.Host}}
	}
	var out []hostedResource
	bytes := 0
	for i := 0; bytes < budget && i < calibrationRequests && (i < len(rs) || bytes > 0); i++ {
		res := rs[i%len(rs)]
		out = append(out, hostedResource{res, best.Host})
		bytes += len(res.Body)
	}
	return out
}
