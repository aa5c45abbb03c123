package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// CorpusStats are a generated corpus's figures, to set beside the targets
// it follows.
type CorpusStats struct {
	Pages int
	// RequestQuantiles are the requests per page (the document included)
	// at the percentiles of RequestQuantiles.
	RequestQuantiles [5]float64
	// MedianCount and MedianBytes are, per resource type, the medians over
	// pages of its requests and of its bytes on the wire.
	MedianCount, MedianBytes map[string]float64
	// MedianOrigins is the median number of origins per page, and
	// MedianPageBytes the median page weight.
	MedianOrigins, MedianPageBytes float64
}

// Web2024Stats generates pages 1 to pages of the web2024 corpus of seed
// and measures them.
func Web2024Stats(seed uint64, pages int) (CorpusStats, error) {
	st := CorpusStats{Pages: pages, MedianCount: map[string]float64{}, MedianBytes: map[string]float64{}}
	var requests, origins, weight []float64
	counts, sizes := map[string][]float64{}, map[string][]float64{}
	for n := 1; n <= pages; n++ {
		s, err := Web2024(factor.Page{Kind: factor.PageWeb2024, Number: n, CorpusSeed: seed})
		if err != nil {
			return st, err
		}
		c, b := typeTotals(s)
		total := 0.0
		for _, t := range ResourceTypes {
			counts[t.Name], sizes[t.Name] = append(counts[t.Name], c[t.Name]), append(sizes[t.Name], b[t.Name])
			total += c[t.Name]
		}
		requests, origins, weight = append(requests, total), append(origins, float64(len(s.Origins))), append(weight, float64(s.Bytes()))
	}
	for i, q := range RequestQuantiles {
		st.RequestQuantiles[i] = quantile(requests, q.P)
	}
	for _, t := range ResourceTypes {
		st.MedianCount[t.Name], st.MedianBytes[t.Name] = quantile(counts[t.Name], 0.5), quantile(sizes[t.Name], 0.5)
	}
	st.MedianOrigins, st.MedianPageBytes = quantile(origins, 0.5), quantile(weight, 0.5)
	return st, nil
}

// typeTotals counts a page's files and bytes per resource type (by the
// first element of their paths; the document is html).
func typeTotals(s *site.Site) (counts, bytes map[string]float64) {
	counts, bytes = map[string]float64{}, map[string]float64{}
	for _, o := range s.Origins {
		for path, r := range o.Resources {
			t := "html"
			if path != "/" {
				t, _, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/")
			}
			counts[t]++
			bytes[t] += float64(len(r.Body))
		}
	}
	return counts, bytes
}

// quantile is the p-quantile of values, interpolated between order
// statistics (the type 7 of R and NumPy's default).
func quantile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(values))
	h := p * float64(len(v)-1)
	lo := int(h)
	if lo+1 >= len(v) {
		return v[lo]
	}
	return v[lo] + (h-float64(lo))*(v[lo+1]-v[lo])
}

// Table lists the corpus's figures beside their targets, one line each.
func (st CorpusStats) Table() []string {
	lines := []string{fmt.Sprintf("%-28s %12s %12s %8s", fmt.Sprintf("web2024, %d pages", st.Pages), "target", "corpus", "off")}
	row := func(name string, target, got float64) {
		lines = append(lines, fmt.Sprintf("%-28s %12.0f %12.0f %+7.1f%%", name, target, got, 100*(got-target)/target))
	}
	for i, q := range RequestQuantiles {
		row(fmt.Sprintf("requests per page, p%.0f", 100*q.P), q.Requests, st.RequestQuantiles[i])
	}
	for _, t := range ResourceTypes {
		if t.Name != "other" {
			row("median requests, "+t.Name, float64(t.MedianCount), st.MedianCount[t.Name])
		}
	}
	for _, t := range ResourceTypes {
		if t.Name != "other" {
			row("median KB, "+t.Name, float64(t.MedianBytes)/1000, st.MedianBytes[t.Name]/1000)
		}
	}
	lines = append(lines, fmt.Sprintf("%-28s %12s %12.0f", "median origins per page", "several", st.MedianOrigins))
	lines = append(lines, fmt.Sprintf("%-28s %12s %12.0f   (not a target: the web's median page also has video and other types)", "median page weight, KB",
		fmt.Sprintf("%d", factor.Web2024MedianBytes/1000), st.MedianPageBytes/1000))
	return lines
}
