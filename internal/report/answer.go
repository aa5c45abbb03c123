package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/stats"
)

// maxAnswerSettings is the most settings the answer gives a sentence
// each; a larger run's answer counts the verdicts instead.
const maxAnswerSettings = 8

// Answer is the report's answer in words, its first lines: per setting
// (up to maxAnswerSettings, else a count of the verdicts), whether the
// compared protocol was faster, slower or not different from the
// baseline and from the run's other protocols, by how much, with the
// interval and the test, and why (the parts of the loads' time that
// differed; the lower bound is a column of the parts' table).
func Answer(a *analysis.Analysis) []string {
	if len(a.Comparisons) == 0 {
		return nil
	}
	if len(a.Comparisons) > maxAnswerSettings {
		return []string{tally(a)}
	}
	v := analysis.VariedIn(a.Comparisons)
	var out []string
	for _, c := range a.Comparisons {
		words := []string{fmt.Sprintf("%s, %s%s: %s", v.Label(c.Setting), c.Setting.Page(), clientCPUWords(c.Setting, v), against(c, true))}
		for _, p := range a.Pairs {
			if p.Setting == c.Setting && p.Compare.Protocol == a.Options.Compare {
				words = append(words, against(p, false))
			}
		}
		sentence := strings.Join(words, "; ") + "."
		if su, ok := useOf(a, c.Setting); ok {
			words := useWords(su)
			sentence += " " + strings.ToUpper(words[:1]) + words[1:] + "."
		}
		if why := cmp.Or(whyWords(c), lossShare(c)); why != "" {
			sentence += " " + why
		}
		for _, caveat := range []string{cpuBoundWords(a, c.Setting), failedWords(a, c), networkWords(a, c.Setting), brokenWords(a, c.Setting.Page())} {
			if caveat != "" {
				sentence += " " + caveat
			}
		}
		out = append(out, sentence)
	}
	return out
}

// clientCPUWords names the client's CPU of setting s when the label does
// not (v varies it): ", on 1 client core" or ", with unlimited client
// CPU" for a browser; nothing for a run without the factor's column.
func clientCPUWords(s analysis.Setting, v analysis.Varied) string {
	level := s.Of(factor.IDClientCPU)
	if level == "" || slices.ContainsFunc(v, func(d analysis.Dimension) bool { return d.ID == factor.IDClientCPU }) {
		return ""
	}
	if factor.ClientCPU(level).Cores() > 0 {
		return ", on " + factor.Of(factor.IDClientCPU).Words(level)
	}
	return ", with " + factor.Of(factor.IDClientCPU).Words(level)
}

// cpuBoundWords says, when some of setting s's loads were CPU-bound,
// that its comparison is partly the machine's.
func cpuBoundWords(a *analysis.Analysis, s analysis.Setting) string {
	for _, sc := range a.CPU {
		if sc.Setting != s || sc.Bound() == 0 {
			continue
		}
		loads := 0
		for _, p := range sc.Protocols {
			loads += p.Loads
		}
		return fmt.Sprintf("But %d of its %d loads were CPU-bound (%s): the comparison is partly this machine's CPU, not only the network.", sc.Bound(), loads, boundByText(sc))
	}
	return ""
}

// failedWords says, when some of c's loads failed, how many of each
// protocol's, and that the statistics are of the others.
func failedWords(a *analysis.Analysis, c analysis.Comparison) string {
	samples := []analysis.Sample{c.Baseline, c.Compare}
	for _, p := range a.Pairs {
		if p.Setting == c.Setting && !slices.ContainsFunc(samples, func(s analysis.Sample) bool { return s.Protocol == p.Baseline.Protocol }) {
			samples = append(samples, p.Baseline)
		}
	}
	failed, loads := 0, 0
	var parts []string
	for _, s := range samples {
		loads += len(s.Values) + s.Failed
		if s.Failed > 0 {
			failed += s.Failed
			parts = append(parts, fmt.Sprintf("%s %d", s.Protocol, s.Failed))
		}
	}
	if failed == 0 {
		return ""
	}
	return fmt.Sprintf("%d of its %d loads failed (%s): the medians are of the loads that completed, so a protocol that fails more often is worse than its median says.",
		failed, loads, strings.Join(parts, ", "))
}

// brokenWords says, when the verified loads of page (a recording) showed
// broken images, how many distinct ones and why: a load that shows fewer
// images than recorded is less of the recorded page.
func brokenWords(a *analysis.Analysis, page string) string {
	for _, s := range a.Unmatched {
		if s.Page != page || len(s.Broken) == 0 {
			continue
		}
		causes := map[string]int{}
		for _, b := range s.Broken {
			causes[b.Cause]++
		}
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(causes)) {
			parts = append(parts, fmt.Sprintf("%d %s", causes[c], c))
		}
		return fmt.Sprintf("Its verified loads showed %d distinct broken images (%s), listed with the replay below.", len(s.Broken), strings.Join(parts, ", "))
	}
	return ""
}

