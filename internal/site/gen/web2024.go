package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// This file generates the web2024 corpus: pages shaped like the desktop web
// of 2024 as the HTTP Archive measured it (Web Almanac 2024, Page Weight
// chapter), with the structure that decides how a page loads: render-
// blocking CSS and scripts in the head, fonts found in CSS, images in the
// body and in CSS, async and deferred scripts, a script that injects more
// scripts and images as it runs, requests made with fetch() after that,
// iframes, several third-party origins, and text compressed with gzip as
// servers send it.

// RequestQuantiles are the targets for requests per page at the 10th,
// 25th, 50th, 75th and 90th percentile.
var RequestQuantiles = [5]struct{ P, Requests float64 }{{0.10, 24}, {0.25, 42}, {0.50, 71}, {0.75, 115}, {0.90, 176}}

// ResourceType is a kind of request of a generated page, with its targets:
// the median number of requests and the median bytes per page.
type ResourceType struct {
	Name          string
	MedianCount   int
	MedianBytes   int64
	spread        float64 // σ of the log of the bytes per page
	weyl          float64 // the irrational step of its low-discrepancy sequence
	minBytes      int64   // the smallest file of the type
	contentType   string
	compressed    bool
	pathExtension string
}

// ResourceTypes are the request types of the corpus with the HTTP Archive's
// medians (HTML, fonts, CSS, images, JavaScript); "other" (JSON fetched by
// scripts) makes up the rest of the median page's 71 requests.
var ResourceTypes = []ResourceType{
	{"html", 2, 18_000, 0.8, math.Sqrt2 - 1, 400, "text/html; charset=utf-8", true, "html"},
	{"css", 8, 78_000, 0.9, math.Sqrt(3) - 1, 200, "text/css", true, "css"},
	{"font", 4, 131_000, 0.8, math.Sqrt(5) - 2, 2_000, "font/woff2", false, "woff2"},
	{"js", 24, 613_000, 0.9, math.Sqrt(7) - 2, 200, "text/javascript", true, "js"},
	{"image", 18, 1_054_000, 1.0, math.Sqrt(11) - 3, factor.MinObjectBytes, "image/png", false, "png"},
	{"other", 15, 40_000, 0.8, math.Sqrt(13) - 3, 50, "application/json", true, "json"},
}

// resType returns the ResourceType called name.
func resType(name string) ResourceType {
	for _, t := range ResourceTypes {
		if t.Name == name {
			return t
		}
	}
	panic("site: no resource type " + name)
}

// The origins of generated pages: the first party's own two, and third
// parties of which each page uses some.
const (
	firstParty  = "www.quicbench.test"
	staticParty = "static.quicbench.test"
)

var thirdParties = []string{"fonts.typeface.test", "cdn.jsdelivery.test", "tags.tagmanager.test",
	"ads.adnetwork.test", "stats.analytics.test", "img.imagecdn.test"}

// corpusPosition is page number's place in [0, 1) along the low-discrepancy
// sequence with step alpha (a Weyl sequence), shifted by the corpus seed:
// any run of consecutive pages covers the distribution evenly, so the
// corpus's quantiles are near their targets even for a few dozen pages.
func corpusPosition(number int, seed uint64, alpha float64) float64 {
	shift := math.Mod(float64(seed%1_000_003)*math.Phi, 1)
	u := math.Mod(float64(number)*alpha+shift, 1)
	return min(max(u, 0.001), 0.999)
}

// requestsAt is the number of requests at quantile u: log-linear between
// the target quantiles, and lognormal beyond them.
func requestsAt(u float64) int {
	q := RequestQuantiles
	logs := func(i int) float64 { return math.Log(q[i].Requests) }
	z := func(p float64) float64 { return distuv.UnitNormal.Quantile(p) }
	switch {
	case u <= q[0].P:
		slope := (logs(1) - logs(0)) / (z(q[1].P) - z(q[0].P))
		return int(math.Round(math.Exp(logs(0) + slope*(z(u)-z(q[0].P)))))
	case u >= q[4].P:
		slope := (logs(4) - logs(3)) / (z(q[4].P) - z(q[3].P))
		return int(math.Round(math.Exp(logs(4) + slope*(z(u)-z(q[4].P)))))
	}
	i := 0
	for u > q[i+1].P {
		i++
	}
	f := (z(u) - z(q[i].P)) / (z(q[i+1].P) - z(q[i].P))
	return int(math.Round(math.Exp(logs(i) + f*(logs(i+1)-logs(i)))))
}

