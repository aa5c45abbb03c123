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
// (srcset's 1x, 2x; CSS image-set; srcset's widths, 320w, 640w, over the
// slot its sizes give at the viewport's width), the candidate the
// recording browser fetched says its device pixel ratio, which a
// User-Agent only guesses (a phone's browser may have been emulated at
// 1x).

// densityChoice is one offer of an image at several densities (offered,
// ascending) whose fetched candidate the recording shows; byWidth says the
// densities are widths over the image's slot, not the page's own.
type densityChoice struct {
	offered []float64
	fetched float64
	byWidth bool
	// threshold is a resolution media query's bound (0 for a srcset or
	// image-set): a screen at or above it fetches the denser image.
	threshold float64
}

// commonDensities are device pixel ratios screens have, tried beside the
// User-Agent's and those a page's x descriptors name: a width-described
// choice's densities (such as 640/411) are no screen's.
var commonDensities = []float64{1, 2, 3}

// picks reports whether a browser at device pixel ratio dpr fetches c's
// fetched candidate: the smallest density at or above dpr, else the
// largest (as Chromium and Firefox choose without a network hint); for a
// media query's choice, the side of its threshold dpr is on.
func (c densityChoice) picks(dpr float64) bool {
	if c.threshold > 0 {
		return (dpr >= c.threshold-1e-9) == (c.fetched >= c.threshold)
	}
	for _, d := range c.offered {
		if d >= dpr-1e-9 {
			return d == c.fetched
		}
	}
	return c.offered[len(c.offered)-1] == c.fetched
}

// srcsetTag finds the HTML tags with a srcset attribute, or a lazy
// loader's (data-srcset, which its script makes the srcset).
var srcsetTag = regexp.MustCompile(`(?is)<[a-z][a-z0-9-]*\s[^>]*?srcset[^>]*>`)

// srcsetAttr and sizesAttr find a tag's srcset and sizes values, or a
// lazy loader's (data-srcset, data-sizes).
var (
	srcsetAttr = regexp.MustCompile(`(?is)[\s-]srcset\s*=\s*("([^"]*)"|'([^']*)')`)
	sizesAttr  = regexp.MustCompile(`(?is)[\s-]sizes\s*=\s*("([^"]*)"|'([^']*)')`)
	// srcAttr finds an img's src (or a lazy loader's data-src): the
	// candidate at 1x its srcset implies when it describes none.
	srcAttr = regexp.MustCompile(`(?is)[\s-]src\s*=\s*("([^"]*)"|'([^']*)')`)
)

// imageSet finds CSS image-set() and -webkit-image-set() arguments.
var imageSet = regexp.MustCompile(`(?is)image-set\(\s*((?:[^()]|\([^()]*\))*)\)`)

// maxScreenBodyBytes bounds the body a screen inference reads per exchange.
const maxScreenBodyBytes = 4 << 20

// densityChoices are the offers of images at several densities in the
// recording's HTML and CSS whose one fetched candidate it holds (srcsets,
// image-sets, resolution media queries), widths read at a viewport
// viewportWidth CSS px wide.
func densityChoices(exchanges []*site.Exchange, viewportWidth float64) []densityChoice {
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
			if c, ok := fetchedDensity(set, base, fetched, viewportWidth); ok {
				out = append(out, c)
			}
		}
		out = append(out, resolutionChoices(string(body), base, fetched)...)
	}
	return out
}

// candidateSet is one list of an image's candidates, with the sizes of
// its element ("" for none, or for an image-set) and its src ("" for
// none): HTML adds the src as the 1x candidate of a srcset of densities
// that offers no 1x.
type candidateSet struct{ list, sizes, src string }

// candidateSets are the candidate lists in body: each srcset (or
// data-srcset) of an HTML tag with the tag's sizes (or data-sizes); each
// image-set's, in HTML (inline styles) and CSS.
func candidateSets(body, kind string) []candidateSet {
	var sets []candidateSet
	if kind == "html" {
		for _, tag := range srcsetTag.FindAllString(body, -1) {
			sizes, src := "", ""
			if sz := sizesAttr.FindStringSubmatch(tag); sz != nil {
				sizes = sz[2] + sz[3]
			}
			if m := srcAttr.FindStringSubmatch(tag); m != nil {
				src = strings.TrimSpace(m[2] + m[3])
			}
			for _, m := range srcsetAttr.FindAllStringSubmatch(tag, -1) {
				sets = append(sets, candidateSet{list: m[2] + m[3], sizes: sizes, src: src})
			}
		}
	}
	for _, m := range imageSet.FindAllStringSubmatch(body, -1) {
		sets = append(sets, candidateSet{list: m[1]})
	}
	return sets
}