// networkWords says, when setting s's network failed its netcheck twice,
// which checks failed and by how much: the comparison is of the network
// as it was, not as configured.
func networkWords(a *analysis.Analysis, s analysis.Setting) string {
	for _, cal := range a.Calibration {
		if cal.Network != s.Network() || len(cal.Failed()) == 0 {
			continue
		}
		var checks []string
		for _, l := range cal.Failed() {
			checks = append(checks, fmt.Sprintf("%s configured %s, measured %s", l.Check, l.Configured, l.Measured))
		}
		return fmt.Sprintf("Its network was not what was configured (netcheck failed, also when measured again: %s): the comparison is of the network as measured.", strings.Join(checks, "; "))
	}
	return ""
}

// boundByText is who made sc's loads CPU-bound, all protocols together:
// "client 3, machine 1".
func boundByText(sc analysis.SettingCPU) string {
	count := map[string]int{}
	for _, p := range sc.Protocols {
		for _, part := range strings.Split(p.BoundBy, ", ") {
			who, n, ok := strings.Cut(part, " ")
			if k, err := strconv.Atoi(n); ok && err == nil {
				count[who] += k
			}
		}
	}
	var parts []string
	for _, who := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("by the %s in %d", who, count[who]))
	}
	return strings.Join(parts, ", ")
}

// against says in words how c's compared protocol did against its
// baseline, by the verdict's estimate (the Hodges–Lehmann ratio its
// interval surrounds, not the ratio of medians, which a bimodal sample
// can put far from it); full adds the medians. The verdict's test, its ratio and the
// interval at the verdict's level go together, so that an interval that
// excludes 1 never stands beside "not measurably different".
func against(c analysis.Comparison, full bool) string {
	b, q := c.Baseline.Protocol, c.Compare.Protocol
	interval := fmt.Sprintf("%s CI %s–%s", levelText(), num(c.RatioLo, 3), num(c.RatioHi, 3))
	if !c.IntervalOK {
		interval = "too few loads for a " + levelText() + " interval"
	}
	stat := fmt.Sprintf("ratio of medians %s; Hodges–Lehmann %s, %s; %s", num(c.Ratio, 3), num(c.Estimate, 3), interval, fixedTestWords(c))
	if c.Stopping != nil {
		stat = fmt.Sprintf("ratio of medians %s; %s", num(c.Ratio, 3), sequentialWords(c))
	}
	if full {
		stat = fmt.Sprintf("median %s against %s ms; ", num(c.Compare.Summary.Median, 1), num(c.Baseline.Summary.Median, 1)) + stat
	}
	switch c.Verdict {
	case stats.Faster:
		return fmt.Sprintf("%s was faster than %s by %s (%s)", q, b, percent(1-c.Estimate), stat)
	case stats.Slower:
		return fmt.Sprintf("%s was slower than %s by %s (%s)", q, b, percent(c.Estimate-1), stat)
	case stats.NoDifference:
		return fmt.Sprintf("%s was not measurably different from %s at α = %g (%s)%s", q, b, stats.Alpha, stat, roundsWords(c))
	}
	return fmt.Sprintf("%s and %s had too few loads to tell apart at α = %g%s (%s)", q, b, stats.Alpha, needWords(c), stat)
}

// fixedTestWords is the verdict's test and its p: "Wilcoxon signed-rank
// over 10 pairs p = 0.002".
func fixedTestWords(c analysis.Comparison) string {
	p := "= " + pval(c.Test)
	if after, ok := strings.CutPrefix(p, "= <"); ok {
		p = "< " + after
	}
	test := testName(c)
	if c.Paired != nil {
		test += fmt.Sprintf(" over %d pairs", c.Paired.Pairs)
	}
	return test + " p " + p
}

// testName is the verdict's rank test: Wilcoxon signed-rank over pairs,
// else Mann–Whitney.
func testName(c analysis.Comparison) string {
	if c.Paired != nil {
		return "Wilcoxon signed-rank"
	}
	return "Mann–Whitney"
}

// sequentialWords is the until rule's look the verdict is from, with its
// repeated interval: "the until rule's sequential Wilcoxon signed-rank
// test at its look after 12 repetitions: Hodges–Lehmann 0.781, 99 %
// repeated CI 0.700–0.850 (99.93 % at this look; the looks' intervals
// hold 99 % together)".
func sequentialWords(c analysis.Comparison) string {
	st := c.Stopping
	test := testName(c)
	if st.Looked == 0 {
		return fmt.Sprintf("the until rule's sequential %s test looks first after %d repetitions", test, st.Min)
	}
	interval := fmt.Sprintf("%s repeated CI %s–%s", levelText(), num(c.RatioLo, 3), num(c.RatioHi, 3))
	if !c.IntervalOK {
		interval = "too few loads for an interval at this look's level"
	}
	return fmt.Sprintf("the until rule's sequential %s test at its look after %d repetitions: Hodges–Lehmann %s, %s (%s at this look; the looks' intervals hold %s together)",
		test, st.Looked, num(c.Estimate, 3), interval, lookLevelText(st.Look.Level), levelText())
}

