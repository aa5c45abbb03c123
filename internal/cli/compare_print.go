package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/experiment"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/live"
	"github.com/quicbench/quicbench/internal/netcheck"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/report"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/server"
)

// compareRun is a finished or interrupted comparison as the run read it
// back from its database.
type compareRun struct {
	Summary  analysis.RunSummary `json:"summary"`
	Testbeds []results.Testbed   `json:"testbeds"`
	Netcheck *netcheck.Report    `json:"netcheck,omitempty"`
	// Trials are every load, each with its resources and connections.
	Trials []results.TrialDetail `json:"trials"`
	// Replay is, for a recorded page, each protocol's work per load.
	Replay []analysis.SettingWork `json:"replay,omitempty"`
	// CPU is each protocol's CPU per load and party, h3 against h2.
	CPU []analysis.SettingCPU `json:"cpu,omitempty"`
	// Answer is the report's answer in words: h3 against h2 and h1, with
	// the client's CPU, and whether loads were CPU-bound.
	Answer []string `json:"answer,omitempty"`
	// Short is the answer a person reads first (report.ShortAnswer).
	Short       []string `json:"short_answer,omitempty"`
	WallSeconds float64  `json:"wall_seconds"`
	Dir         string   `json:"run_dir"`
	// analysis is what Answer was read from; its parts table is printed
	// (the loads' parts are in Trials).
	analysis *analysis.Analysis
	// roundTrip is the network's round trip, on which the stacks' wire
	// readings are judged (analysis.WireWarnings); 0 when not known.
	roundTrip time.Duration
}

// compareOf is the comparison of the run that res read back from dir,
// over a network of round trip rtt.
func compareOf(dir string, res *experiment.RunResult, rtt time.Duration) (*compareRun, error) {
	rec := res.Recorded
	if rec == nil {
		return nil, fmt.Errorf("the comparison in %s was not read back", dir)
	}
	r := &compareRun{WallSeconds: res.Elapsed.Seconds(), Dir: dir, Trials: rec.Trials, Testbeds: rec.Testbeds, roundTrip: rtt}
	var trials []results.Trial
	var conns []results.Connection
	for _, t := range rec.Trials {
		trials, conns = append(trials, t.Trial), append(conns, t.Connections...)
	}
	var cals []analysis.Calibration
	for name, text := range rec.Netchecks { // a comparison has one network
		r.Netcheck = &netcheck.Report{}
		if err := json.Unmarshal([]byte(text), r.Netcheck); err != nil {
			return nil, fmt.Errorf("netcheck: %w", err)
		}
		cals = append(cals, calibrationOf(name, r.Netcheck))
	}
	until, err := report.UntilOf(rec.StopRule, trials, nil)
	if err != nil {
		return nil, fmt.Errorf("the comparison's until rule: %w", err)
	}
	r.summarize(trials, conns, cals, until)
	if err := analysis.NameWorkDifferences(r.Replay, trials, resourcesByTrial(rec.Trials)); err != nil {
		return nil, err
	}
	return r, nil
}

// detailResources are a comparison's loads' resources, by trial ID, as
// they were read back with the trials.
type detailResources map[string][]results.Resource

// resourcesByTrial indexes the resources of ts by trial ID.
func resourcesByTrial(ts []results.TrialDetail) detailResources {
	d := detailResources{}
	for _, t := range ts {
		d[t.Trial.ID] = t.Resources
	}
	return d
}

// ResourcesOf returns the resources of trial id (none for another).
func (d detailResources) ResourcesOf(id string) ([]results.Resource, error) { return d[id], nil }

// calibrationOf is network's netcheck as the analysis reads it.
func calibrationOf(network string, r *netcheck.Report) analysis.Calibration {
	c := analysis.Calibration{Network: network}
	for _, l := range r.Lines {
		c.Lines = append(c.Lines, analysis.CheckLine{Check: l.Check, Configured: l.Configured, Measured: l.Measured, Result: string(l.Result)})
	}
	return c
}

// summarize reads the run's numbers and its answer from its trials, the
// servers' connections and the networks' netchecks, under the run's until
// rule (nil: none).
func (r *compareRun) summarize(trials []results.Trial, conns []results.Connection, cals []analysis.Calibration, until *analysis.UntilRule) {
	r.Summary = analysis.SummarizeRun(trials, conns)
	r.Replay = analysis.Works(trials)
	r.CPU = analysis.CPUs(trials, factor.H3, factor.H2)
	if a, err := analysis.Analyze(trials, analysis.Options{Until: until}); err == nil {
		a.Calibration = cals
		r.Answer, r.analysis = report.Answer(a), a
		r.Short = report.ShortAnswer(a, r.wireWarnings(), r.whereText())
	}
}

