package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Page is what the HTML report shows besides the analysis.
type Page struct {
	Name  string            // the run's name
	Facts map[string]string // versions and host, from the results database
}

// WriteFiles writes dir/index.html (self-contained: figures inline as SVG,
// no network needed), each figure as SVG and PNG, and the tables as CSV.
// It returns the paths written.
func WriteFiles(dir string, pg Page, a *Analysis, figs []Figure) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var written []string
	write := func(name string, data []byte) error {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
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
	for name, rows := range tables(a) {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.WriteAll(rows)
		if err := write(name+".csv", buf.Bytes()); err != nil {
			return nil, err
		}
	}
	html, err := renderHTML(pg, a, figs)
	if err != nil {
		return nil, err
	}
	if err := write("index.html", html); err != nil {
		return nil, err
	}
	return written, nil
}

// tables are the analysis as CSV rows, with headers.
func tables(a *Analysis) map[string][][]string {
	o := a.Options
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	cmps := [][]string{{"network", "page", "stack", "server", "visit", "cache", "origins",
		"n_" + o.Baseline, "n_" + o.Compare, "failed_" + o.Baseline, "failed_" + o.Compare,
		"mean_" + o.Baseline, "mean_" + o.Compare, "median_" + o.Baseline, "median_" + o.Compare,
		"sd_" + o.Baseline, "sd_" + o.Compare, "p25_" + o.Compare, "p75_" + o.Compare,
		"median_ci95_lo_" + o.Compare, "median_ci95_hi_" + o.Compare,
		"diff_ms", "ratio", "gain", "p_mann_whitney", "p_welch", "verdict"}}
	for _, c := range a.Comparisons {
		s := c.Setting
		cmps = append(cmps, []string{s.Network, s.Page, s.Stack, s.Server, s.Visit, onOff(s.Cache), strconv.Itoa(s.Origins),
			strconv.Itoa(len(c.Baseline.Values)), strconv.Itoa(len(c.Compare.Values)), strconv.Itoa(c.Baseline.Failed), strconv.Itoa(c.Compare.Failed),
			f(c.Baseline.Summary.Mean), f(c.Compare.Summary.Mean), f(c.Baseline.Summary.Median), f(c.Compare.Summary.Median),
			f(c.Baseline.Summary.StdDev), f(c.Compare.Summary.StdDev), f(c.Compare.Summary.P25), f(c.Compare.Summary.P75),
			f(c.Compare.MedianCILo), f(c.Compare.MedianCIHi), f(c.Diff), f(c.Ratio), f(c.Gain), f(c.MannWhitney.P), f(c.Welch.P), string(c.Verdict)})
	}
	shares := [][]string{{"network", "visit", "cache", "pages", "faster", "share", "significantly_faster"}}
	for _, s := range a.Shares {
		shares = append(shares, []string{s.Network, s.Visit, onOff(s.Cache), strconv.Itoa(s.Pages), strconv.Itoa(s.Faster),
			f(float64(s.Faster) / float64(s.Pages)), strconv.Itoa(s.Significant)})
	}
	anova := [][]string{{"network", "page", "server", "visit", "cache", "origins", "protocol", "stacks", "f", "df1", "df2", "p"}}
	for _, an := range a.ANOVAs {
		s := an.Setting
		anova = append(anova, []string{s.Network, s.Page, s.Server, s.Visit, onOff(s.Cache), strconv.Itoa(s.Origins), an.Protocol,
			strings.Join(an.Stacks, " "), f(an.Test.Statistic), f(an.Test.DF), f(an.Test.DF2), f(an.Test.P)})
	}
	return map[string][][]string{"comparisons": cmps, "shares": shares, "anova": anova}
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num": num, "pct": percent, "pval": pval, "onoff": onOff, "verdict": VerdictText,
	"frac": func(a, b int) float64 { return float64(a) / float64(b) },
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>quicbench report: {{.Page.Name}}</title>
<style>
body { font-family: sans-serif; margin: 2em; max-width: 1400px; color: #222 }
table { border-collapse: collapse; font-size: 13px; margin: 1em 0 }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right }
th { background: #f3f3f3 } td.l, th.l { text-align: left }
tr.faster td.v { background: #a6dba0 } tr.slower td.v { background: #f4a582 } tr.fail td.f { background: #fdd }
figure { margin: 2em 0 } figcaption { font-size: 13px; color: #555; max-width: 900px }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee }
dl { font-size: 13px } dt { float: left; width: 12em; color: #666 }
</style></head><body>
<h1>quicbench report: {{.Page.Name}}</h1>
<p>{{.A.Trials}} trials, {{.A.Failed}} failed (failed loads are counted, never measured).
Metric: {{.Metric}} in ms. {{.A.Options.Compare}} is compared with {{.A.Options.Baseline}}:
ratio = median({{.A.Options.Compare}}) / median({{.A.Options.Baseline}}), Diff = mean({{.A.Options.Compare}}) − mean({{.A.Options.Baseline}}),
gain = Diff / mean({{.A.Options.Baseline}}). Verdict: Mann–Whitney U, two-sided, α = 0.01; Welch's t-test p is shown beside it.
95% confidence intervals of medians: percentile bootstrap, {{.A.Options.BootstrapReps}} resamples.</p>
<dl>{{range $k, $v := .Page.Facts}}<dt>{{$k}}</dt><dd>{{$v}}</dd>{{end}}</dl>
<h2>Comparisons</h2>
<table><tr><th class="l">network</th><th class="l">page</th><th class="l">stack</th><th class="l">server</th><th class="l">visit</th><th>cache</th><th>origins</th>
<th>n {{.A.Options.Baseline}}</th><th>n {{.A.Options.Compare}}</th><th>failed</th><th>median {{.A.Options.Baseline}}</th><th>median {{.A.Options.Compare}} [95% CI]</th>
<th>ratio</th><th>Diff, ms</th><th>gain</th><th>p (MWU)</th><th>p (Welch)</th><th class="l">verdict</th></tr>
{{range .A.Comparisons}}<tr class="{{if eq (print .Verdict) "faster"}}faster{{else if eq (print .Verdict) "slower"}}slower{{end}}{{if or .Baseline.Failed .Compare.Failed}} fail{{end}}">
<td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td><td class="l">{{.Setting.Stack}}</td><td class="l">{{.Setting.Server}}</td><td class="l">{{.Setting.Visit}}</td><td>{{onoff .Setting.Cache}}</td><td>{{.Setting.Origins}}</td>
<td>{{len .Baseline.Values}}</td><td>{{len .Compare.Values}}</td><td class="f">{{.Baseline.Failed}} + {{.Compare.Failed}}</td>
<td>{{num .Baseline.Summary.Median 1}}</td><td>{{num .Compare.Summary.Median 1}} [{{num .Compare.MedianCILo 1}}, {{num .Compare.MedianCIHi 1}}]</td>
<td>{{num .Ratio 3}}</td><td>{{num .Diff 1}}</td><td>{{pct .Gain}}</td><td>{{pval .MannWhitney}}</td><td>{{pval .Welch}}</td>
<td class="l v">{{verdict .}}</td></tr>
{{end}}</table>
{{if .A.Shares}}<h2>Pages where {{.A.Options.Compare}} is faster (seed 000, Table III)</h2>
<table><tr><th class="l">network</th><th class="l">visit</th><th>cache</th><th>pages</th><th>mean below {{.A.Options.Baseline}}'s</th><th>share</th><th>significantly faster</th></tr>
{{range .A.Shares}}<tr><td class="l">{{.Network}}</td><td class="l">{{.Visit}}</td><td>{{onoff .Cache}}</td><td>{{.Pages}}</td><td>{{.Faster}}</td><td>{{pct (frac .Faster .Pages)}}</td><td>{{.Significant}}</td></tr>
{{end}}</table>{{end}}
{{if .A.ANOVAs}}<h2>One-way ANOVA across TCP stacks (seed 003)</h2>
<table><tr><th class="l">network</th><th class="l">page</th><th class="l">protocol</th><th class="l">stacks</th><th>F</th><th>p</th></tr>
{{range .A.ANOVAs}}<tr><td class="l">{{.Setting.Network}}</td><td class="l">{{.Setting.Page}}</td><td class="l">{{.Protocol}}</td><td class="l">{{join .Stacks}}</td><td>{{num .Test.Statistic 2}}</td><td>{{pval .Test}}{{if not .Test.OK}} ({{.Test.Reason}}){{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Figures</h2>
{{range .Figures}}<figure id="{{.Name}}">{{.SVG}}<figcaption><b>{{.Title}}.</b> {{.Caption}} Files: <a href="{{.Name}}.svg">SVG</a>, <a href="{{.Name}}.png">PNG</a>.</figcaption></figure>
{{end}}
<p>Tables as CSV: <a href="comparisons.csv">comparisons.csv</a>, <a href="shares.csv">shares.csv</a>, <a href="anova.csv">anova.csv</a>.</p>
</body></html>
`))

type htmlFigure struct {
	Name, Title, Caption string
	SVG                  template.HTML
}

func renderHTML(pg Page, a *Analysis, figs []Figure) ([]byte, error) {
	var hf []htmlFigure
	for _, f := range figs {
		svg := string(f.SVG)
		if i := strings.Index(svg, "<svg"); i >= 0 {
			svg = svg[i:] // drop the XML prolog to inline it
		}
		hf = append(hf, htmlFigure{Name: f.Name, Title: f.Title, Caption: f.Caption, SVG: template.HTML(svg)}) // gonum's own SVG output
	}
	var buf bytes.Buffer
	err := page.Execute(&buf, struct {
		Page    Page
		A       *Analysis
		Metric  string
		Figures []htmlFigure
	}{pg, a, MetricLabel(a.Options.Metric), hf})
	if err != nil {
		return nil, fmt.Errorf("report: html: %w", err)
	}
	return buf.Bytes(), nil
}
