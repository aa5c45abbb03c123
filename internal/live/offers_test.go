package live

import (
	"strings"
	"testing"
)

func TestAdvertisesH3(t *testing.T) {
	for value, want := range map[string]bool{
		`h3=":443"; ma=86400`:                  true,
		`h3-29=":443", h3=":443"; ma=2592000`:  true,
		`h2=":443", h3="www.example.test:443"`: true,
		`h3=":8443"`:                           false,
		`h3="other.example.test:443"`:          false,
		`h3-29=":443"`:                         false,
		`clear`:                                false,
		``:                                     false,
		`quic=":443"; v="46,43", h3 = ":443" ; persist=1`: true,
	} {
		if got := AdvertisesH3(value, "www.example.test"); got != want {
			t.Errorf("%q: %v, want %v", value, got, want)
		}
	}
}

func TestFirstPaths(t *testing.T) {
	doc := []byte(`<link href="https://STATIC.example.test/css/site.css?v=3" rel=stylesheet>
<img src='//img.example.test/a.png'><script src="https://www.example.test/app.js"></script>
<a href="https://static.example.test/other">x</a>`)
	got := FirstPaths(doc, []string{"static.example.test", "img.example.test", "cdn.example.test"})
	if len(got) != 2 || got["static.example.test"] != "/css/site.css?v=3" || got["img.example.test"] != "/a.png" {
		t.Errorf("paths %q", got)
	}
}

func FuzzFirstPaths(f *testing.F) {
	f.Add([]byte(`<img src="https://a.test/x.png">`), "a.test")
	f.Add([]byte("//A.TEST/\xff\xfe"), "a.test")
	f.Fuzz(func(t *testing.T, doc []byte, host string) {
		for h, p := range FirstPaths(doc, []string{host}) {
			if h != host || !strings.HasPrefix(p, "/") || len(p) > MaxPathBytes {
				t.Errorf("%q: %q", h, p)
			}
		}
	})
}