// wireWarnings are the warnings of the run's testbeds: their stacks as
// measured on the wire (analysis.WireWarnings), a live path that changed,
// a live page's requests to hosts not pinned.
func (r *compareRun) wireWarnings() []string {
	var out []string
	for _, tb := range r.Testbeds {
		out = append(out, analysis.WireWarnings(tb, r.roundTrip)...)
		if tb.LiveOrigins != "" && pathChanged(tb) {
			out = append(out, "live site: "+pathChangedText+".")
		}
	}
	if hosts := unpinnedText(r.Trials); hosts != "" {
		out = append(out, hosts)
	}
	return out
}

// whereText says where the rest of the comparison is: "33 loads in 110 s;
// the tables: --details, or quicbench report runs/x".
func (r *compareRun) whereText() string {
	return fmt.Sprintf("%d loads in %.0f s; the tables: --details, or quicbench report %s", len(r.Trials), r.WallSeconds, r.Dir)
}

// printCompare prints the comparison in o.dir, the table or JSON, and
// returns the protocols without a verified load: those have no answer.
func printCompare(w io.Writer, o *compareOptions, res *experiment.RunResult) ([]factor.Protocol, error) {
	r, err := compareOf(o.dir, res, o.spec.Networks[0].RTT)
	if err != nil {
		return nil, err
	}
	var unanswered []factor.Protocol
	for _, p := range r.Summary.Protocols {
		if p.OK == 0 {
			unanswered = append(unanswered, p.Protocol)
		}
	}
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return unanswered, enc.Encode(struct {
			Spec string `json:"spec"`
			*compareRun
		}{string(o.spec.Source), r})
	}
	if o.details {
		fmt.Fprintln(w, header(o.spec, o.cpuNote))
		// The configured loss is the network's, also when no load was
		// recorded (an interrupted comparison).
		net := o.spec.Networks[0]
		r.Summary.Up.ConfiguredLossPct, r.Summary.Down.ConfiguredLossPct = 100*net.Up.MeanLoss(), 100*net.Down.MeanLoss()
		printSummary(w, r, net.RTT)
		fmt.Fprintln(w)
	}
	printShort(w, r)
	return unanswered, nil
}

// printShort writes the short answer, or, when no load was verified, why
// there is none.
func printShort(w io.Writer, r *compareRun) {
	if len(r.Short) > 0 {
		fmt.Fprintln(w, strings.Join(r.Short, "\n"))
		return
	}
	first := ""
	if len(r.Summary.Failed) > 0 {
		f := r.Summary.Failed[0]
		first = fmt.Sprintf(" (the first: round %d %s: %s)", f.Rep, f.Protocol, f.Error)
	}
	fmt.Fprintf(w, "No answer: %d of %d loads failed%s.\n  %s\n", len(r.Summary.Failed), len(r.Trials), first, r.whereText())
}

// discovers says whether some protocol's loads discovered h3.
func discovers(ps []analysis.ProtocolSummary) bool {
	return slices.ContainsFunc(ps, analysis.ProtocolSummary.Discovers)
}

// printSummary writes the comparison table, the link counters, the stack
// (a live page's origins and the round trip beyond the emulated rtt) and
// the netcheck.
func printSummary(w io.Writer, r *compareRun, rtt time.Duration) {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "protocol\tok\tfailed\tPLT median\tPLT mean\tPLT p25\tPLT p75\tDCL median\tTTFB median\tPLT/h2\tobserved\thandshakes\t")
	for _, p := range s.Protocols {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Protocol, p.OK, p.Failed,
			msText(p.PLT.Median), msText(p.PLT.Mean), msText(p.PLT.P25), msText(p.PLT.P75),
			msText(p.DCL.Median), msText(p.TTFB.Median), ratioText(p.RatioToH2), strings.Join(p.Observed, ","), handshakeText(p.Handshakes))
	}
	tw.Flush()
	fmt.Fprintln(w, "Times in ms from navigation start; PLT = loadEventEnd, DCL = DOMContentLoaded, TTFB = first byte of the document.")
	fmt.Fprintln(w, "Handshakes: the servers' connections in the verified loads, by kind (full, resumed, 0rtt, incomplete).")
	fmt.Fprintln(w, verifiedText(r))
	printPaints(w, s.Protocols)
	for _, t := range s.Failed {
		fmt.Fprintf(w, "failed: round %d %s: %s\n", t.Rep, t.Protocol, t.Error)
	}
	for _, sentence := range r.Answer {
		fmt.Fprintf(w, "Answer: %s\n", sentence)
	}
	if r.analysis != nil {
		report.WriteStopping(w, r.analysis)
		report.WriteParts(w, r.analysis)
	}
	if len(r.Replay) > 0 {
		report.WriteWork(w, r.Replay)
		if r.analysis != nil {
			report.WriteBroken(w, r.analysis.Unmatched)
		}
	}
	if len(r.CPU) > 0 {
		report.WriteCPU(w, r.CPU, factor.H3, factor.H2)
	}
	fmt.Fprintf(w, "link up:   %s\nlink down: %s\n", linkTotalsText(s.Up), linkTotalsText(s.Down))
	printTestbeds(w, r, rtt)
	fmt.Fprintf(w, "harness overhead per load: median %s ms beyond the PLT (browser start %s ms)\n",
		msText(s.Overhead.PerLoad.Median), msText(s.Overhead.BrowserStart.Median))
	fmt.Fprintf(w, "%d loads in %.1f s; every load is in %s (quicbench report %s, quicbench export %s)\n",
		s.Trials, r.WallSeconds, filepath.Join(r.Dir, results.FileName), r.Dir, r.Dir)
	if r.Netcheck != nil {
		printNetcheckSummary(w, r.Netcheck)
	}
}

