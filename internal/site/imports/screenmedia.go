package imports

import (
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/site"
)

// This file reads the screen from a third kind of offer: CSS that gives an
// element another image behind a resolution media query, as
// @media (-webkit-min-device-pixel-ratio: 1.5), (min-resolution: 1.5dppx)
// { … url(hero_small_2x.jpg) } beside url(hero_small.jpg). A screen at or
// above the query's threshold fetches the first, one below it the second.

// mediaRule finds an @media rule's prelude up to its block's opening brace.
var mediaRule = regexp.MustCompile(`(?i)@media([^{;]{0,1000})\{`)

// resolutionQuery finds a media query's lower bound on the screen's
// density: min-resolution in dppx, x, dpi or dpcm, or a (prefixed)
// min-device-pixel-ratio.
var resolutionQuery = regexp.MustCompile(`(?i)min-resolution\s*:\s*([0-9]*\.?[0-9]+)\s*(dppx|x|dpi|dpcm)|min-{1,2}(?:webkit-|moz-|o-)?device-pixel-ratio\s*:\s*([0-9]*\.?[0-9]+)|-(?:webkit|moz|o)-min-device-pixel-ratio\s*:\s*([0-9]*\.?[0-9]+)`)

// cssURL finds url() references in CSS.
var cssURL = regexp.MustCompile(`(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^'")\s]+))\s*\)`)

// resolutionThreshold is the lowest density a media prelude's queries
// name (its queries are alternatives); ok is false for a prelude that
// names none.
func resolutionThreshold(prelude string) (float64, bool) {
	lowest, ok := 0.0, false
	for _, m := range resolutionQuery.FindAllStringSubmatch(prelude, -1) {
		v, unit := m[1]+m[3]+m[4], strings.ToLower(m[2])
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d > 0) {
			continue
		}
		switch unit {
		case "dpi":
			d /= 96
		case "dpcm":
			d = d * 2.54 / 96
		}
		if !ok || d < lowest {
			lowest, ok = d, true
		}
	}
	return lowest, ok
}

// blockEnd is the index just past the block that opens before body[start]
// (start is just after its "{"), or len(body) for one never closed.
func blockEnd(body string, start int) int {
	depth := 1
	for i := start; i < len(body); i++ {
		switch body[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(body)
}

// withoutDensityMark is u with its file name's density marker removed;
// ok is false for a URL whose name has none.
func withoutDensityMark(u *url.URL) (string, bool) {
	dir, file := path.Split(u.Path)
	name, ok := site.WithoutDensityMarker(file)
	if !ok {
		return "", false
	}
	plain := *u
	plain.Path = dir + name
	plain.RawPath = ""
	return plain.String(), true
}

// resolutionChoices are the offers in body (CSS, or HTML with style
// blocks) of an image behind a resolution media query whose plain sibling
// (its name without the density marker) the recording fetched instead, or
// the other way round: exactly one of the two fetched.
func resolutionChoices(body string, base *url.URL, fetched map[string]bool) []densityChoice {
	var out []densityChoice
	for _, loc := range mediaRule.FindAllStringSubmatchIndex(body, -1) {
		threshold, ok := resolutionThreshold(body[loc[2]:loc[3]])
		if !ok {
			continue
		}
		block := body[loc[1]:blockEnd(body, loc[1])]
		for _, m := range cssURL.FindAllStringSubmatch(block, -1) {
			dense, err := base.Parse(strings.TrimSpace(m[1] + m[2] + m[3]))
			if err != nil {
				continue
			}
			dense.Host, dense.Fragment = strings.ToLower(dense.Host), ""
			plain, ok := withoutDensityMark(dense)
			if !ok || fetched[plain] == fetched[dense.String()] {
				continue
			}
			c := densityChoice{offered: []float64{1, threshold}, fetched: 1, threshold: threshold}
			if fetched[dense.String()] {
				c.fetched = threshold
			}
			out = append(out, c)
		}
	}
	return out
}
