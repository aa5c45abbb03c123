package results

import "slices"

// Metric is one measure of a load that a report or a claim compares: its
// name as --metric takes it, its label for tables and figures, and how to
// read it from a trial (nil where the load has none). Every metric is in
// milliseconds from navigation start (Speed Index too).
type Metric struct {
	Name  string
	Label string
	Value func(Trial) *float64
}

// metrics are the measures, in the order help texts show them; the visual
// ones exist for visual trials only.
var metrics = []Metric{
	{"plt", "PLT (loadEventEnd)", func(t Trial) *float64 { return t.PLT }},
	{"onload", "onLoad (loadEventStart)", func(t Trial) *float64 { return t.OnLoad }},
	{"dcl", "DOMContentLoaded", func(t Trial) *float64 { return t.DCL }},
	{"ttfb", "TTFB", func(t Trial) *float64 { return t.TTFB }},
	{"fcp", "First Contentful Paint", func(t Trial) *float64 { return t.FCP }},
	{"lcp", "Largest Contentful Paint", func(t Trial) *float64 { return t.LCP }},
	{"si", "Speed Index", func(t Trial) *float64 { return t.SpeedIndex }},
	{"fvc", "First Visual Change", func(t Trial) *float64 { return t.FVC }},
	{"lvc", "Last Visual Change", func(t Trial) *float64 { return t.LVC }},
	{"vc85", "Visually Complete 85 %", func(t Trial) *float64 { return t.VC85 }},
	{"vc95", "Visually Complete 95 %", func(t Trial) *float64 { return t.VC95 }},
	{"vc99", "Visually Complete 99 %", func(t Trial) *float64 { return t.VC99 }},
}

// MetricList lists the metrics in the order help texts show them.
func MetricList() []Metric { return slices.Clone(metrics) }

// MetricNamed returns the metric of that name, and false if there is none.
func MetricNamed(name string) (Metric, bool) {
	for _, m := range metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// VisualMetric reports whether the metric of that name is measured from
// frames (visual trials only).
func VisualMetric(name string) bool {
	return slices.Contains([]string{"si", "fvc", "lvc", "vc85", "vc95", "vc99"}, name)
}
