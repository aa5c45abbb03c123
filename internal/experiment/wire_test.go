package experiment

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/site"
)

// TestCalibrationAsksTheLargestOriginForAFewWindows: the calibration
// download takes the origin that serves the most bytes, its largest GET
// responses first, until they pass calibrationBytes (h2, h3), or its
// largest alone (h1); POSTs and errors are not asked for.
func TestCalibrationAsksTheLargestOriginForAFewWindows(t *testing.T) {
	small := &site.Origin{Host: "small.test", Resources: map[string]*site.Resource{"/a": {Path: "/a", Body: make([]byte, 50_000)}}}
	big := &site.Origin{Host: "big.test", Resources: map[string]*site.Resource{}}
	for i := range 40 {
		path := fmt.Sprintf("/o/%02d", i)
		big.Resources[path] = &site.Resource{Path: path, Body: make([]byte, 10_000+i)}
	}
	big.Resources["/post"] = &site.Resource{Path: "/post", Method: "POST", Body: make([]byte, 900_000)}
	big.Resources["/err"] = &site.Resource{Path: "/err", Status: 500, Body: make([]byte, 900_000)}
	page := &site.Site{Origins: []*site.Origin{small, big}}
	urls := calibrationURLs(page, false)
	if len(urls) != 14 || urls[0] != "https://big.test/o/39" || !slices.IsSortedFunc(urls, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("h2/h3 calibration asks for %d URLs: %v; want the 14 largest of big.test (just past 128 KB), largest first", len(urls), urls)
	}
	if got := calibrationSize(page, false); got < calibrationBytes || got > calibrationBytes+10_100 {
		t.Errorf("h2/h3 calibration size %d B, want just past %d", got, calibrationBytes)
	}
	if one := calibrationURLs(page, true); len(one) != 1 || one[0] != "https://big.test/o/39" {
		t.Errorf("h1 calibration %v, want the largest alone", one)
	}
	if calibrationURLs(nil, false) != nil {
		t.Error("a live page (no site) has calibration URLs")
	}
}
