package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/results"
)

// UnmatchedURL is one request a recorded page's loads asked for that the
// recording did not hold, with why it was or was not excused
// (results.Cause*) and in how many loads.
type UnmatchedURL struct {
	Request string // "METHOD URL"
	Cause   string
	Loads   int
}

// VariantURL is one request a recorded page's loads asked for that the
// servers answered with a variant: the response recorded for the same
// file at another size (Served, its request target), in how many loads.
type VariantURL struct {
	Request string // "METHOD URL"
	Served  string
	Loads   int
}

// BrokenImage is one image a recorded page's verified loads could not
// show, with why (results.Broken*), in how many loads.
type BrokenImage struct {
	URL   string
	Cause string
	Loads int
}

// SiteUnmatched is what a recorded page's verified loads asked for that
// the recording lacked, per distinct request, what of it was answered with
// a variant, the images they could not show, and the screen the page was
// replayed at ("411x731@1,mobile"; "" where no load says).
type SiteUnmatched struct {
	Page     string
	Screen   string
	Loads    int
	ByCause  map[string]int // distinct requests per cause
	URLs     []UnmatchedURL // by cause, then loads, most first
	Variants []VariantURL   // by loads, most first
	Broken   []BrokenImage  // by loads, most first
}

// Unmatched is, per recorded page with unmatched requests, each distinct
// unmatched request of its verified loads with its cause, from the
// trials' unmatched_urls and unmatched_causes (runs made before the
// causes were recorded list none), each distinct request answered with
// a variant (variant_urls), and each distinct broken image
// (broken_image_urls and broken_image_causes).
func Unmatched(trials []results.Trial) []SiteUnmatched {
	byPage := map[string]*SiteUnmatched{}
	seen := map[string]map[UnmatchedURL]int{}
	variants := map[string]map[VariantURL]int{}
	screens := map[string]map[string]int{}
	broken := map[string]map[BrokenImage]int{}
	for _, t := range trials {
		if t.Status != results.StatusOK || len(t.UnmatchedCauses)+len(t.VariantURLs)+len(t.BrokenImageCauses) == 0 {
			continue
		}
		s := byPage[t.Page]
		if s == nil {
			s = &SiteUnmatched{Page: t.Page, ByCause: map[string]int{}}
			byPage[t.Page], seen[t.Page], screens[t.Page] = s, map[UnmatchedURL]int{}, map[string]int{}
			variants[t.Page], broken[t.Page] = map[VariantURL]int{}, map[BrokenImage]int{}
		}
		countVariants(variants[t.Page], t.VariantURLs)
		countBroken(broken[t.Page], t.BrokenImageURLs, t.BrokenImageCauses)
		s.Loads++
		if t.ViewportWidth > 0 {
			screens[t.Page][screenText(t.VisualMetrics)]++
		}
		inLoad := map[UnmatchedURL]bool{} // a load may ask twice: counted once
		for i, req := range t.UnmatchedURLs[:min(len(t.UnmatchedURLs), len(t.UnmatchedCauses))] {
			if u := (UnmatchedURL{Request: req, Cause: t.UnmatchedCauses[i]}); !inLoad[u] {
				inLoad[u] = true
				seen[t.Page][u]++
			}
		}
	}
	var out []SiteUnmatched
	for _, page := range slices.Sorted(maps.Keys(byPage)) {
		s := byPage[page]
		s.Screen = mostCommon(screens[page])
		s.fill(seen[page], variants[page], broken[page])
		out = append(out, *s)
	}
	return out
}

// fill lists s's distinct unmatched requests, variants and broken images
// from their counts of loads, each in its order.
func (s *SiteUnmatched) fill(seen map[UnmatchedURL]int, variants map[VariantURL]int, broken map[BrokenImage]int) {
	for u, n := range seen {
		u.Loads = n
		s.URLs = append(s.URLs, u)
		s.ByCause[u.Cause]++
	}
	slices.SortFunc(s.URLs, func(a, b UnmatchedURL) int {
		return cmp.Or(cmp.Compare(a.Cause, b.Cause), cmp.Compare(b.Loads, a.Loads), cmp.Compare(a.Request, b.Request))
	})
	for v, n := range variants {
		v.Loads = n
		s.Variants = append(s.Variants, v)
	}
	slices.SortFunc(s.Variants, func(a, b VariantURL) int {
		return cmp.Or(cmp.Compare(b.Loads, a.Loads), cmp.Compare(a.Request, b.Request))
	})
	for b, n := range broken {
		b.Loads = n
		s.Broken = append(s.Broken, b)
	}
	slices.SortFunc(s.Broken, func(a, b BrokenImage) int {
		return cmp.Or(cmp.Compare(b.Loads, a.Loads), cmp.Compare(a.URL, b.URL))
	})
}

// countVariants counts each distinct variant of one load's listed
// ("METHOD URL TARGET") once into loads.
func countVariants(loads map[VariantURL]int, listed []string) {
	inLoad := map[VariantURL]bool{}
	for _, entry := range listed {
		f := strings.SplitN(entry, " ", 3)
		if len(f) != 3 {
			continue
		}
		if v := (VariantURL{Request: f[0] + " " + f[1], Served: f[2]}); !inLoad[v] {
			inLoad[v] = true
			loads[v]++
		}
	}
}

// countBroken counts each distinct broken image of one load (its URLs
// and their causes, in order) once into loads.
func countBroken(loads map[BrokenImage]int, urls, causes []string) {
	inLoad := map[BrokenImage]bool{}
	for i, u := range urls[:min(len(urls), len(causes))] {
		if b := (BrokenImage{URL: u, Cause: causes[i]}); !inLoad[b] {
			inLoad[b] = true
			loads[b]++
		}
	}
}

// screenText is a load's viewport in words: "411x731@1,mobile".
func screenText(v results.VisualMetrics) string {
	text := fmt.Sprintf("%dx%d@%g", v.ViewportWidth, v.ViewportHeight, v.ViewportScale)
	if v.ViewportMobile {
		text += ",mobile"
	}
	return text
}

// mostCommon is the key counted most (the first in order on a tie), ""
// for none.
func mostCommon(counts map[string]int) string {
	best := ""
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if counts[k] > counts[best] {
			best = k
		}
	}
	return best
}