// verifiedText says which loads the statistics hold: those the browser's
// and the servers' records verified, by the rule of r's kind of run (a
// live site, h3 discovered, or the requested protocol throughout).
func verifiedText(r *compareRun) string {
	switch {
	case len(r.Testbeds) > 0 && r.Testbeds[0].LiveOrigins != "":
		return "Only verified loads are in the statistics: a live site's requests to its pinned hosts that offer the protocol came over it in the browser's records, and the capture holds no packet of the other transport to them (the site's own servers count nothing for quicbench); requests to other hosts are not sent and are listed (--resolve HOST pins one)."
	case discovers(r.Summary.Protocols):
		return "Only verified loads are in the statistics: where h3 was offered (Alt-Svc), every object came over h3 or h2 and none over h3 before its host had offered it over TCP (a repeat visit knows from its first load), and the servers served at least what the browser reports over each; elsewhere every object came over the requested protocol, as seen by browser and server."
	}
	return "Only verified loads (every object over the requested protocol, as seen by browser and server) are in the statistics."
}

// printTestbeds writes each testbed's stacks as the servers' records show
// them, with their warnings, or a live site's origins and round trip (rtt
// emulated) and the hosts it did not pin.
func printTestbeds(w io.Writer, r *compareRun, rtt time.Duration) {
	for _, tb := range r.Testbeds {
		if tb.LiveOrigins != "" {
			fmt.Fprintln(w, liveText(tb, rtt))
			if hosts := unpinnedText(r.Trials); hosts != "" {
				fmt.Fprintln(w, hosts)
			}
			continue
		}
		fmt.Fprintln(w, stackText(tb, rtt))
		if tb.QUICServer != "" {
			fmt.Fprintln(w, quicStackText(tb, rtt))
		}
		for _, warning := range analysis.WireWarnings(tb, rtt) {
			fmt.Fprintln(w, "WARNING:", warning)
		}
	}
}

// liveText is a live page's origins with what each offered, and the
// network's round trip: rtt emulated plus the path's own beyond the
// emulator, and whether it changed during the run.
func liveText(tb results.Testbed, rtt time.Duration) string {
	line := "live site: " + tb.LiveOrigins
	if tb.BaseRTTMs == nil {
		return line + "; the round trip beyond the emulator was not measured"
	}
	notes := []string{"TCP handshakes"}
	changed := ""
	if after := tb.BaseRTTAfterMs; after != nil {
		notes = append(notes, fmt.Sprintf("%.1f ms after the loads", *after))
		if pathChanged(tb) {
			changed = "; " + pathChangedText + ", so the loads did not all cross the same network"
		}
	}
	if tb.BasePingMs != nil && tb.BaseLossPct != nil {
		notes = append(notes, fmt.Sprintf("ICMP echoes %.1f ms, %.0f %% lost", *tb.BasePingMs, *tb.BaseLossPct))
	} else {
		notes = append(notes, "no ICMP echo answered: the path's own loss is not known")
	}
	return fmt.Sprintf("%s; RTT %s emulated + %.1f ms measured to the origin (%s)%s", line, rtt, *tb.BaseRTTMs, strings.Join(notes, "; "), changed)
}

// pathChangedText says a live path's own round trip moved during a run.
var pathChangedText = fmt.Sprintf("the path changed during the run (by more than %.0f %%)", 100*live.PathTolerance)

