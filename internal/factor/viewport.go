package factor

import (
	"fmt"
	"strconv"
	"strings"
)

// Viewport is the browser window a page is loaded in: Width × Height CSS
// pixels, Scale device pixels per CSS pixel (the device pixel ratio, by
// which a page picks its responsive images), and Mobile for a phone's
// browser, which lays the page out by its <meta name=viewport>. The zero
// Viewport means the default, DefaultViewport.
type Viewport struct {
	Width  int     `json:"width" yaml:"width"`
	Height int     `json:"height" yaml:"height"`
	Scale  float64 `json:"scale" yaml:"scale"`
	Mobile bool    `json:"mobile,omitempty" yaml:"mobile"`
}

// DefaultViewport is the viewport of a load nothing else sets one for: a
// common desktop screen, 1366 × 768 CSS pixels at a scale of 1.
func DefaultViewport() Viewport { return Viewport{Width: 1366, Height: 768, Scale: 1} }

// Limits of a viewport: sides in CSS pixels, the scale in device pixels
// per CSS pixel.
const (
	MinViewportSide  = 100
	MaxViewportSide  = 8192
	MinViewportScale = 0.5
	MaxViewportScale = 5
)

// IsZero says whether v is the zero Viewport (the default).
func (v Viewport) IsZero() bool { return v == Viewport{} }

// OrDefault is v, or DefaultViewport when v is zero.
func (v Viewport) OrDefault() Viewport {
	if v.IsZero() {
		return DefaultViewport()
	}
	return v
}

// String writes v as ParseViewport reads it: "1366x768@1",
// "411x731@2.625,mobile".
func (v Viewport) String() string {
	s := fmt.Sprintf("%dx%d@%s", v.Width, v.Height, strconv.FormatFloat(v.Scale, 'f', -1, 64))
	if v.Mobile {
		s += ",mobile"
	}
	return s
}

// ParseViewport reads WIDTHxHEIGHT[@SCALE][,mobile], such as "1366x768",
// "411x731@2.625,mobile" (the scale defaults to 1), and checks its limits.
func ParseViewport(s string) (Viewport, error) {
	bad := func(why string) (Viewport, error) {
		return Viewport{}, fmt.Errorf("viewport %q: %s; write WIDTHxHEIGHT[@SCALE][,mobile] in CSS pixels, such as 1366x768 or 411x731@2.625,mobile", s, why)
	}
	rest, mobile := strings.CutSuffix(strings.TrimSpace(s), ",mobile")
	size, scaleText, hasScale := strings.Cut(rest, "@")
	w, h, ok := strings.Cut(size, "x")
	if !ok {
		return bad("no WIDTHxHEIGHT")
	}
	v := Viewport{Scale: 1, Mobile: mobile}
	var err error
	if v.Width, err = strconv.Atoi(w); err != nil {
		return bad("the width is not a whole number")
	}
	if v.Height, err = strconv.Atoi(h); err != nil {
		return bad("the height is not a whole number")
	}
	if hasScale {
		if v.Scale, err = strconv.ParseFloat(scaleText, 64); err != nil {
			return bad("the scale is not a number")
		}
	}
	if err := v.Check(); err != nil {
		return bad(err.Error())
	}
	return v, nil
}

// Check says what is wrong with a viewport that is not the zero one.
func (v Viewport) Check() error {
	if v.IsZero() {
		return nil
	}
	for _, side := range []int{v.Width, v.Height} {
		if side < MinViewportSide || side > MaxViewportSide {
			return fmt.Errorf("a side of %d CSS pixels is outside %d–%d", side, MinViewportSide, MaxViewportSide)
		}
	}
	if !(v.Scale >= MinViewportScale && v.Scale <= MaxViewportScale) {
		return fmt.Errorf("a scale of %g is outside %g–%g", v.Scale, float64(MinViewportScale), float64(MaxViewportScale))
	}
	return nil
}

// devices are the phones whose browser a recording's User-Agent may
// name, with the viewport Chrome DevTools emulates them with, most
// specific first.
var devices = []struct {
	token    string
	viewport Viewport
}{
	{"Pixel 2 XL", Viewport{411, 823, 3.5, true}},
	{"Pixel 2", Viewport{411, 731, 2.625, true}},
	{"Nexus 5", Viewport{360, 640, 3, true}},
	{"Moto G (4)", Viewport{360, 640, 3, true}},
	{"iPhone", Viewport{390, 844, 3, true}},
}

// iPhoneEras are the iPhone viewport of each iOS version a User-Agent
// names, as the iPhones of its years showed pages: from the original
// (320 × 480 at 1) to the iPhone 12 onwards (390 × 844 at 3); from iOS
// (the first of its era) on.
var iPhoneEras = []struct {
	fromIOS  int
	viewport Viewport
}{
	{1, Viewport{320, 480, 1, true}},  // iPhone, 3G, 3GS
	{4, Viewport{320, 480, 2, true}},  // iPhone 4, 4S
	{7, Viewport{320, 568, 2, true}},  // iPhone 5, 5s
	{8, Viewport{375, 667, 2, true}},  // iPhone 6, 7, 8
	{13, Viewport{375, 812, 3, true}}, // iPhone X, 11 Pro
	{14, Viewport{390, 844, 3, true}}, // iPhone 12 and later
}

// iPhoneOfItsEra is the viewport of the iPhone an iPhone User-Agent's
// iOS version ("CPU iPhone OS 4_0 like Mac OS X") dates, and the device in
// words; ok is false for a User-Agent without one.
func iPhoneOfItsEra(ua string) (Viewport, string, bool) {
	_, rest, found := strings.Cut(ua, "iPhone OS ")
	if !found || !strings.Contains(ua, "iPhone;") && !strings.Contains(ua, "(iPhone") {
		return Viewport{}, "", false
	}
	digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
	major, err := strconv.Atoi(digits)
	if err != nil || major < 1 {
		return Viewport{}, "", false
	}
	v := iPhoneEras[0].viewport
	for _, e := range iPhoneEras {
		if major >= e.fromIOS {
			v = e.viewport
		}
	}
	return v, fmt.Sprintf("iPhone (iOS %d)", major), true
}

// genericPhone is the viewport of a phone's browser the User-Agent does
// not name a known device for: Lighthouse's mobile emulation (a Moto G
// Power).
var genericPhone = Viewport{412, 823, 1.75, true}

// ViewportOfUserAgent is the viewport a recording made by the browser
// that sent User-Agent ua implies, and the device it names: a known phone's
// (Pixel 2: 411 × 731 at 2.625), a generic phone's for another mobile
// browser, and the zero Viewport (the default) for a desktop browser, a
// tablet or an empty ua.
func ViewportOfUserAgent(ua string) (Viewport, string) {
	if v, device, ok := iPhoneOfItsEra(ua); ok {
		return v, device
	}
	for _, d := range devices {
		if strings.Contains(ua, d.token) {
			return d.viewport, d.token
		}
	}
	if strings.Contains(ua, "Mobile") && !strings.Contains(ua, "iPad") {
		return genericPhone, "an unnamed phone"
	}
	return Viewport{}, ""
}
