package loader

import (
	"net/url"
	"reflect"
	"testing"
)

func TestDiscover(t *testing.T) {
	base, _ := url.Parse("https://www.quicbench.test/dir/page.html")
	doc := `<!doctype html><html><head>
<link rel="stylesheet" href="/s.css"><link rel="icon" href="/favicon.ico"><link rel="Preload StyleSheet" href="b.css">
<script src="https://o2.quicbench.test/app.js"></script><script>var x = "<img src=no.png>";</script>
<style>body { background: url("bg.png") } .a { background: url( 'a.png' ) } .b { background:url(/b.png) }</style>
</head><body style="background-image: url(body.png)">
<img src="/obj/1.png"><img src="../obj/2.png"/><img src="/obj/1.png"><img src="data:image/png;base64,AAAA"><img src="#x"><img>
<a href="/not-loaded.html">link</a><iframe src="https://ads.adnetwork.test/frame.html"></iframe></body></html>`
	got := Discover(base, []byte(doc))
	want := []Ref{
		{"https://www.quicbench.test/s.css", KindStylesheet},
		{"https://www.quicbench.test/dir/b.css", KindStylesheet},
		{"https://o2.quicbench.test/app.js", KindScript},
		{"https://www.quicbench.test/dir/bg.png", KindCSSURL},
		{"https://www.quicbench.test/dir/a.png", KindCSSURL},
		{"https://www.quicbench.test/b.png", KindCSSURL},
		{"https://www.quicbench.test/dir/body.png", KindCSSURL},
		{"https://www.quicbench.test/obj/1.png", KindImage},
		{"https://www.quicbench.test/obj/2.png", KindImage},
		{"https://ads.adnetwork.test/frame.html", KindFrame},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover:\n got %v\nwant %v", got, want)
	}
	if n := countImages([]byte(doc)); n != 6 {
		t.Errorf("countImages = %d, want 6", n)
	}
}

func TestCSSURLs(t *testing.T) {
	base, _ := url.Parse("https://a.test/css/site.css")
	got := CSSURLs(base, []byte(`@font-face{src:url(f.woff2)} .x{background:url("../i.png")} .y{background:url(f.woff2)} .z{mask:url(data:x)}`))
	want := []string{"https://a.test/css/f.woff2", "https://a.test/i.png"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CSSURLs = %v, want %v", got, want)
	}
}

func FuzzDiscover(f *testing.F) {
	f.Add([]byte(`<img src="/a.png"><style>x{background:url(b.png)}</style>`))
	f.Add([]byte(`<link rel=stylesheet href=/s.css><script src=x.js>`))
	base, _ := url.Parse("https://www.quicbench.test/")
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, r := range Discover(base, doc) {
			u, err := url.Parse(r.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
				t.Errorf("Discover gave %q", r.URL)
			}
		}
	})
}