// slotWidth is the width in CSS px of an image whose element's sizes is
// sizes, on a viewport viewportWidth wide: 100vw without sizes, else a
// single length in px or vw; ok is false for anything else (media
// conditions, calc(), auto), which needs the layout to read.
func slotWidth(sizes string, viewportWidth float64) (float64, bool) {
	sizes = strings.ToLower(strings.TrimSpace(sizes))
	unit, scale := "vw", viewportWidth/100
	if sizes == "" {
		return viewportWidth, viewportWidth > 0
	}
	if strings.HasSuffix(sizes, "px") {
		unit, scale = "px", 1
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(sizes, unit), 64)
	if err != nil || !(v > 0) || v*scale > 1e5 {
		return 0, false
	}
	return v * scale, true
}

// candidate is one image URL with its density, or its width (w
// descriptor; 0 for none).
type candidate struct {
	url            string
	density, width float64
}

// fetchedDensity is the choice set offers, when it offers two densities
// or more (x descriptors, a candidate without one 1x; or w descriptors
// over the slot its sizes give at viewportWidth, all its candidates
// described so; an img's src is the 1x of densities without one) and the
// recording fetched exactly one of its candidates.
func fetchedDensity(set candidateSet, base *url.URL, fetched map[string]bool, viewportWidth float64) (densityChoice, bool) {
	var c densityChoice
	cands := parseCandidates(set.list)
	widths := 0
	for _, cand := range cands {
		if cand.width > 0 {
			widths++
		}
	}
	if widths > 0 {
		slot, ok := slotWidth(set.sizes, viewportWidth)
		if !ok || widths != len(cands) {
			return c, false
		}
		for i := range cands {
			cands[i].density = cands[i].width / slot
		}
		c.byWidth = true
	}
	if widths == 0 && set.src != "" && !slices.ContainsFunc(cands, func(c candidate) bool { return c.density == 1 }) {
		cands = append(cands, candidate{url: set.src, density: 1})
	}
	got := 0
	for _, cand := range cands {
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

// parseCandidates splits a srcset or image-set list into its candidates,
// each with its density or width; one whose descriptor does not parse is
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
				v, err := strconv.ParseFloat(strings.TrimSuffix(d, "w"), 64)
				if err != nil || !(v > 0) || v > 1e5 {
					continue
				}
				c.width = v
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

// minDensityChoices is the fewest fetched candidates that overrule the
// User-Agent's density when it picks some of them: one image could be a
// page's own choice. Choices of which it picks none overrule it however
// few: replayed at it, the page would ask for images the recording lacks.
const minDensityChoices = 2

// densityOf is the device pixel ratio that picks the candidate the
// recording fetched in more than half of choices, preferring prefer (the
// User-Agent's), then the lowest; with how many it picks; ok is false
// for none, or below minDensityChoices where prefer picks any.
func densityOf(choices []densityChoice, prefer float64) (dpr float64, votes int, ok bool) {
	if len(choices) == 0 || (len(choices) < minDensityChoices && picksAny(choices, prefer)) {
		return 0, 0, false
	}
	tried := []float64{prefer}
	for _, d := range commonDensities {
		if !slices.Contains(tried, d) {
			tried = append(tried, d)
		}
	}
	for _, c := range choices {
		if !c.byWidth && c.threshold == 0 && !slices.Contains(tried, c.fetched) {
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
	choices := densityChoices(a.Exchanges, float64(v.OrDefault().Width))
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

// picksAny says whether a screen at dpr fetches what the recording
// fetched in any of choices.
func picksAny(choices []densityChoice, dpr float64) bool {
	return slices.ContainsFunc(choices, func(c densityChoice) bool { return c.picks(dpr) })
}
