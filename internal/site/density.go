package site

import (
	"regexp"
	"strings"
)

// densityMarker finds a file name's pixel density marker: name@2x.png,
// name_2x.jpg, name-1.5x.png (before the next dot, or its end).
var densityMarker = regexp.MustCompile(`(?i)[@_-][0-9](?:\.[0-9]+)?x(\.|$)`)

// contentHash finds a run of eight hex digits or more: a build's content
// hash, which differs between a file's densities (yelp's
// restaurants.yji-bd314….png beside restaurants@2x.yji-bcc82….png).
var contentHash = regexp.MustCompile(`(?i)[0-9a-f]{8,}`)

// WithoutDensityMarker is a file name without its pixel density marker
// (name@2x.png: name.png); ok is false for a name that has none.
func WithoutDensityMarker(name string) (plain string, ok bool) {
	loc := densityMarker.FindStringSubmatchIndex(name)
	if loc == nil {
		return name, false
	}
	return name[:loc[0]] + name[loc[2]:], true
}

// densityName is path's directory and file name with its density marker
// removed and its content hashes blanked, the key its siblings at other
// densities share; marked says the name had a marker.
func densityName(path string) (key string, marked bool) {
	dir := path[:strings.LastIndexByte(path, '/')+1]
	name, marked := WithoutDensityMarker(fileName(path))
	return dir + contentHash.ReplaceAllString(strings.ToLower(name), "#"), marked
}

// HasDensitySibling says whether the site holds, on host with method, the
// file a request for path names at another pixel density: the same
// directory and name but for a density marker (@2x, _2x) on one of the
// two and their content hashes. A request for a density the recording
// lacks beside one it holds is a screen other than the recorded one, not
// a request it never saw.
func (m *Matcher) HasDensitySibling(host, method, path string) bool {
	if method == "HEAD" {
		method = "GET"
	}
	key, marked := densityName(path)
	if fileName(path) == "" {
		return false
	}
	for _, recordedMarked := range m.byDensity[host][method+" "+key] {
		if marked || recordedMarked {
			return true
		}
	}
	return false
}
