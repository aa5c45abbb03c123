package imports

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// This file reads the screen a recording was made at from its own
// requests: where a page offers an image at several pixel densities
// (srcset's 1x, 2x; CSS image-set), the candidate the recording browser
// fetched says its device pixel ratio, which a User-Agent only guesses
// (a phone's browser may have been emulated at 1x).

// densityChoice is one offer of an image at several densities (offered,
// ascending) whose fetched candidate the recording shows.
type densityChoice struct {
	offered []float64
	fetched float64
}

// picks reports whether a browser at device pixel ratio dpr fetches c's
// fetched candidate: the smallest density at or above dpr, else the
// largest (as Chromium and Firefox choose without a network hint).
func (c densityChoice) picks(dpr float64) bool {
	for _, d := range c.offered {
		if d >= dpr-1e-9 {
			return d == c.fetched
		}
	}
	return c.offered[len(c.offered)-1] == c.fetched
}

// srcsetAttr finds srcset attributes' values in HTML.
var srcsetAttr = regexp.MustCompile(`(?is)\bsrcset\s*=\s*("([^"]*)"|'([^']*)')`)

// imageSet finds CSS image-set() and -webkit-image-set() arguments.
var imageSet = regexp.MustCompile(`(?is)image-set\(\s*((?:[^()]|\([^()]*\))*)\)`)

// maxScreenBodyBytes bounds the body a screen inference reads per exchange.
const maxScreenBodyBytes = 4 << 20

// densityChoices are the offers of images at several densities in the
// recording's HTML and CSS whose one fetched candidate it holds.
func densityChoices(exchanges []*site.Exchange) []densityChoice {
	fetched := map[string]bool{}
	for _, ex := range exchanges {
		if ex.Method == "GET" {
			fetched[ex.URL] = true
		}
	}
	var out []densityChoice
	for _, ex := range exchanges {
		kind := site.TypeOf(site.Get(ex.Header, "content-type"))
		if (kind != "html" && kind != "css") || len(ex.Body) == 0 || len(ex.Body) > maxScreenBodyBytes {
			continue
		}
		body, err := site.DecodeContent(site.Get(ex.Header, "content-encoding"), ex.Body)
		if err != nil {
			continue
		}
		base, err := url.Parse(ex.URL)
		if err != nil {
			continue
		}
		for _, set := range candidateSets(string(body), kind) {
			if c, ok := fetchedDensity(set, base, fetched); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// candidateSets are the density-described candidate lists in body: each
// srcset's, in HTML; each image-set's, in HTML (inline styles) and CSS.
func candidateSets(body, kind string) []string {
	var sets []string
	if kind == "html" {
		for _, m := range srcsetAttr.FindAllStringSubmatch(body, -1) {
			sets = append(sets, m[2]+m[3])
		}
	}
	for _, m := range imageSet.FindAllStringSubmatch(body, -1) {
		sets = append(sets, m[1])
	}
	return sets
}

// candidate is one image URL with its density.
type candidate struct {
	url     string
	density float64
}

// fetchedDensity is the choice set offers, when it offers two densities
// or more (x descriptors; a candidate without one is 1x) and the
// recording fetched exactly one of its candidates.
func fetchedDensity(set string, base *url.URL, fetched map[string]bool) (densityChoice, bool) {
	var c densityChoice
	got := 0
	for _, cand := range parseCandidates(set) {
		if !slices.Contains(c.offered, cand.density) {
			c.offered = append(c.offered, cand.density)
		}
		u, err := base.Parse(strings.Trim(cand.url, `"'`))
		if err != nil {
			continue
		}
		u.Host, u.Fragment = strings.ToLower(u.Host), ""
		if fetched[u.String()] {
			c.fetched, got = cand.density, got+1
		}
	}
	slices.Sort(c.offered)
	return c, len(c.offered) >= 2 && got == 1
}

// parseCandidates splits a srcset or image-set list into its candidates;
// those with a width descriptor (w), which need the layout to read, are
// left out.
func parseCandidates(set string) []candidate {
	var out []candidate
	for _, part := range strings.Split(set, ",") {
		fields := strings.Fields(strings.TrimSpace(part))
		if len(fields) == 0 {
			continue
		}
		u := fields[0]
		if inner, ok := strings.CutPrefix(u, "url("); ok {
			u = strings.TrimSuffix(inner, ")")
		}
		c := candidate{url: u, density: 1}
		if len(fields) > 1 {
			d := strings.ToLower(fields[len(fields)-1])
			switch {
			case strings.HasSuffix(d, "w"):
				continue
			case strings.HasSuffix(d, "x"):
				v, err := strconv.ParseFloat(strings.TrimSuffix(d, "x"), 64)
				if err != nil || !(v > 0) {
					continue
				}
				c.density = v
			}
		}
		out = append(out, c)
	}
	return out
}

// minDensityChoices is the fewest fetched candidates that decide the
// screen's density: one image could be a page's own choice.
const minDensityChoices = 2

// densityOf is the device pixel ratio that picks the candidate the
// recording fetched in more than half of choices, preferring prefer (the
// User-Agent's), then the lowest; with how many it picks; ok is false
// for none, or below minDensityChoices.
func densityOf(choices []densityChoice, prefer float64) (dpr float64, votes int, ok bool) {
	if len(choices) < minDensityChoices {
		return 0, 0, false
	}
	tried := []float64{prefer}
	for _, c := range choices {
		if !slices.Contains(tried, c.fetched) {
			tried = append(tried, c.fetched)
		}
	}
	slices.Sort(tried[1:])
	for _, d := range tried {
		n := 0
		for _, c := range choices {
			if c.picks(d) {
				n++
			}
		}
		if n > votes {
			dpr, votes = d, n
		}
	}
	return dpr, votes, votes > len(choices)/2
}

// screenOf is the viewport to replay a at and what decided it: the
// import's --viewport; else the User-Agent's device (or the default) at
// the device pixel ratio the recording's own image choices show, where
// they show one; else the User-Agent's; else the default.
func (c *collector) screenOf(a *site.Archive) (factor.Viewport, string) {
	if c.options.SetViewport {
		return c.options.Viewport, "--viewport"
	}
	v, device := factor.ViewportOfUserAgent(a.UserAgent)
	source := "the default"
	if device != "" {
		source = "the User-Agent: " + device
	}
	choices := densityChoices(a.Exchanges)
	dpr, votes, ok := densityOf(choices, v.OrDefault().Scale)
	switch {
	case !ok:
		return v, source
	case dpr == v.OrDefault().Scale:
		return v, fmt.Sprintf("%s, as %d of the recording's %d image choices at several densities confirm", source, votes, len(choices))
	}
	scaled := v.OrDefault()
	scaled.Scale = dpr
	if scaled.Check() != nil {
		return v, source
	}
	return scaled, fmt.Sprintf("the recording's requests: %d of its %d image choices at several densities fetched what a %gx screen fetches (the User-Agent alone said %v)", votes, len(choices), dpr, v.OrDefault())
}