// pagePlan is what a generated page holds: its request count per type and
// bytes per file.
type pagePlan struct {
	counts map[string]int
	sizes  map[string][]int64
	third  []string // the third-party origins it uses
}

// planPage draws page number of corpus seed: its requests, their split
// over the types (the types' median shares, jittered), each type's bytes
// from its own sequence, and the files' sizes.
func planPage(number int, seed uint64, rng *rand.Rand) pagePlan {
	total := max(requestsAt(corpusPosition(number, seed, math.Phi-1)), 8)
	weights := make([]float64, len(ResourceTypes))
	for i, t := range ResourceTypes {
		weights[i] = float64(t.MedianCount) * math.Exp(0.25*rng.NormFloat64())
	}
	counts := allocate(total, weights)
	counts[0] = max(counts[0], 1) // the document
	p := pagePlan{counts: map[string]int{}, sizes: map[string][]int64{}}
	for i, t := range ResourceTypes {
		p.counts[t.Name] = counts[i]
		if counts[i] == 0 {
			continue
		}
		u := corpusPosition(number, seed, t.weyl)
		bytes := float64(t.MedianBytes) * math.Exp(t.spread*distuv.UnitNormal.Quantile(u))
		p.sizes[t.Name] = split(int64(bytes), counts[i], t.minBytes, rng)
	}
	n := 2 + rng.IntN(len(thirdParties)-1)
	p.third = slices.Clone(thirdParties)
	rng.Shuffle(len(p.third), func(i, j int) { p.third[i], p.third[j] = p.third[j], p.third[i] })
	p.third = p.third[:n]
	return p
}

// allocate splits total into whole counts proportional to weights
// (largest remainders).
func allocate(total int, weights []float64) []int {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	counts := make([]int, len(weights))
	rems := make([]float64, len(weights))
	given := 0
	for i, w := range weights {
		exact := float64(total) * w / sum
		counts[i] = int(exact)
		rems[i] = exact - float64(counts[i])
		given += counts[i]
	}
	for ; given < total; given++ {
		best := 0
		for i := range rems {
			if rems[i] > rems[best] {
				best = i
			}
		}
		counts[best]++
		rems[best] = -1
	}
	return counts
}

// split divides bytes over n files with random shares (a flat Dirichlet),
// each at least minBytes.
func split(bytes int64, n int, minBytes int64, rng *rand.Rand) []int64 {
	shares := make([]float64, n)
	var sum float64
	for i := range shares {
		shares[i] = rng.ExpFloat64()
		sum += shares[i]
	}
	out := make([]int64, n)
	for i, s := range shares {
		out[i] = max(int64(float64(bytes)*s/sum), minBytes)
	}
	return out
}

// Web2024 generates page number of the web2024 corpus of seed: the same
// bytes for the same number and seed, on every machine.
func Web2024(page factor.Page) (*site.Site, error) {
	if page.Kind != factor.PageWeb2024 || page.Validate() != nil {
		return nil, fmt.Errorf("web2024 page %v: not a valid page of the corpus", page)
	}
	rng := rand.New(rand.NewPCG(page.CorpusSeed, uint64(page.Number)))
	b := newPageBuilder(page, planPage(page.Number, page.CorpusSeed, rng), rng)
	return b.build()
}

// Shape is what a duration model needs of a generated page without its
// bytes: its requests (the document included), the bytes its responses
// are sized to (on the wire, compressed where its type is), and the
// origins it may use (the first party, its static host and its third
// parties).
type Shape struct {
	Requests int
	Bytes    int64
	Origins  int
}

// Web2024Shape is page's Shape, drawn as Web2024 draws the page but
// without building it (microseconds, not the tens of milliseconds a
// page's bodies take).
func Web2024Shape(page factor.Page) (Shape, error) {
	if page.Kind != factor.PageWeb2024 || page.Validate() != nil {
		return Shape{}, fmt.Errorf("web2024 page %v: not a valid page of the corpus", page)
	}
	rng := rand.New(rand.NewPCG(page.CorpusSeed, uint64(page.Number)))
	p := planPage(page.Number, page.CorpusSeed, rng)
	s := Shape{Origins: 2 + len(p.third)}
	for _, n := range p.counts {
		s.Requests += n
	}
	for _, sizes := range p.sizes {
		for _, b := range sizes {
			s.Bytes += b
		}
	}
	return s, nil
}
