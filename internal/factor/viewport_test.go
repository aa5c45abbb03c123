package factor

import (
	"strings"
	"testing"
)

func TestParseViewport(t *testing.T) {
	for in, want := range map[string]Viewport{
		"1366x768":             {1366, 768, 1, false},
		"411x731@2.625,mobile": {411, 731, 2.625, true},
		" 800x600@2 ":          {800, 600, 2, false},
	} {
		got, err := ParseViewport(in)
		if err != nil || got != want {
			t.Errorf("ParseViewport(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := ParseViewport(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", in, got.String(), back, err)
		}
	}
	for in, why := range map[string]string{
		"1366":          "no WIDTHxHEIGHT",
		"axb":           "width",
		"10x768":        "outside",
		"1366x768@9":    "scale of 9",
		"1366x768@x":    "scale is not",
		"1366x768@NaN":  "scale of NaN",
		"1366x768,tiny": "height",
	} {
		_, err := ParseViewport(in)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "WIDTHxHEIGHT[@SCALE][,mobile]") {
			t.Errorf("ParseViewport(%q): %v, want an error saying %q and how to write one", in, err, why)
		}
	}
}

func TestViewportOfUserAgent(t *testing.T) {
	for ua, want := range map[string]Viewport{
		"Mozilla/5.0 (Linux; Android 8.0.0; Pixel 2) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/73.0.3683.90 Mobile Safari/537.36": {411, 731, 2.625, true},
		"Mozilla/5.0 (Linux; Android 8.0.0; Pixel 2 XL Build/OPD1.170816.004) Mobile Safari/537.36":                                   {411, 823, 3.5, true},
		"Mozilla/5.0 (Linux; Android 13; SM-S901B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/112.0 Mobile Safari/537.36":          genericPhone,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/95.0.4638.54 Safari/537.36":                    {},
		"Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148":                        {},
		"": {},
		// An iPhone at the screen of its iOS's years: 2010's iPhone 4, not a 2020s one.
		"Mozilla/5.0 (iPhone; U; CPU iPhone OS 4_0 like Mac OS X; en-us) AppleWebKit/532.9 (KHTML, like Gecko) Version/4.0.5 Mobile/8A293 Safari/6531.22.7": {320, 480, 2, true},
		"Mozilla/5.0 (iPhone; U; CPU iPhone OS 3_1_3 like Mac OS X; en-us) AppleWebKit/528.18 (KHTML, like Gecko) Version/4.0 Mobile/7E18 Safari/528.16":    {320, 480, 1, true},
		"Mozilla/5.0 (iPhone; CPU iPhone OS 10_3 like Mac OS X) AppleWebKit/602.1.50 (KHTML, like Gecko) Version/10.0 Mobile/14E5239e Safari/602.1":         {375, 667, 2, true},
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1":           {390, 844, 3, true},
		"Mozilla/5.0 (iPhone; CPU iPhone OS like Mac OS X) Mobile/15E148":                                                                                   {390, 844, 3, true}, // no version: the named device's
	} {
		if got, _ := ViewportOfUserAgent(ua); got != want {
			t.Errorf("ViewportOfUserAgent(%.60q) = %+v, want %+v", ua, got, want)
		}
	}
	if DefaultViewport().Check() != nil || genericPhone.Check() != nil {
		t.Error("a built-in viewport is out of the limits")
	}
	for _, d := range devices {
		if err := d.viewport.Check(); err != nil {
			t.Errorf("%s: %v", d.token, err)
		}
	}
}