// pathChanged reports whether tb's live path's own round trip, measured
// before and after the loads, moved by more than live.PathTolerance.
func pathChanged(tb results.Testbed) bool {
	if tb.BaseRTTMs == nil || tb.BaseRTTAfterMs == nil {
		return false
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return live.MedianChanged(ms(*tb.BaseRTTMs), ms(*tb.BaseRTTAfterMs), live.PathTolerance)
}

// unpinnedText says which hosts a live page asked for that the run did
// not pin, so that the browser did not send their requests, and how to
// load them; "" when there were none.
func unpinnedText(trials []results.TrialDetail) string {
	requests := map[string]int{}
	for _, t := range trials {
		for i, u := range t.Trial.UnmatchedURLs {
			if i >= len(t.Trial.UnmatchedCauses) || t.Trial.UnmatchedCauses[i] != results.CauseUnpinned {
				continue
			}
			_, target, _ := strings.Cut(u, " ")
			if parsed, err := url.Parse(target); err == nil && parsed.Hostname() != "" {
				requests[parsed.Hostname()]++
			}
		}
	}
	if len(requests) == 0 {
		return ""
	}
	var parts []string
	for _, h := range slices.Sorted(maps.Keys(requests)) {
		parts = append(parts, fmt.Sprintf("%s (%d)", shellWord(h), requests[h]))
	}
	first := shellWord(slices.Sorted(maps.Keys(requests))[0])
	return fmt.Sprintf("not sent: the requests (listed ones, over all loads) to hosts the run did not pin: %s; to load them too, add --resolve %s (this machine resolves it) or --resolve %s=ADDR, one per host",
		strings.Join(parts, ", "), first, first)
}

// plainWord is what a shell takes as one word without quotes.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9._:=/-]+$`)

// shellWord is s as a shell word in a command line quicbench suggests:
// as it is when plain, else quoted (a host name a page named, which may
// hold "$(…)").
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return shellQuote(s)
}

// stackText is the servers' TCP stack as read back.
func stackText(tb results.Testbed, rtt time.Duration) string {
	congestion := tb.Congestion
	if congestion == "" { // no TCP connection was read
		congestion = tb.RouteCongestion + " (the route's)"
	}
	return fmt.Sprintf("servers' TCP stack %s, read back from the kernel: %s, initcwnd %s, initrwnd %s, slow start after idle %s, tcp_wmem %s, pacing %v; %s",
		tb.Stack, congestion, windowText(tb.InitCwnd), windowText(tb.InitRwnd), tb.SlowStartAfterIdle, tb.TCPWmem, tb.Pacing,
		measuredText(tb.MeasuredTCPFlight, tb.MeasuredTCPSpreadMs, tb.MeasuredTCPPacing, tb.MeasuredTCPConnections, rtt)+
			backoffText(tb.MeasuredTCPBackoff, tb.MeasuredTCPBackoffs, appliedBackoff(factor.Backoff(tb.Congestion))))
}

// appliedBackoff is the share of its window a congestion control keeps on
// a loss as applied, in words: "0.7 applied", or "" where unknown.
func appliedBackoff(share float64, known bool) string {
	if !known {
		return ""
	}
	return fmt.Sprintf("%.1f applied", share)
}

// backoffText says how a transport's stack answered the calibration's
// loss on the wire: the share of its sending it kept, against the share
// of its window applied ("" where unknown).
func backoffText(kept *float64, conns int64, applied string) string {
	if kept == nil {
		return fmt.Sprintf("; its answer to a loss not measured (no calibration showed a loss alone, with two round trips of %v or more after it)", analysis.MinJudgedRTT)
	}
	of := fmt.Sprintf("median of %d connections", conns)
	if conns == 1 {
		of = "one connection"
	}
	if applied != "" {
		of = applied + "; " + of
	}
	return fmt.Sprintf("; after a loss it kept %.2f of its sending (%s)", *kept, of)
}

// measuredText says what the wire showed of a transport's stack: its
// first response flight and how it left, over how many connections, and
// whether it took longer than the network's round trip rtt (0: not
// known), which a window cannot.
func measuredText(flight, spreadMs *float64, pacing string, conns int64, rtt time.Duration) string {
	if flight == nil {
		return "measured on the wire: no connection sent a whole first window"
	}
	how := pacing
	if how == "" {
		how = fmt.Sprintf("its pacing not told (told only of windows of 8 packets or more, on round trips of %v or more)", analysis.MinJudgedRTT)
	}
	of := fmt.Sprintf("median of %d connections", conns)
	if conns == 1 {
		of = "one connection"
	}
	if !analysis.WithinRound(spreadMs, rtt) {
		how = fmt.Sprintf("longer than the %v round trip: several flights, not a window", rtt)
	}
	return fmt.Sprintf("measured on the wire: first flight of %.0f packets over %.1f ms, %s (%s)", *flight, *spreadMs, how, of)
}

