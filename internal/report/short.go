package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// ShortWidth is the widest line of the short answer, in columns.
const ShortWidth = 99

// ShortAnswer is the answer a person reads first, a few lines under
// ShortWidth columns: the verdict of each protocol against the compared
// one in plain words, with the verdict's estimate and its interval (the
// one headline number); for a run of one setting, why in one sentence (the
// parts that carry the difference, in ms and round trips); the warnings
// that change how far to trust it, with extra ones (the stacks' on the
// wire); and where, the line saying where the rest is. Nil for a run
// without a comparison.
func ShortAnswer(a *analysis.Analysis, extra []string, where string) []string {
	var out []string
	for _, l := range shortLines(a, extra, where) {
		out = append(out, wrap(l, ShortWidth)...)
	}
	return out
}

// shortLines are ShortAnswer's lines before wrapping: its first line,
// then the rest indented by two spaces.
func shortLines(a *analysis.Analysis, extra []string, where string) []string {
	if len(a.Comparisons) == 0 {
		return nil
	}
	var lines []string
	switch {
	case len(a.Comparisons) == 1:
		lines = shortOfOne(a, a.Comparisons[0])
	case len(a.Comparisons) > maxAnswerSettings:
		lines = []string{"Answer: " + shortTally(a)}
	default:
		lines = []string{"Answer:"}
		v := analysis.VariedIn(a.Comparisons)
		for _, c := range a.Comparisons {
			lines = append(lines, "  "+v.Label(c.Setting)+", "+c.Setting.Page()+": "+shortVerdict(c))
		}
	}
	for _, w := range append(shortWarnings(a), extra...) {
		lines = append(lines, "  Warning: "+w)
	}
	if where != "" {
		lines = append(lines, "  "+where)
	}
	return lines
}

// shortOfOne is the answer of a run of one setting: its verdicts and why.
func shortOfOne(a *analysis.Analysis, c analysis.Comparison) []string {
	v := analysis.VariedIn(a.Comparisons)
	cpu := ""
	if level := c.Setting.Of(factor.IDClientCPU); level != "" && factor.ClientCPU(level).Cores() > 0 {
		cpu = clientCPUWords(c.Setting, v)
	}
	lines := []string{fmt.Sprintf("Answer for %s over %s%s:", c.Setting.Page(), v.Label(c.Setting), cpu)}
	lines = append(lines, "  "+shortVerdict(c))
	for _, p := range a.Pairs {
		if p.Setting == c.Setting && p.Compare.Protocol == a.Options.Compare {
			lines = append(lines, "  "+shortVerdict(p))
		}
	}
	if why := shortWhy(c); why != "" {
		lines = append(lines, "  "+why)
	}
	return lines
}

// shortVerdict is c's verdict with its estimate and interval: "h3 was 28
// % faster than h2 (99 % CI 14–52 %), decided after 11 rounds."
func shortVerdict(c analysis.Comparison) string {
	b, q := c.Baseline.Protocol, c.Compare.Protocol
	interval := fmt.Sprintf("%s CI %s–%s", levelText(), num(c.RatioLo, 2), num(c.RatioHi, 2))
	var words string
	switch c.Verdict {
	case stats.Faster:
		interval = fmt.Sprintf("%s CI %s %%", levelText(), pctRange(1-c.RatioHi, 1-c.RatioLo))
		words = fmt.Sprintf("%s was %s %% faster than %s", q, pct(1-c.Estimate), b)
	case stats.Slower:
		interval = fmt.Sprintf("%s CI %s %%", levelText(), pctRange(c.RatioLo-1, c.RatioHi-1))
		words = fmt.Sprintf("%s was %s %% slower than %s", q, pct(c.Estimate-1), b)
	case stats.NoDifference:
		words = fmt.Sprintf("%s and %s did not differ measurably (%s/%s %s)", q, b, q, b, num(c.Estimate, 2))
	default:
		need := strings.TrimPrefix(needWords(c), ": ")
		if need != "" {
			need = " (" + need + ")"
		}
		return fmt.Sprintf("%s and %s: too few loads to tell apart%s.", q, b, need)
	}
	if !c.IntervalOK {
		interval = "too few loads for a " + levelText() + " interval"
	}
	if c.Verdict == stats.NoDifference {
		return fmt.Sprintf("%s, %s%s.", words, interval, roundsOf(c))
	}
	return fmt.Sprintf("%s (%s)%s.", words, interval, roundsOf(c))
}

// roundsOf says how many loads the verdict is of: ", decided after 11
// rounds" under an until rule, ", over 10 rounds" for pairs, ", over 9
// and 10 loads" otherwise.
func roundsOf(c analysis.Comparison) string {
	switch {
	case c.Stopping != nil && c.Stopping.Looked > 0 && (c.Verdict == stats.Faster || c.Verdict == stats.Slower):
		return fmt.Sprintf(", decided after %d rounds", c.Stopping.Looked)
	case c.Stopping != nil && c.Stopping.Looked > 0:
		return fmt.Sprintf(", after %d rounds", c.Stopping.Looked)
	case c.Paired != nil:
		return fmt.Sprintf(", over %d rounds", c.Paired.Pairs)
	}
	return fmt.Sprintf(", over %d and %d loads", len(c.Compare.Values), len(c.Baseline.Values))
}

// pct is a fraction in percent, to the whole percent from 10 % on and to
// a tenth below.
func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if math.Abs(v) < 0.1 {
		return strconv.FormatFloat(100*v, 'f', 1, 64)
	}
	return strconv.FormatFloat(100*v, 'f', 0, 64)
}

