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
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// flightTally gathers the first response flights of a testbed's loads
// that their windows ended, TCP's and QUIC's apart: what the servers'
// stacks did on the wire, for the testbed's record.
type flightTally struct {
	tcp, quic []breakdown.Flight
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
// many bytes together (enough to fill a 32-packet window twice over), and
// this long.
const (
	calibrationRequests = 64
	calibrationBytes    = 128 << 10
	calibrationTimeout  = 30 * time.Second
)

// calibrateStacks downloads, before a setup's loads, what the page's
// largest origin serves (its largest resources at once over h2 and h3, up
// to calibrationBytes; its largest resource over h1) over one TCP protocol and over h3 where the spec
// loads over them, each with a fresh Go client and the link's packet log
// on, and tallies the connections' first flights: a measurement of what
// each stack sends first that does not hang on whether a browser's first
// request fills a window. A failure is logged, never the run's.
func (r *runner) calibrateStacks(ctx context.Context, b *bed) {
	protocols := r.spec.Protocols()
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
	for _, p := range chosen {
		for try := 1; try <= calibrationTries && ctx.Err() == nil; try++ {
			packets, err := calibrationDownload(ctx, b.Testbed, b.page, p)
			if err != nil {
				r.cfg.Log.Warn("stack calibration failed", "protocol", p, "err", err)
				break
			}
			if b.flights.add(packets, p == factor.H3) || calibrationSize(b.page, p == factor.H1) < calibrationFill {
				break // a window was seen, or the page cannot fill one: no second try
			}
		}
	}
}

// A calibration is tried again, up to calibrationTries times, when it saw
// no window although it asked for at least calibrationFill bytes (more
// than a 32-packet window): a loss in the first flight or its answer on a
// lossy link keeps the flight from counting.
const (
	calibrationTries = 2
	calibrationFill  = 64 << 10
)

// calibrationSize is how many body bytes a calibration of page asks for
// (calibrationURLs).
func calibrationSize(page *site.Site, one bool) int {
	n := 0
	for _, res := range calibrationResources(page, one) {
		n += len(res.Body)
	}
	return n
}

// calibrationDownload fetches the calibration URLs of page over proto
// with a fresh client and returns the link's packets meanwhile.
func calibrationDownload(ctx context.Context, tb *testbed.Testbed, page *site.Site, proto factor.Protocol) ([]breakdown.Packet, error) {
	urls := calibrationURLs(page, proto == factor.H1)
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
	var wg sync.WaitGroup
	errs := make([]error, len(urls))
	for i, u := range urls {
		wg.Go(func() { errs[i] = fetchAll(ctx, client.Client, u) })
	}
	wg.Wait()
	return log.Packets(), errors.Join(errs...)
}

// fetchAll reads the response to a GET of url to its end.
func fetchAll(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// calibrationURLs are the URLs of calibrationResources.
func calibrationURLs(page *site.Site, one bool) []string {
	var urls []string
	for _, res := range calibrationResources(page, one) {
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
// they add up to calibrationBytes: at most calibrationRequests.
func calibrationResources(page *site.Site, one bool) []hostedResource {
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
		rs = rs[:1]
	}
	var out []hostedResource
	bytes := 0
	for _, res := range rs[:min(len(rs), calibrationRequests)] {
		if bytes >= calibrationBytes {
			break
		}
		out = append(out, hostedResource{res, best.Host})
		bytes += len(res.Body)
	}
	return out
}
