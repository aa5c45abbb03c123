package papers

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// Tally counts the rows by verdict, in words: "5 agree, 2 disagree, 1
// inconclusive".
func Tally(rows []Row) string {
	counts := map[Verdict]int{}
	for _, r := range rows {
		counts[r.Verdict]++
	}
	var parts []string
	for _, v := range []struct {
		verdict Verdict
		word    string
	}{{Agrees, "agree"}, {Disagrees, "disagree"}, {Inconclusive, "inconclusive"}, {NotMeasured, "not measured"}, {NotReproduced, "not reproduced"}} {
		if n := counts[v.verdict]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v.word))
		}
	}
	return strings.Join(parts, ", ")
}

// Ours writes our value with its interval at the paper's level, the one
// the verdict reads: "0.61 [0.55, 0.68]".
func (r Row) Ours() string {
	k := r.Claim.Stat.Kind
	if r.Verdict == NotMeasured || r.Verdict == NotReproduced {
		return "-"
	}
	return fmt.Sprintf("%s [%s, %s]", FormatValue(k, r.Value), FormatValue(k, r.LevelLo), FormatValue(k, r.LevelHi))
}

// Used says which loads the row read: "40 loads in 4 settings", for a
// share over pages recurring across networks "60 loads in 6 settings of 3
// pages, counting as 4.2 independent", and "… through decide round 2"
// where it read decide rounds' loads.
func (r Row) Used() string {
	if r.Loads == 0 {
		return "-"
	}
	settings := "settings"
	if r.Settings == 1 {
		settings = "setting"
	}
	used := fmt.Sprintf("%d loads in %d %s", r.Loads, r.Settings, settings)
	switch {
	case r.Networks > 0:
		used += fmt.Sprintf(" of %d pages in %d networks, the highest share's counting as %s independent", r.Pages, r.Networks, strconv.FormatFloat(r.Cases, 'f', 1, 64))
	case r.Pages > 0 && r.Pages < r.Settings:
		used += fmt.Sprintf(" of %d pages, counting as %s independent", r.Pages, strconv.FormatFloat(r.Cases, 'f', 1, 64))
	}
	if r.Round > 0 {
		used += fmt.Sprintf(" through decide round %d", r.Round)
	}
	return used
}

// Statistic says what the row computes, in words: "ratio of mean Speed
// Index, h3 against h2".
func (r Row) Statistic() string {
	c := r.Claim
	if c.NotReproduced != "" {
		return ""
	}
	label := c.Metric
	if m, ok := results.MetricNamed(c.Metric); ok {
		label = m.Label
	}
	what := fmt.Sprintf("%s of %s %s, %s", c.Stat.Kind, c.Location, label, c.Stat.Vary)
	if c.Stat.Kind == Interaction {
		what += fmt.Sprintf(", at %s over at %s", c.Stat.By.To, c.Stat.By.From)
	}
	if c.Stat.Kind == Widening {
		then := c.Stat.Then
		if m, ok := results.MetricNamed(then); ok {
			then = m.Label
		}
		what = fmt.Sprintf("%s's lead over %s in ms at %s over at %s (%s)", c.Stat.Vary.To, c.Stat.Vary.From, then, label, c.Location)
	}
	if c.Stat.InEachNetwork {
		what += ", in each network: the highest"
	}
	return what
}