// quicStackText is the h3 server's transport as it was recorded.
func quicStackText(tb results.Testbed, rtt time.Duration) string {
	text := fmt.Sprintf("h3 server %s: congestion control %s, initial window %d B, pacing %v, HyStart %v; %s", tb.QUICServer, tb.QUICCC, tb.QUICInitialWindowBytes, tb.QUICPacing, tb.QUICHyStart,
		measuredText(tb.MeasuredQUICFlight, tb.MeasuredQUICSpreadMs, tb.MeasuredQUICPacing, tb.MeasuredQUICConnections, rtt)+
			backoffText(tb.MeasuredQUICBackoff, tb.MeasuredQUICBackoffs, appliedBackoff(factor.QUICServer(tb.QUICServer).Backoff(factor.CC(tb.QUICCC)))))
	if q, err := factor.QUICOf(factor.QUICServer(tb.QUICServer), factor.CC(tb.QUICCC)); err == nil && q.Experimental() != "" {
		text += " (EXPERIMENTAL: " + q.Experimental() + ")"
	}
	return text
}

func linkTotalsText(l analysis.LinkTotals) string {
	lossPct := 0.0
	if l.Packets > 0 {
		lossPct = 100 * float64(l.Lost) / float64(l.Packets)
	}
	text := fmt.Sprintf("%d packets, %d lost at random (%.2f%%, configured %s), %d dropped by the full queue, peak queue %d B",
		l.Packets, l.Lost, lossPct, netconf.Percent(l.ConfiguredLossPct/100), l.QueueDrops, l.PeakQueueBytes)
	if l.PathLost > 0 {
		text += fmt.Sprintf(", %d lost on per-server paths", l.PathLost)
	}
	return text
}

// printPaints writes the paint timings and, for visual loads, the visual
// metrics per protocol (medians), when the loads have them.
func printPaints(w io.Writer, protos []analysis.ProtocolSummary) {
	paints, visual := false, false
	for _, p := range protos {
		paints = paints || p.FCP.N > 0
		visual = visual || p.SpeedIndex.N > 0
	}
	if !paints {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "protocol\tFCP median\tLCP median\t"
	if visual {
		header += "Speed Index median\tFVC median\tLVC median\t"
	}
	fmt.Fprintln(tw, header)
	for _, p := range protos {
		row := fmt.Sprintf("%s\t%s\t%s\t", p.Protocol, msText(p.FCP.Median), msText(p.LCP.Median))
		if visual {
			row += fmt.Sprintf("%s\t%s\t%s\t", msText(p.SpeedIndex.Median), msText(p.FVC.Median), msText(p.LVC.Median))
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintln(w, "FCP = First Contentful Paint, LCP = Largest Contentful Paint; Speed Index, First and Last Visual Change from the loads' frames (--visual).")
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratioText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// printNetcheckSummary says in one line whether the network was what it
// claimed, and lists the checks that failed.
func printNetcheckSummary(w io.Writer, r *netcheck.Report) {
	var failed []string
	passed := 0
	for _, l := range r.Lines {
		switch l.Result {
		case netcheck.Fail:
			failed = append(failed, fmt.Sprintf("%s: configured %s, measured %s", l.Check, l.Configured, l.Measured))
		case netcheck.Pass:
			passed++
		}
	}
	if len(failed) == 0 {
		info := ""
		if n := len(r.Lines) - passed; n > 0 {
			info = fmt.Sprintf(", %d measured for information only (nothing to judge them by)", n)
		}
		fmt.Fprintf(w, "netcheck: %d checks passed%s (RTT, loss, goodput, delay under load; the networks table of results.db)\n", passed, info)
		return
	}
	fmt.Fprintf(w, "netcheck: %d of %d checks FAILED, the network was not what was configured (the networks table of results.db):\n", len(failed), len(r.Lines))
	for _, f := range failed {
		fmt.Fprintln(w, "  "+f)
	}
}

func windowText(packets int64) string {
	if packets == 0 {
		return "default (10)"
	}
	return strconv.FormatInt(packets, 10)
}

// handshakeText lists handshake counts by kind in a fixed order, such as
// "full 12" or "0rtt 5, full 1"; "-" for none.
func handshakeText(counts map[string]int) string {
	var parts []string
	for _, kind := range server.HandshakeKinds() {
		if n := counts[kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", kind, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