// lookLevelText is a look's level in percent with the digits that tell it
// from 100: "99.93 %".
func lookLevelText(level float64) string {
	digits := 2
	for d := 1 - level; d > 0 && d < 0.001 && digits < 6; d *= 10 {
		digits++
	}
	return strconv.FormatFloat(100*level, 'f', digits, 64) + " %"
}

// roundsWords says, for no measurable difference, how many rounds the
// spread these loads show would need to find the estimated ratio: ";
// at this spread (a fixed test, 80 % power) about 23 rounds would find a
// ratio of 0.931; this run has 10".
func roundsWords(c analysis.Comparison) string {
	n := c.RoundsNeeded
	if n == 0 {
		return ""
	}
	had, unit := len(c.Compare.Values), "loads of each"
	if c.Paired != nil {
		had, unit = c.Paired.Pairs, "rounds"
	}
	if n > analysis.MaxRoundsNeeded {
		return fmt.Sprintf("; the ratio, %s, is too close to 1 for the spread of these loads: more than %d %s would be needed to tell", num(c.Estimate, 3), analysis.MaxRoundsNeeded, unit)
	}
	return fmt.Sprintf("; at the spread of these loads a run of about %d %s would find a ratio of %s with %.0f %% probability (a fixed test at α = %g; this run has %d)",
		n, unit, num(c.Estimate, 3), 100*analysis.RoundsPower, stats.Alpha, had)
}

// needWords says how many loads c's test needs to reach α, where it has
// too few: ": the paired test needs 8 rounds, this run has 5".
func needWords(c analysis.Comparison) string {
	switch {
	case c.NeedLoads == 0:
		return ""
	case c.Stopping != nil && c.Stopping.Looked == 0:
		return fmt.Sprintf(": the until rule looks first after %d repetitions", c.Stopping.Min)
	case c.Stopping != nil:
		return fmt.Sprintf(": its look after %d repetitions needs %d to reach %s", c.Stopping.Looked, c.NeedLoads, lookLevelText(c.Stopping.Look.Level))
	case c.Paired != nil:
		return fmt.Sprintf(": the paired test needs %d rounds, this run has %d", c.NeedLoads, c.Paired.Pairs)
	}
	return fmt.Sprintf(": Mann–Whitney needs %d loads of each, this run has %d and %d", c.NeedLoads, len(c.Compare.Values), len(c.Baseline.Values))
}

// lossShare says how the protocols' waits for lost data differ, when every
// verified load of both recorded one and they differ measurably
// (Mann–Whitney U at stats.Alpha): the medians, and of the baseline's,
// the time its bytes were held behind a missing TCP segment.
func lossShare(c analysis.Comparison) string {
	b, q := c.Baseline, c.Compare
	if len(b.LossWaits) == 0 || len(b.LossWaits) != len(b.Values) || len(q.LossWaits) != len(q.Values) {
		return ""
	}
	test := stats.MannWhitney(q.LossWaits, b.LossWaits)
	if !test.OK || test.P >= stats.Alpha {
		return ""
	}
	mq, mb := stats.Median(q.LossWaits), stats.Median(b.LossWaits)
	words := fmt.Sprintf("Waits for lost data differed: %s ms for %s against %s ms for %s (medians, %s ms; Mann–Whitney p = %s)",
		num(mq, 1), q.Protocol, num(mb, 1), b.Protocol, signed(mq-mb, 1), pval(test))
	if len(b.Held) == len(b.Values) && stats.Median(b.Held) > 0 {
		words += fmt.Sprintf("; %s's bytes waited behind a missing TCP segment for %s ms (median): head-of-line blocking where streams share the connection", b.Protocol, num(stats.Median(b.Held), 1))
	}
	return words + "."
}

// verdictCounts counts a's comparisons by verdict.
func verdictCounts(a *analysis.Analysis) map[stats.Verdict]int {
	count := map[stats.Verdict]int{}
	for _, c := range a.Comparisons {
		count[c.Verdict]++
	}
	return count
}

// tally counts the verdicts of a run of many settings.
func tally(a *analysis.Analysis) string {
	count, o := verdictCounts(a), a.Options
	return fmt.Sprintf("Over %d settings, %s was faster than %s in %d, slower in %d, not measurably different in %d, and had too few loads to tell in %d (Mann–Whitney U, α = %g); the tables below give each setting.",
		len(a.Comparisons), o.Compare, o.Baseline, count[stats.Faster], count[stats.Slower], count[stats.NoDifference], count[stats.TooFewSamples], stats.Alpha)
}