// Covers names the networks, pages and other varied levels of the
// settings the row used.
func (r Row) Covers() string {
	var parts []string
	for _, f := range factor.Table() {
		if lv := r.Levels[f.ID]; len(lv) > 0 {
			parts = append(parts, f.Column+" "+strings.Join(lv, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// HoldsIf is the region where the claim holds, in words ("< 1",
// "0.9–1.1"); "" for a claim not reproduced.
func (r Row) HoldsIf() string {
	if r.Claim.NotReproduced != "" {
		return ""
	}
	return r.Claim.Region.Text(r.Claim.Stat.Kind)
}

// Level notes, when the paper's level is not 5 %, that the interval
// beside the verdict is at it, with the 95 % one: "at the paper's p <
// 0.01: a 99 % interval (95 %: [0.55, 0.68])"; "" otherwise.
func (r Row) Level() string {
	a := r.Claim.alpha()
	k := r.Claim.Stat.Kind
	switch {
	case r.Verdict == NotMeasured || r.Verdict == NotReproduced:
		return ""
	case r.Spent:
		paper := a / LookShare(r.Round)
		return fmt.Sprintf("at p < %.3g, look %d's part of the paper's p < %.3g (a sequential reproduction's looks share it): a %.4g %% interval (95 %%: [%s, %s])",
			a, r.Round+1, paper, 100*(1-a), FormatValue(k, r.Lo), FormatValue(k, r.Hi))
	case a == 0.05:
		return ""
	}
	return fmt.Sprintf("at the paper's p < %g: a %g %% interval (95 %%: [%s, %s])", a, 100*(1-a), FormatValue(k, r.Lo), FormatValue(k, r.Hi))
}

// ToDecide says what an inconclusive row lacks to be decided ("" for
// any other).
func (r Row) ToDecide() string {
	if r.Verdict != Inconclusive {
		return ""
	}
	return r.Need.Text()
}

// WriteTable prints a paper's claims beside our measurement: one row per
// claim, then each claim in words with what it used and what differs.
func WriteTable(w io.Writer, p Paper, rows []Row) {
	fmt.Fprintf(w, "%s, %q: %d claims: %s\n", p.Cite(), p.Title, len(rows), Tally(rows))
	fmt.Fprintf(w, "Paper's set-up: %s.\n\n", p.Setup)
	real := slices.ContainsFunc(rows, func(r Row) bool { return r.Real != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "claim\tverdict\tours [interval at the paper's level]\tpaper\tholds if\tloads used\tsource"
	if real {
		header = "claim\tgenerated pages\tours [interval at the paper's level]\treal pages\tours on real pages\tpaper\tholds if\tloads used\tsource"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", r.Claim.ID, r.Verdict, r.Ours())
		if real {
			realVerdict, realOurs := "-", "-"
			if r.Real != nil {
				realVerdict, realOurs = string(r.Real.Verdict), r.Real.Ours()
			}
			fmt.Fprintf(tw, "%s\t%s\t", realVerdict, realOurs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Claim.Figure, cmp.Or(r.HoldsIf(), "-"), r.Used(), r.Claim.Source)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if real {
		writeSites(w, rows)
	}
	for _, r := range rows {
		writeClaim(w, r)
	}
	if len(p.Gaps) > 0 {
		fmt.Fprintln(w, "Not reproduced:")
		for _, g := range p.Gaps {
			fmt.Fprintf(w, "  - %s: %s.\n", g.Condition, g.Reason)
		}
	}
}

// writeClaim prints one claim in words.
func writeClaim(w io.Writer, r Row) {
	c := r.Claim
	fmt.Fprintf(w, "%s  %s (%s).\n", c.ID, c.Text, c.Source)
	fmt.Fprintf(w, "    paper: %s\n", c.Reported)
	if c.NotReproduced != "" {
		fmt.Fprintf(w, "    not reproduced: %s\n\n", c.NotReproduced)
		return
	}
	fmt.Fprintf(w, "    ours:  %s, %s; holds if %s\n", r.Statistic(), r.Ours(), r.HoldsIf())
	if lv := r.Level(); lv != "" {
		fmt.Fprintf(w, "           %s\n", lv)
	}
	if d := r.ToDecide(); d != "" {
		fmt.Fprintf(w, "    to decide: %s\n", d)
	}
	if cov := r.Covers(); cov != "" {
		fmt.Fprintf(w, "    used:  %s (%s)\n", r.Used(), cov)
	}
	for _, mark := range c.Marks() {
		fmt.Fprintf(w, "    %s\n", mark)
	}
	if real := r.RealText(); real != "" {
		fmt.Fprintf(w, "    real pages: %s, %s\n", real, r.Real.Used())
	}
	if c.Arithmetic != "" {
		fmt.Fprintf(w, "    design arithmetic: %s\n", c.Arithmetic)
	}
	if why := r.WhyText(); why != "" {
		fmt.Fprintf(w, "    why:   %s\n", why)
	}
	if c.Differs != "" {
		fmt.Fprintf(w, "    differs: %s\n", c.Differs)
	}
	fmt.Fprintln(w)
}

// writeSites says which recorded sites the claims about pages read, and
// which they left out and why.
func writeSites(w io.Writer, rows []Row) {
	var used []string
	var left []LeftOut
	for _, r := range rows {
		if r.Real == nil {
			continue
		}
		for _, s := range r.Real.SitesUsed() {
			if !slices.Contains(used, s) {
				used = append(used, s)
			}
		}
		for _, l := range r.Real.LeftOut {
			if !slices.ContainsFunc(left, func(o LeftOut) bool { return o.Site == l.Site }) {
				left = append(left, l)
			}
		}
	}
	slices.Sort(used)
	fmt.Fprintf(w, "Real pages: %d recorded sites: %s.\n", len(used), strings.Join(used, ", "))
	if len(left) > 0 {
		fmt.Fprintf(w, "Left out of a claim on real pages: %s.\n", LeftOutText(left))
	}
	fmt.Fprintln(w)
}

// CSVRows are the rows as a table with a header, each with the trial IDs
// it used.
func CSVRows(rows []Row) [][]string {
	out := [][]string{{"paper", "claim", "text", "source", "paper_figure", "statistic", "holds_if", "value", "ci95_low", "ci95_high",
		"alpha", "level_low", "level_high", "verdict", "settings", "loads", "pages", "cases", "paper_n", "paper_unit", "to_decide", "covers", "differs", "arithmetic", "trials", "paper_scale_only", "beyond_paper_scale", "few_sites",
		"real_verdict", "real_value", "real_ci95_low", "real_ci95_high", "real_settings", "real_loads", "real_sites", "real_left_out", "real_trials", "why"}}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		c := r.Claim
		row := []string{r.Paper.ID, c.ID, c.Text, c.Source, c.Figure, r.Statistic(), r.HoldsIf(), num(r.Value), num(r.Lo), num(r.Hi),
			num(c.alpha()), num(r.LevelLo), num(r.LevelHi), string(r.Verdict), strconv.Itoa(r.Settings), strconv.Itoa(r.Loads),
			strconv.Itoa(r.Pages), num(r.Cases), strconv.Itoa(c.PaperN), c.PaperUnit, r.ToDecide(), r.Covers(), cmp.Or(c.NotReproduced, c.Differs), c.Arithmetic, strings.Join(r.Trials, " "), c.PaperScaleNote(), c.BeyondPaperScale, c.FewSites}
		if re := r.Real; re != nil {
			row = append(row, string(re.Verdict), num(re.Value), num(re.Lo), num(re.Hi), strconv.Itoa(re.Settings), strconv.Itoa(re.Loads),
				strings.Join(re.SitesUsed(), " "), LeftOutText(re.LeftOut), strings.Join(re.Trials, " "))
		} else {
			row = append(row, "", "", "", "", "", "", "", "", "")
		}
		out = append(out, append(row, r.WhyText()))
	}
	return out
}

// WriteList describes the papers and their claims (reproduce --list).
func WriteList(w io.Writer, ps []Paper) {
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		year := ""
		if p.Year == 0 || p.YearFrom != "its title page" {
			year = " (" + p.YearFrom + ")"
		}
		fmt.Fprintf(w, "%s  %s, %q", p.ID, p.Cite(), p.Title)
		if p.Venue != "" {
			fmt.Fprintf(w, ", %s", p.Venue)
		}
		fmt.Fprintf(w, ".%s\n", year)
		fmt.Fprintf(w, "    seed file %s; quick: %s; paper: %s\n", p.Seed, strings.Join(p.Specs[Quick], ", "), strings.Join(p.Specs[Full], ", "))
		if len(p.RealPages) > 0 {
			fmt.Fprintf(w, "    with --sites, on recorded sites: %s\n", strings.TrimSuffix(p.RealPages[Quick], ".yaml")+RealRunSuffix)
		}
		for _, c := range p.Claims {
			fmt.Fprintf(w, "    %s  %s (%s; paper: %s)\n", c.ID, c.Text, c.Source, c.Figure)
			if c.Pages {
				fmt.Fprintln(w, "        about pages: also evaluated on recorded sites (reproduce --sites)")
			}
			switch {
			case c.PaperN > 0 && c.Stat.InEachNetwork:
				fmt.Fprintf(w, "        counts %s in each network: the paper's highest, %s of %d %s, of its %d networks; ours the highest network's, every network's interval adjusted over the networks\n", c.PaperUnit, FormatValue(Share, c.PaperValue), c.PaperN, c.PaperUnit, c.PaperNetworks)
			case c.PaperN > 0:
				fmt.Fprintf(w, "        counts %s: the paper's %s of %d %s; ours a page in several networks counted as one cluster\n", c.PaperUnit, FormatValue(Share, c.PaperValue), c.PaperN, c.PaperUnit)
			}
			for _, mark := range c.Marks() {
				fmt.Fprintf(w, "        %s\n", mark)
			}
		}
		for _, g := range p.Gaps {
			fmt.Fprintf(w, "    not reproduced: %s\n", g.Condition)
		}
	}
}

// IDs lists the papers' IDs.
func IDs() []string {
	var ids []string
	for _, p := range All() {
		ids = append(ids, p.ID)
	}
	return ids
}