// pctRange is an interval of fractions in percent, both ends to the
// precision pct gives the larger: "7–46", "2.5–8.1".
func pctRange(lo, hi float64) string {
	if math.Max(math.Abs(lo), math.Abs(hi)) >= 0.1 {
		return fmt.Sprintf("%.0f–%.0f", 100*lo, 100*hi)
	}
	return fmt.Sprintf("%.1f–%.1f", 100*lo, 100*hi)
}

// shortWhy is why c came out as it did, in one sentence: the parts that
// carry the difference (analysis.Why.Carrying), in ms and round trips;
// "" without a breakdown or with too few loads for the parts' intervals.
func shortWhy(c analysis.Comparison) string {
	w := c.Why
	if w == nil || !w.Total.Known || !w.Total.Interval {
		return ""
	}
	carrying := w.Carrying()
	if len(carrying) == 0 {
		return fmt.Sprintf("Why: no part of the loads' time differed measurably on its own (%s against %s, %s intervals).",
			c.Compare.Protocol, c.Baseline.Protocol, explainLevelText())
	}
	var parts []string
	for _, i := range carrying[:min(3, len(carrying))] {
		parts = append(parts, partPhrase(w, i))
	}
	return fmt.Sprintf("Why: %s spent %s.", c.Compare.Protocol, joinAnd(parts))
}

// partPhrase says how part i differed: "one round trip less in handshakes
// (−101 ms)", "3.5 fewer round trips in flight (−348 ms)", "less time
// recovering from losses (−57 ms)".
func partPhrase(w *analysis.Why, i int) string {
	d := w.Parts[i].Diff
	ms := fmt.Sprintf("(%s ms)", signed(d, 0))
	rtts, known := w.RoundTrips(math.Abs(d))
	switch {
	case known && i == results.PartHandshake:
		return fmt.Sprintf("%s %s in handshakes %s", roundTripsWords(rtts), map[bool]string{true: "more", false: "less"}[d > 0], ms)
	case known && i == results.PartRoundTrips:
		return fmt.Sprintf("%s %s round trips in flight %s", strconv.FormatFloat(rtts, 'f', 1, 64), map[bool]string{true: "more", false: "fewer"}[d > 0], ms)
	}
	where := map[int]string{
		results.PartLink: "at the bottleneck link", results.PartLoss: "recovering from losses",
		results.PartHandshake: "in handshakes", results.PartRoundTrips: "waiting on round trips in flight",
		results.PartServer: "waiting for the servers", results.PartClient: "in the client",
	}[i]
	return fmt.Sprintf("%s time %s %s", map[bool]string{true: "more", false: "less"}[d > 0], where, ms)
}

// roundTripsWords is a count of round trips in words: "one round trip",
// "1.5 round trips".
func roundTripsWords(n float64) string {
	if math.Abs(n-1) < 0.05 {
		return "one round trip"
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + " round trips"
}

// joinAnd joins words with commas and a last "and".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// explainLevelText is analysis.ExplainLevel in percent: "95 %".
func explainLevelText() string {
	return strconv.FormatFloat(100*analysis.ExplainLevel, 'g', -1, 64) + " %"
}

// shortTally counts the verdicts of a run of many settings in a line.
func shortTally(a *analysis.Analysis) string {
	count, o := verdictCounts(a), a.Options
	return fmt.Sprintf("over %d settings %s was faster than %s in %d, slower in %d, not measurably different in %d, too few loads in %d.",
		len(a.Comparisons), o.Compare, o.Baseline, count[stats.Faster], count[stats.Slower], count[stats.NoDifference], count[stats.TooFewSamples])
}

// shortWarnings are what changes how far to trust the answer, a short
// sentence each: CPU-bound loads, failed loads, networks that failed
// their check, stacks that did not do on the wire what was applied,
// broken images of a recorded page.
func shortWarnings(a *analysis.Analysis) []string {
	var out []string
	bound, loads := 0, 0
	for _, sc := range a.CPU {
		bound += sc.Bound()
		for _, p := range sc.Protocols {
			loads += p.Loads
		}
	}
	if bound > 0 {
		out = append(out, fmt.Sprintf("%d of %d loads were CPU-bound: the answer is partly this machine's CPU.", bound, loads))
	}
	if a.Failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d loads failed or were not verified; the numbers are of the others.", a.Failed, a.Trials))
	}
	for _, cal := range a.Calibration {
		failed := cal.Failed()
		if len(failed) == 0 {
			continue
		}
		var checks []string
		for _, l := range failed {
			checks = append(checks, l.Check)
		}
		network := "the network"
		if len(a.Calibration) > 1 {
			network = "network " + cal.Network
		}
		out = append(out, fmt.Sprintf("%s failed its check twice (%s): the answer is of the network as measured (--details).", network, strings.Join(checks, "; ")))
	}
	for _, sw := range a.Stacks {
		out = append(out, sw.Warnings...)
	}
	broken := 0
	for _, s := range a.Unmatched {
		broken += len(s.Broken)
	}
	if broken > 0 {
		out = append(out, fmt.Sprintf("the verified loads showed %d distinct broken images.", broken))
	}
	return out
}

// wrap breaks line at spaces into lines of at most width columns, the
// later ones indented under the first's text.
func wrap(line string, width int) []string {
	indent := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " "))+2)
	var out []string
	for utf8.RuneCountInString(line) > width {
		cut := lastSpaceWithin(line, width)
		if cut <= len(indent) {
			break
		}
		out = append(out, line[:cut])
		line = indent + strings.TrimLeft(line[cut:], " ")
	}
	return append(out, line)
}

// lastSpaceWithin is the byte index of the last space of s within its
// first width runes; 0 for none.
func lastSpaceWithin(s string, width int) int {
	cut, runes := 0, 0
	for i, r := range s {
		if runes > width {
			break
		}
		if r == ' ' {
			cut = i
		}
		runes++
	}
	return cut
}
