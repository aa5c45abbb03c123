package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/stats"
)

// Page is what the HTML report shows besides the analysis.
type Page struct {
	Name  string            // the run's name
	Facts map[string]string // versions and host, from the results database
	// FirstNetchecks are the networks' first netchecks that failed (each
	// was measured again; the analysis's Calibration is the second).
	FirstNetchecks []analysis.Calibration
	// Loads are the run's loads by setting (none listed beyond
	// MaxListedLoads), LoadCount how many the run has, and RunDir the
	// run directory their files' paths are in ("": no links to them).
	Loads     []analysis.SettingLoads
	LoadCount int
	RunDir    string
	// Claims are the claims of the paper whose spec the run ran, set
	// beside its loads and those of its reproduction's other runs, as
	// package reproduce evaluated them; nil for a run of no paper.
	Claims *Claims
}

// WriteFiles writes dir/index.html (self-contained: figures inline as SVG,
// no network needed), each figure as SVG and PNG, and the tables as CSV.
// It returns the paths written.
func WriteFiles(dir string, pg Page, a *analysis.Analysis, figs []Figure) ([]string, error) {
	var written []string
	write := func(name string, data []byte) error {
		path := filepath.Join(dir, name)
		if err := safefs.WriteFile(dir, name, data, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		written = append(written, path)
		return nil
	}
	for _, f := range figs {
		if err := write(f.Name+".svg", f.SVG); err != nil {
			return nil, err
		}
		if err := write(f.Name+".png", f.PNG); err != nil {
			return nil, err
		}
	}
	all := tables(a, pg.Claims)
	for _, name := range slices.Sorted(maps.Keys(all)) { // the manifest in the same order every time
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.WriteAll(noFormulas(all[name]))
		if err := write(name+".csv", buf.Bytes()); err != nil {
			return nil, err
		}
	}
	html, err := renderHTML(dir, pg, a, figs)
	if err != nil {
		return nil, err
	}
	if err := write("index.html", html); err != nil {
		return nil, err
	}
	if err := removeStaleFiles(dir, written); err != nil {
		return nil, err
	}
	return written, nil
}

// ManifestName is the file in a report directory that lists, a name a
// line, the files the report wrote there: the next report of the directory
// removes those of them it does not write again, and nothing else.
const ManifestName = "report-files.txt"

// maxManifest bounds the manifest read back (a report writes a few
// hundred names).
const maxManifest = 1 << 20

// removeStaleFiles removes the files an earlier report listed in dir's
// manifest that this one did not write (a run's shape decides its
// figures and tables), then lists what this one wrote. Only plain names
// are taken from the manifest, and each is removed without following a
// link; a user's own files, whatever their names, are never listed.
func removeStaleFiles(dir string, written []string) error {
	now := make([]string, len(written))
	for i, path := range written {
		now[i] = filepath.Base(path)
	}
	if old, err := safefs.ReadIn(dir, ManifestName, maxManifest); err == nil {
		for _, name := range strings.Split(string(old), "\n") {
			if name == "" || name == ManifestName || strings.ContainsRune(name, '/') || slices.Contains(now, name) {
				continue
			}
			if err := safefs.RemoveIn(dir, name); err != nil {
				return fmt.Errorf("report: an earlier report's file: %w", err)
			}
		}
	}
	if err := safefs.WriteFile(dir, ManifestName, []byte(strings.Join(now, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// noFormulas makes every cell that a spreadsheet would take for a formula
// (text starting with =, +, -, @, a tab or a carriage return, such as a
// network named =HYPERLINK(…)) start with an apostrophe, which makes it
// text; numbers, negative ones too, stay as they are.
func noFormulas(rows [][]string) [][]string {
	for _, row := range rows {
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					row[i] = "'" + cell
				}
			}
		}
	}
	return rows
}

// settingHeader and settingCells are every factor of a setting, for the
// CSV tables.
func settingHeader() []string {
	out := []string{"network", "page"}
	for _, d := range analysis.Dimensions() {
		out = append(out, d.Name())
	}
	return out
}

func settingCells(s analysis.Setting) []string {
	out := []string{s.Network(), s.Page()}
	for _, d := range analysis.Dimensions() {
		out = append(out, d.Value(s))
	}
	return out
}

// tables are the analysis and the claims as CSV rows, with headers.
func tables(a *analysis.Analysis, claims *Claims) map[string][][]string {
	b, c := string(a.Options.Baseline), string(a.Options.Compare)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	cmps := [][]string{append(settingHeader(), "n_"+b, "n_"+c, "failed_"+b, "failed_"+c, "mean_"+b, "mean_"+c, "median_"+b, "median_"+c,
		"sd_"+b, "sd_"+c, "p25_"+c, "p75_"+c, "median_ci99_lo_"+c, "median_ci99_hi_"+c, "diff_ms", "ratio", "gain", "p_mann_whitney", "p_welch", "verdict",
		"verdict_ratio", "verdict_ci99_lo", "verdict_ci99_hi", "verdict_test", "p_verdict", "pairs", "paired_ratio", "paired_ci99_lo", "paired_ci99_hi", "p_wilcoxon",
		"bound_median_"+b, "bound_median_"+c, "rounds_needed", "trials_used", "stopped_after_rep", "stop_reason")}
	for _, x := range a.Comparisons {
		row := append(settingCells(x.Setting),
			strconv.Itoa(len(x.Baseline.Values)), strconv.Itoa(len(x.Compare.Values)), strconv.Itoa(x.Baseline.Failed), strconv.Itoa(x.Compare.Failed),
			f(x.Baseline.Summary.Mean), f(x.Compare.Summary.Mean), f(x.Baseline.Summary.Median), f(x.Compare.Summary.Median),
			f(x.Baseline.Summary.StdDev), f(x.Compare.Summary.StdDev), f(x.Compare.Summary.P25), f(x.Compare.Summary.P75),
			f(x.Compare.MedianCILo), f(x.Compare.MedianCIHi), f(x.Diff), f(x.Ratio), f(x.Gain), f(x.MannWhitney.P), f(x.Welch.P), string(x.Verdict),
			f(x.Estimate), f(x.RatioLo), f(x.RatioHi))
		row = append(row, verdictTestCells(x, f)...)
		row = append(row, pairedCells(x.Paired, f)...)
		row = append(row, f(medianOrNaN(x.Baseline.Bounds)), f(medianOrNaN(x.Compare.Bounds)), strconv.Itoa(x.RoundsNeeded))
		cmps = append(cmps, append(row, stoppingCells(x.Stopping)...))
	}
	shares := [][]string{append(settingHeader(), "metric", "pages", "faster", "share", "significantly_faster")}
	for _, s := range a.Shares {
		shares = append(shares, append(settingCells(s.Setting), a.Options.Metric, strconv.Itoa(s.Pages), strconv.Itoa(s.Faster),
			f(float64(s.Faster)/float64(s.Pages)), strconv.Itoa(s.Significant)))
	}
	anova := [][]string{append(settingHeader(), "protocol", "stacks", "f", "df1", "df2", "p")}
	for _, an := range slices.Concat(a.ANOVAs, a.QUICANOVAs, a.ClientANOVAs) {
		anova = append(anova, append(settingCells(an.Setting), string(an.Protocol),
			strings.Join(an.Stacks, " "), f(an.Test.Statistic), f(an.Test.DF), f(an.Test.DF2), f(an.Test.P)))
	}
	work := [][]string{append(settingHeader(), "protocol", "loads", "median_requests_to_load", "median_bytes_to_load", "median_served_requests",
		"median_served_bytes", "median_fuzzy", "median_variant", "median_unmatched", "median_not_counted", "median_broken_images", "request_spread", "byte_spread", "different_work")}
	for _, sw := range a.Work {
		for _, p := range sw.Protocols {
			work = append(work, append(settingCells(sw.Setting), string(p.Protocol), strconv.Itoa(p.Loads), f(p.Requests), f(p.Bytes),
				f(p.Served), f(p.ServedBytes), f(p.Fuzzy), f(p.Variant), f(p.Unmatched), f(p.BrowserOwn), f(p.Broken), f(sw.RequestSpread), f(sw.ByteSpread), strconv.FormatBool(sw.Differs)))
		}
	}
	out := map[string][][]string{"comparisons": cmps, "pairs": pairsTable(a, f), "levels": levelPairsTable(a, f), "shares": shares, "anova": anova, "work": work, "cpu": cpuTable(a, f)}
	if len(a.Unmatched) > 0 {
		out["unmatched"] = unmatchedTable(a)
	}
	if claims != nil {
		out["claims"] = claims.CSV
	}
	return out
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"useLines": UseLines, "num": num, "pct": percent, "pval": pval, "onoff": onOff, "verdict": VerdictText, "ratioCI": ratioInterval,
	"opt": func(v *float64) string { return optional(v, 1) }, "ratio": ratioText, "waits": waitsText, "boundRule": func() string { return BoundRule },
	"frac":   func(a, b int) float64 { return float64(a) / float64(b) },
	"join":   func(s []string) string { return strings.Join(s, ", ") },
	"anchor": settingAnchor, "readFrom": ClaimsReadFrom, "claimLoads": claimLoads, "hasPrefix": strings.HasPrefix,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>quicbench report: {{.Page.Name}}</title>
<style>
body { font-family: sans-serif; margin: 2em; max-width: 1400px; color: #222 }
table { border-collapse: collapse; font-size: 13px; margin: 1em 0 }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right }
th { background: #f3f3f3 } td.l, th.l { text-align: left }
tr.faster td.v, tr.agrees td.v { background: #a6dba0 } tr.disagrees td.v { background: #f4a582 } tr.inconclusive td.v { background: #eee } tr.slower td.v { background: #f4a582 } tr.fail td.f { background: #fdd }
figure { margin: 2em 0 } figcaption { font-size: 13px; color: #555; max-width: 900px }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee }
table { display: block; overflow-x: auto; max-width: 100% } th { cursor: pointer }
th[data-sort=asc]::after { content: " ▲" } th[data-sort=desc]::after { content: " ▼" }
tr:target td, h3:target { background: #fff3b0 }
#tip { position: fixed; display: none; pointer-events: none; background: #ffe; border: 1px solid #888; padding: 2px 6px; font-size: 13px; max-width: 600px; z-index: 1 }
dl { font-size: 13px } dt { float: left; width: 12em; color: #666 }
p.answer { font-size: 16px; max-width: 1100px }
div.short { font-size: 17px; max-width: 1100px; border-left: 4px solid #4a90d9; padding: 0.2em 1em; margin: 1em 0 }
div.short p { margin: 0.3em 0 } div.short p.warn { color: #a33 }
details > summary { cursor: pointer; color: #444; margin: 1em 0 }
div.lead { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start } div.lead figure { margin: 0.5em 0; flex: 1 1 560px; max-width: 680px }
</style><script>` + reportScript + `</script></head><body><div id="tip"></div>
<h1>quicbench report: {{.Page.Name}}</h1>
{{with .Short}}<div class="short">{{range $i, $l := .}}{{if eq $i 0}}<p><b>{{$l}}</b></p>{{else}}<p{{if hasPrefix $l "Warning: "}} class="warn"{{end}}>{{$l}}</p>{{end}}{{end}}</div>
{{end}}{{with .Lead}}<div class="lead">{{range .}}<figure id="{{.Name}}">{{.SVG}}<figcaption><b>{{.Title}}.</b> {{.Caption}} Files: <a href="{{.Name}}.svg">SVG</a>, <a href="{{.Name}}.png">PNG</a>.</figcaption></figure>
{{end}}</div>
{{end}}<details><summary>The answer in full, the method and the run's provenance</summary>
<p>{{.A.Trials}} trials, {{.A.Failed}} failed (failed loads are counted, never measured).
Metric: {{.Metric}} in ms. {{.A.Options.Compare}} is compared with {{.A.Options.Baseline}}:
ratio = median({{.A.Options.Compare}}) / median({{.A.Options.Baseline}}), Diff = mean({{.A.Options.Compare}}) − mean({{.A.Options.Baseline}}),
gain = Diff / mean({{.A.Options.Baseline}}). Verdict at α = 0.01: Wilcoxon signed-rank over paired loads, else Mann–Whitney U, two-sided; beside it, at the same level, its ratio (Hodges–Lehmann) with the 99 % interval that inverts the test, so the interval excludes 1 exactly when the verdict says faster or slower. Welch's t-test p is shown too.
99 % confidence intervals of medians: percentile bootstrap, {{.A.Options.BootstrapReps}} resamples.</p>
{{with .Answer}}<h2>Answer in full</h2>
{{range .}}<p class="answer">{{.}}</p>
{{end}}{{end}}<dl>{{range $k, $v := .Page.Facts}}<dt>{{$k}}</dt><dd>{{$v}}</dd>{{end}}</dl>
</details>
{{with .Page.Claims}}<h2 id="claims">Claims of {{.Cite}}</h2>
<p>&ldquo;{{.Title}}&rdquo;{{with .Venue}}, {{.}}{{end}}: {{len .Rows}} claims, {{.Tally}}; {{readFrom .}}.
The paper's set-up: {{.Setup}}. A claim agrees when our interval at the paper's significance level lies inside the region where it holds,
disagrees when it lies wholly outside, and is inconclusive when it straddles a bound.</p>
<table><tr><th class="l">claim</th><th class="l">verdict</th><th>ours [interval at the paper's level]</th><th>paper</th><th>holds if</th><th class="l">loads used</th><th class="l">source</th><th class="l">what differs</th></tr>
{{range .Rows}}<tr class="{{.Verdict}}"><td class="l"><b>{{.ID}}</b> {{.Text}}<br><small>{{with .Statistic}}{{.}}. {{end}}Paper: {{.Reported}}</small></td>
<td class="l v">{{.Verdict}}{{with .Level}}<br><small>{{.}}</small>{{end}}{{with .ToDecide}}<br><small>to decide: {{.}}</small>{{end}}{{with .Real}}<br><small>on real pages: {{.}}</small>{{end}}{{range .Marks}}<br><small>{{.}}</small>{{end}}{{with .Why}}<br><small>why: {{.}}</small>{{end}}</td><td>{{.Ours}}</td><td>{{.Figure}}</td><td>{{or .HoldsIf "-"}}</td>
<td class="l">{{.Used}}{{with .Covers}}<br><small>{{.}}</small>{{end}}{{with claimLoads . (len $.Page.Loads)}}<details><summary>the loads</summary>{{range .}}{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}} {{end}}</details>{{end}}</td>
<td class="l">{{.Source}}</td><td class="l"><small>{{with .Arithmetic}}Design arithmetic: {{.}}<br>{{end}}{{.Differs}}</small></td></tr>
{{end}}</table>
{{with .Gaps}}<p>Not reproduced:</p><ul>{{range .}}<li>{{.Condition}}: {{.Reason}}.</li>{{end}}</ul>
{{end}}{{end}}{{with .A.Calibration}}<h3>Netchecks</h3>
<p>Each network was measured before its first load: a check that failed is a network that was not what was configured.</p>
{{range .}}<details{{if .Failed}} open{{end}}><summary>{{.Network}}: {{if .Failed}}{{len .Failed}} checks failed, also when measured again{{else}}passed{{end}}</summary>{{template "checks" .Lines}}</details>
{{end}}{{end}}{{with .Page.FirstNetchecks}}{{range .}}<details><summary>{{.Network}}: the first netcheck, which failed</summary>{{template "checks" .Lines}}</details>
{{end}}{{end}}{{with .A.Stacks}}<h3>Stacks on the wire</h3>
<p>On {{len .}} of the {{$.A.Testbeds}} testbeds measured the servers' stacks did not do on the wire what was applied:</p><ul>{{range .}}{{$setup := .Setup}}{{range .Warnings}}<li class="fail">{{$setup}}: {{.}}</li>{{end}}{{end}}</ul>
{{end}}{{with useLines .A}}<h3>h3 as the browser met it</h3>
<p>Discovery rather than forced: h3 means the servers offered it (Alt-Svc), and the browser discovered, raced and switched as it does by default; the loads are mixed by design.</p><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}
<h2>Comparisons</h2>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .Varied.Names}}<th class="l">{{.}}</th>{{end}}
<th>n {{.A.Options.Baseline}}</th><th>n {{.A.Options.Compare}}</th><th>failed</th><th>median {{.A.Options.Baseline}}</th><th>median {{.A.Options.Compare}} [99% CI]</th>
<th>ratio of medians</th><th>the verdict's ratio [99% CI], test, p</th><th>Diff, ms</th><th>gain</th><th>p (MWU)</th><th>p (Welch)</th><th class="l">verdict</th></tr>
{{range .A.Comparisons}}<tr{{if not $.Page.Loads}} id="{{anchor .Setting}}"{{end}} class="{{if eq (print .Verdict) "faster"}}faster{{else if eq (print .Verdict) "slower"}}slower{{end}}{{if or .Baseline.Failed .Compare.Failed}} fail{{end}}">
<td class="l">{{if $.Page.Loads}}<a href="#{{anchor .Setting}}">{{.Setting.Network}}</a>{{else}}{{.Setting.Network}}{{end}}</td><td class="l">{{.Setting.Page}}</td>{{range $.Varied.Values .Setting}}<td class="l">{{.}}</td>{{end}}
<td>{{len .Baseline.Values}}</td><td>{{len .Compare.Values}}</td><td class="f">{{.Baseline.Failed}} + {{.Compare.Failed}}</td>
<td>{{num .Baseline.Summary.Median 1}}</td><td>{{num .Compare.Summary.Median 1}} [{{num .Compare.MedianCILo 1}}, {{num .Compare.MedianCIHi 1}}]</td>
<td>{{num .Ratio 3}}</td><td>{{ratioCI .}}, {{if .Paired}}Wilcoxon over {{.Paired.Pairs}} pairs{{else}}Mann–Whitney{{end}}, {{pval .Test}}</td><td>{{num .Diff 1}}</td><td>{{pct .Gain}}</td><td>{{pval .MannWhitney}}</td><td>{{pval .Welch}}</td>
<td class="l v">{{verdict .}}</td></tr>
{{end}}</table>
{{if .A.Pairs}}<h2>Every other pair of protocols</h2>
<p>{{.PairsTitle}}.</p>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .Varied.Names}}<th class="l">{{.}}</th>{{end}}
<th class="l">pair</th><th>n earlier</th><th>n later</th><th>median earlier</th><th>median later [99% CI]</th><th>ratio of medians</th><th>the verdict's ratio [99% CI]</th><th>p (its test)</th><th class="l">verdict</th></tr>
{{range .A.Pairs}}<tr class="{{if eq (print .Verdict) "faster"}}faster{{else if eq (print .Verdict) "slower"}}slower{{end}}">
<td class="l">{{if $.Page.Loads}}<a href="#{{anchor .Setting}}">{{.Setting.Network}}</a>{{else}}{{.Setting.Network}}{{end}}</td><td class="l">{{.Setting.Page}}</td>{{range $.Varied.Values .Setting}}<td class="l">{{.}}</td>{{end}}
<td class="l">{{.Compare.Protocol}}/{{.Baseline.Protocol}}</td><td>{{len .Baseline.Values}}</td><td>{{len .Compare.Values}}</td>
<td>{{num .Baseline.Summary.Median 1}}</td><td>{{num .Compare.Summary.Median 1}} [{{num .Compare.MedianCILo 1}}, {{num .Compare.MedianCIHi 1}}]</td>
<td>{{num .Ratio 3}}</td><td>{{ratioCI .}}</td><td>{{pval .Test}}</td><td class="l v">{{verdict .}}</td></tr>
{{end}}</table>{{end}}
{{if .A.LevelPairs}}<h2>Pairs of stacks, servers and clients</h2>
<p>{{.LevelPairsTitle}}.</p>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .Varied.Names}}<th class="l">{{.}}</th>{{end}}
<th class="l">protocol</th><th class="l">factor</th><th class="l">pair</th><th>n earlier</th><th>n later</th><th>median earlier</th><th>median later [99% CI]</th><th>ratio of medians</th><th>the verdict's ratio [99% CI]</th><th>p (its test)</th><th class="l">verdict</th></tr>
{{range .A.LevelPairs}}<tr class="{{if eq (print .Verdict) "faster"}}faster{{else if eq (print .Verdict) "slower"}}slower{{end}}">
<td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td>{{range $.Varied.Values .Setting}}<td class="l">{{.}}</td>{{end}}
<td class="l">{{.Baseline.Protocol}}</td><td class="l">{{.FactorName}}</td><td class="l">{{.Later}}/{{.Earlier}}</td><td>{{len .Baseline.Values}}</td><td>{{len .Compare.Values}}</td>
<td>{{num .Baseline.Summary.Median 1}}</td><td>{{num .Compare.Summary.Median 1}} [{{num .Compare.MedianCILo 1}}, {{num .Compare.MedianCIHi 1}}]</td>
<td>{{num .Ratio 3}}</td><td>{{ratioCI .Comparison}}</td><td>{{pval .Comparison.Test}}</td><td class="l v">{{verdict .Comparison}}</td></tr>
{{end}}</table>{{end}}
{{range .A.Experimental}}<p><strong>Experimental QUIC stack</strong> {{.}}</p>
{{end}}{{if .A.Shares}}<h2>{{.ShareTitle}}</h2>
<table><tr><th class="l">network</th>{{range .Varied.Names}}<th class="l">{{.}}</th>{{end}}<th>pages</th><th>mean below {{.A.Options.Baseline}}'s</th><th>share</th><th>significantly faster</th></tr>
{{range .A.Shares}}<tr><td class="l">{{.Setting.Network}}</td>{{range $.Varied.Values .Setting}}<td class="l">{{.}}</td>{{end}}<td>{{.Pages}}</td><td>{{.Faster}}</td><td>{{pct (frac .Faster .Pages)}}</td><td>{{.Significant}}</td></tr>
{{end}}</table>{{end}}
{{if .A.ANOVAs}}<h2>One-way ANOVA across TCP stacks (Wolsing et al. 2019)</h2>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .VariedBesidesStack.Names}}<th class="l">{{.}}</th>{{end}}<th class="l">protocol</th><th class="l">stacks</th><th>F</th><th>p</th></tr>
{{range .A.ANOVAs}}<tr><td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td>{{range $.VariedBesidesStack.Values .Setting}}<td class="l">{{.}}</td>{{end}}<td class="l">{{.Protocol}}</td><td class="l">{{join .Stacks}}</td><td>{{num .Test.Statistic 2}}</td><td>{{pval .Test}}{{if not .Test.OK}} ({{.Test.Reason}}){{end}}</td></tr>
{{end}}</table>{{end}}
{{if .A.QUICANOVAs}}<h2>One-way ANOVA across QUIC stacks</h2>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .VariedBesidesQUIC.Names}}<th class="l">{{.}}</th>{{end}}<th class="l">protocol</th><th class="l">QUIC stacks</th><th>F</th><th>p</th></tr>
{{range .A.QUICANOVAs}}<tr><td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td>{{range $.VariedBesidesQUIC.Values .Setting}}<td class="l">{{.}}</td>{{end}}<td class="l">{{.Protocol}}</td><td class="l">{{join .Stacks}}</td><td>{{num .Test.Statistic 2}}</td><td>{{pval .Test}}{{if not .Test.OK}} ({{.Test.Reason}}){{end}}</td></tr>
{{end}}</table>{{end}}
{{if .A.ClientANOVAs}}<h2>One-way ANOVA across clients</h2>
<table><tr><th class="l">network</th><th class="l">page</th>{{range .VariedBesidesClient.Names}}<th class="l">{{.}}</th>{{end}}<th class="l">protocol</th><th class="l">clients</th><th>F</th><th>p</th></tr>
{{range .A.ClientANOVAs}}<tr><td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td>{{range $.VariedBesidesClient.Values .Setting}}<td class="l">{{.}}</td>{{end}}<td class="l">{{.Protocol}}</td><td class="l">{{join .Stacks}}</td><td>{{num .Test.Statistic 2}}</td><td>{{pval .Test}}{{if not .Test.OK}} ({{.Test.Reason}}){{end}}</td></tr>
{{end}}</table>{{end}}
{{if .A.CPU}}<h2>CPU per load</h2>
<p>Medians per verified load of the ms of CPU each party used over the measured visit (a whole core for the window uses as many ms as the window lasts):
the browser's processes, the server's that served the protocol, and quicbench's (the emulator, the harness, and the built-in loader when it takes part; the emulator's working time beside it). Runs made before the Go origin had a process of its own counted it in quicbench's, with no server.
{{boundRule}} Ratios: {{.A.Options.Compare}} / {{.A.Options.Baseline}}.</p>
{{range .A.CPU}}{{if .Bound}}<p><strong>Warning:</strong> {{.Setting.Network}}, {{.Setting.Page}}{{range $.Varied.Values .Setting}}, {{.}}{{end}}: {{range $i, $p := .Protocols}}{{if $i}}, {{end}}{{$p.Bound}} of {{$p.Loads}} {{$p.Protocol}} loads{{end}} were CPU-bound: there the comparison measures this machine's CPU as much as the network.</p>
{{end}}{{end}}<table><tr><th class="l">network</th><th class="l">page</th>{{range .Varied.Names}}<th class="l">{{.}}</th>{{end}}<th class="l">protocol</th><th>loads</th><th>window</th><th>client</th><th class="l">server</th><th>server</th><th>quicbench</th><th>emulator</th><th>idle</th><th>total</th><th>waited</th><th class="l">CPU-bound</th><th>total ratio</th><th>client ratio</th><th>server ratio</th></tr>
{{range $sc := .A.CPU}}{{range $i, $p := .Protocols}}<tr><td class="l">{{$sc.Setting.Network}}</td><td class="l">{{$sc.Setting.Page}}</td>{{range $.Varied.Values $sc.Setting}}<td class="l">{{.}}</td>{{end}}<td class="l">{{$p.Protocol}}</td><td>{{$p.Loads}}</td><td>{{num $p.WindowMs 0}}</td><td>{{opt $p.ClientMs}}</td><td class="l">{{$p.Server}}</td><td>{{opt $p.ServerMs}}</td><td>{{num $p.Quicbench 1}}</td><td>{{num $p.Emulator 1}}</td><td>{{num $p.IdlePct 0}} %</td><td>{{num $p.TotalMs 1}}</td><td>{{waits $p}}</td><td class="l">{{$p.Bound}} {{$p.BoundBy}}</td>{{if eq $i 0}}<td>{{ratio $sc.TotalRatio}}</td><td>{{ratio $sc.ClientRatio}}</td><td>{{ratio $sc.ServerRatio}}</td>{{else}}<td></td><td></td><td></td>{{end}}</tr>
{{end}}{{end}}</table>{{end}}
<h2>Figures</h2>
{{range .Rest}}<figure id="{{.Name}}">{{.SVG}}<figcaption><b>{{.Title}}.</b> {{.Caption}} Files: <a href="{{.Name}}.svg">SVG</a>, <a href="{{.Name}}.png">PNG</a>.</figcaption></figure>
{{end}}
{{if .Loads}}<h2 id="loads">Loads</h2>
<p>Every load of the run by setting: its trial, status, {{.Metric}} in ms, the figures that draw it alone, and its files in the run directory. A network in the tables above leads to its setting here, a point of a figure to its load; a column's heading sorts its table.</p>
{{range .Loads}}<h3 id="{{.Anchor}}">{{.Label}}</h3>
<table><tr><th class="l">trial</th><th class="l">protocol</th><th>rep</th><th class="l">status</th><th>{{$.Metric}}, ms</th><th class="l">figures</th><th class="l">files</th></tr>
{{range .Loads}}<tr id="{{.Anchor}}"{{if .Failure}} class="fail"{{end}}><td class="l">{{.ID}}</td><td class="l">{{.Protocol}}</td><td>{{.Rep}}</td><td class="l f">{{.Status}}{{with .Failure}}: {{.}}{{end}}</td><td>{{.Value}}</td><td class="l">{{range .Figures}}<a href="#{{.}}">{{.}}</a> {{end}}</td><td class="l">{{range .Files}}<a href="{{.Href}}">{{.Name}}</a> {{end}}</td></tr>
{{end}}</table>
{{end}}{{else if .Page.LoadCount}}<p>This run has {{.Page.LoadCount}} loads, more than a report lists ({{.MaxListed}}): <code>quicbench export</code> writes every one with its files' paths.</p>
{{end}}<p>Tables as CSV: <a href="comparisons.csv">comparisons.csv</a>,{{if .A.Pairs}} <a href="pairs.csv">pairs.csv</a>,{{end}}{{if .A.LevelPairs}} <a href="levels.csv">levels.csv</a>,{{end}} <a href="shares.csv">shares.csv</a>, <a href="anova.csv">anova.csv</a>{{if .A.CPU}}, <a href="cpu.csv">cpu.csv</a>{{end}}.</p>
</body></html>
{{define "checks"}}<table><tr><th class="l">check</th><th>configured</th><th>measured</th><th class="l">result</th></tr>
{{range .}}<tr{{if eq .Result "FAIL"}} class="fail"{{end}}><td class="l">{{.Check}}</td><td>{{or .Configured "-"}}</td><td>{{or .Measured "-"}}</td><td class="l f">{{.Result}}</td></tr>
{{end}}</table>{{end}}`))

// htmlVaried gives the template a Varied's column names and cells.
type htmlVaried struct{ v analysis.Varied }

// Names are the columns' names.
func (h htmlVaried) Names() []string { return h.v.Names() }

// Values are a setting's cells.
func (h htmlVaried) Values(s analysis.Setting) []string { return h.v.Values(s) }

type htmlFigure struct {
	Name, Title, Caption string
	SVG                  template.HTML
}

func renderHTML(dir string, pg Page, a *analysis.Analysis, figs []Figure) ([]byte, error) {
	var hf []htmlFigure
	drawnIn := map[string][]string{} // trial ID → the figures that draw it alone
	for _, f := range figs {
		for _, id := range f.Trials {
			drawnIn[id] = append(drawnIn[id], f.Name)
		}
		svg := string(f.SVG)
		if i := strings.Index(svg, "<svg"); i >= 0 {
			svg = svg[i:] // drop the XML prolog to inline it
		}
		hf = append(hf, htmlFigure{Name: f.Name, Title: f.Title, Caption: f.Caption, SVG: template.HTML(svg)}) // gonum's own SVG output
	}
	lead, rest := leadFigures(hf)
	var short []string
	for _, l := range shortLines(a, nil, "Below: the figures and every table; every load with its files: quicbench export.") {
		short = append(short, strings.TrimSpace(l))
	}
	var buf bytes.Buffer
	v := analysis.VariedIn(a.Comparisons)
	err := page.Execute(&buf, struct {
		Page                       Page
		A                          *analysis.Analysis
		Metric, ShareTitle         string
		PairsTitle                 string
		LevelPairsTitle            string
		Answer                     []string
		Varied, VariedBesidesStack htmlVaried
		VariedBesidesQUIC          htmlVaried
		VariedBesidesClient        htmlVaried
		Short                      []string
		Lead, Rest                 []htmlFigure
		Loads                      []htmlSettingLoads
		MaxListed                  int
	}{pg, a, analysis.MetricLabel(a.Options.Metric), ShareTitle(a.Options), PairsTitle(a.Options), LevelPairsTitle(a.Options), Answer(a), htmlVaried{v}, htmlVaried{v.Without(factor.IDStack)}, htmlVaried{v.Without(factor.IDQUIC)},
		htmlVaried{v.Without(factor.IDClient)}, short, lead, rest, htmlLoads(dir, pg, drawnIn), analysis.MaxListedLoads})
	if err != nil {
		return nil, fmt.Errorf("report: html: %w", err)
	}
	return buf.Bytes(), nil
}

// leadNames are the figures the report's first screen shows beside its
// answer, in this order: the first setting's loads per protocol, and the
// parts of their time.
var leadNames = []string{"loads-01", "parts"}

// leadFigures splits figs into those of leadNames, in its order, and the
// rest in theirs.
func leadFigures(figs []htmlFigure) (lead, rest []htmlFigure) {
	for _, name := range leadNames {
		for _, f := range figs {
			if f.Name == name {
				lead = append(lead, f)
			}
		}
	}
	for _, f := range figs {
		if !slices.Contains(leadNames, f.Name) {
			rest = append(rest, f)
		}
	}
	return lead, rest
}

// pairsTable is a.Pairs as CSV rows, with a header.
func pairsTable(a *analysis.Analysis, f func(float64) string) [][]string {
	rows := [][]string{append(settingHeader(), "later", "earlier", "n_earlier", "n_later", "median_earlier", "median_later",
		"median_ci99_lo_later", "median_ci99_hi_later", "ratio", "verdict_ratio", "verdict_ci99_lo", "verdict_ci99_hi", "p_verdict", "p_mann_whitney", "p_welch", "verdict")}
	for _, x := range a.Pairs {
		rows = append(rows, append(settingCells(x.Setting), string(x.Compare.Protocol), string(x.Baseline.Protocol),
			strconv.Itoa(len(x.Baseline.Values)), strconv.Itoa(len(x.Compare.Values)), f(x.Baseline.Summary.Median), f(x.Compare.Summary.Median),
			f(x.Compare.MedianCILo), f(x.Compare.MedianCIHi), f(x.Ratio), f(x.Estimate), f(x.RatioLo), f(x.RatioHi), f(x.Test.P), f(x.MannWhitney.P), f(x.Welch.P), string(x.Verdict)))
	}
	return rows
}

// pairedCells are a comparison's paired columns: empty when unpaired.
func pairedCells(p *stats.PairedRatio, f func(float64) string) []string {
	if p == nil {
		return []string{"0", "", "", "", ""}
	}
	return []string{strconv.Itoa(p.Pairs), f(p.Ratio), f(p.Lo), f(p.Hi), f(p.Test.P)}
}

// medianOrNaN is the median of xs, NaN for none.
func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}

// verdictTestCells are the verdict's test and its p; under an until rule
// "sequential <test>" and no p (the verdict is the look's repeated
// interval's, whose p after many looks a fixed test would not give).
func verdictTestCells(c analysis.Comparison, f func(float64) string) []string {
	if c.Stopping != nil {
		return []string{"sequential " + c.Test.Name, ""}
	}
	return []string{c.Test.Name, f(c.Test.P)}
}

// stoppingCells are a comparison's until columns: empty without a rule.
func stoppingCells(st *analysis.Stopping) []string {
	if st == nil {
		return []string{"", "", ""}
	}
	return []string{strconv.Itoa(st.Trials), strconv.Itoa(st.Rep), st.Look.Reason}
}

// htmlSettingLoads is one setting's loads as the template shows them.
type htmlSettingLoads struct {
	Anchor, Label string
	Loads         []htmlLoad
}

// htmlLoad is one load's row.
type htmlLoad struct {
	Anchor, ID, Status, Failure, Value string
	Protocol                           factor.Protocol
	Rep                                int64
	Figures                            []string
	Files                              []htmlLink
}

// htmlLink is a link and its text.
type htmlLink struct{ Name, Href string }

// maxFailureText is the most of a failure's message a load's row shows.
const maxFailureText = 160

// htmlLoads prepares the page's loads for the template: each setting's
// label and anchor, each load's figures (drawnIn) and its files' links
// from the report directory dir.
func htmlLoads(dir string, pg Page, drawnIn map[string][]string) []htmlSettingLoads {
	settings := make([]analysis.Setting, len(pg.Loads))
	for i, sl := range pg.Loads {
		settings[i] = sl.Setting
	}
	v := analysis.VariedOf(settings)
	out := make([]htmlSettingLoads, len(pg.Loads))
	for i, sl := range pg.Loads {
		out[i] = htmlSettingLoads{Anchor: settingAnchor(sl.Setting), Label: v.Label(sl.Setting) + ", " + sl.Setting.Page()}
		for _, l := range sl.Loads {
			row := htmlLoad{Anchor: loadAnchor(l.ID), ID: l.ID, Status: l.Status, Protocol: l.Protocol, Rep: l.Rep,
				Value: num(valueOr(l.Value), 1), Figures: drawnIn[l.ID]}
			if l.Status != results.StatusOK {
				row.Failure = shortText(l.Failure, maxFailureText)
			}
			for _, f := range l.Files {
				if href := fileLink(dir, pg.RunDir, f); href != "" {
					row.Files = append(row.Files, htmlLink{Name: fileKind(f), Href: href})
				}
			}
			out[i].Loads = append(out[i].Loads, row)
		}
	}
	return out
}

// fileKind names an artifact by what it is: HAR, pcap, qlog, net log or
// frames.
func fileKind(path string) string {
	switch base := filepath.Base(path); {
	case strings.HasSuffix(base, ".har"):
		return "HAR"
	case strings.HasSuffix(base, ".pcap"):
		return "pcap"
	case strings.HasSuffix(base, "-qlog"):
		return "qlog"
	case strings.HasSuffix(base, "-netlog"):
		return "net log"
	case strings.HasSuffix(base, "-frames"):
		return "frames"
	default:
		return base
	}
}

// shortText is s cut to at most n bytes at a rune boundary, with an
// ellipsis when cut.
func shortText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// reportScript shows the value under the pointer at once (each figure's
// regions carry it as a title, which standalone SVG files show too) and
// sorts a table by the column whose heading is clicked: numbers by value
// (a cell's leading number), others as text after them.
const reportScript = `
document.addEventListener('DOMContentLoaded', () => {
  const tip = document.getElementById('tip');
  for (const r of document.querySelectorAll('g.tips rect')) {
    const t = r.querySelector('title');
    if (!t) continue;
    r.dataset.tip = t.textContent;
    t.remove();
    r.addEventListener('mousemove', e => {
      tip.textContent = r.dataset.tip;
      tip.style.display = 'block';
      tip.style.left = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + 'px';
      tip.style.top = (e.clientY + 14) + 'px';
    });
    r.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  }
  for (const table of document.querySelectorAll('table')) {
    const head = table.rows[0];
    if (!head) continue;
    [...head.cells].forEach((th, col) => th.addEventListener('click', () => sortTable(table, col, th)));
  }
});
function sortTable(table, col, th) {
  const up = th.dataset.sort !== 'asc';
  for (const h of table.rows[0].cells) delete h.dataset.sort;
  th.dataset.sort = up ? 'asc' : 'desc';
  const key = r => {
    const s = r.cells[col] ? r.cells[col].textContent.trim() : '';
    const n = parseFloat(s);
    return isNaN(n) ? [1, s] : [0, n];
  };
  const rows = [...table.rows].slice(1);
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    const d = x[0] - y[0] || (x[0] ? x[1].localeCompare(y[1]) : x[1] - y[1]);
    return up ? d : -d;
  });
  for (const r of rows) r.parentNode.appendChild(r);
}
`

// claimLoad is a load a claim used: its trial ID, linked to its row in
// the list of loads when the page lists this run's loads.
type claimLoad struct{ Text, Href string }

// claimLoads lists the loads a claim row used; listed is how many
// settings the page lists loads of (0: none).
func claimLoads(r ClaimRow, listed int) []claimLoad {
	out := make([]claimLoad, len(r.Trials))
	for i, id := range r.Trials {
		out[i] = claimLoad{Text: id}
		if listed > 0 && !strings.Contains(id, "/") {
			out[i].Href = "#" + loadAnchor(id)
		}
	}
	return out
}
