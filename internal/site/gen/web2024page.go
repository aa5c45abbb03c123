package gen

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// pageBuilder assembles one generated page from its plan.
type pageBuilder struct {
	page    factor.Page
	plan    pagePlan
	rng     *rand.Rand
	site    *site.Site
	origins map[string]*site.Origin
	gz      gzipper
}

func newPageBuilder(page factor.Page, plan pagePlan, rng *rand.Rand) *pageBuilder {
	b := &pageBuilder{page: page, plan: plan, rng: rng, site: &site.Site{DocumentPath: "/"}, origins: map[string]*site.Origin{}}
	b.origin(firstParty) // the document's origin comes first
	return b
}

// origin returns the origin of host, adding it to the site on first use.
func (b *pageBuilder) origin(host string) *site.Origin {
	if o := b.origins[host]; o != nil {
		return o
	}
	o := &site.Origin{Host: host, Resources: map[string]*site.Resource{}}
	b.origins[host] = o
	b.site.Origins = append(b.site.Origins, o)
	return o
}

// uses reports whether the page uses third-party host.
func (b *pageBuilder) uses(host string) bool {
	for _, h := range b.plan.third {
		if h == host {
			return true
		}
	}
	return false
}

// hostFor picks the origin of a resource of type t: the first party's or,
// for the types third parties serve, one of the page's third parties.
func (b *pageBuilder) hostFor(t string) string {
	prefer := map[string][]string{
		"font":  {"fonts.typeface.test"},
		"js":    {"cdn.jsdelivery.test", "tags.tagmanager.test", "ads.adnetwork.test", "stats.analytics.test"},
		"image": {"img.imagecdn.test", "ads.adnetwork.test"},
		"other": {"stats.analytics.test", "ads.adnetwork.test"},
		"html":  {"ads.adnetwork.test"},
	}[t]
	var usable []string
	for _, h := range prefer {
		if b.uses(h) {
			usable = append(usable, h)
		}
	}
	if len(usable) > 0 && b.rng.Float64() < 0.5 {
		return usable[b.rng.IntN(len(usable))]
	}
	if t == "image" || t == "js" {
		return staticParty
	}
	return firstParty
}

// add stores body (compressed first if its type is) at a new path of type
// t on host and returns its URL.
func (b *pageBuilder) add(host string, t ResourceType, body []byte) string {
	o := b.origin(host)
	path := fmt.Sprintf("/%s/%d.%s", t.Name, len(o.Resources)+1, t.pathExtension)
	res := &site.Resource{Path: path, ContentType: t.contentType, Body: body}
	if t.compressed {
		res.Encoding = "gzip"
	}
	o.Resources[path] = res
	return "https://" + host + path
}

// gzipper compresses text as a server does: gzip at level 1, nginx's
// default gzip_comp_level. One writer is reused (making one costs more
// than compressing a small file).
type gzipper struct{ w *gzip.Writer }

func (g *gzipper) gzip(text []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(text) / 2)
	if g.w == nil {
		g.w, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	} else {
		g.w.Reset(&buf)
	}
	g.w.Write(text)
	g.w.Close()
	return buf.Bytes()
}

// fillerRatio is how many times smaller gzip makes the generated text:
// the first guess of fitCompressed.
const fillerRatio = 3.3

// fitCompressed builds a text whose gzip is about target bytes: text
// returns the text with n bytes of filler, and n is scaled until the
// compressed size is within 5 % (or after three tries). It returns the
// compressed bytes.
func (b *pageBuilder) fitCompressed(target int64, text func(n int) []byte) []byte {
	n := int(float64(target) * fillerRatio)
	var out []byte
	for range 3 {
		out = b.gz.gzip(text(n))
		got := int64(len(out))
		if got >= target*95/100 && got <= target*105/100 {
			break
		}
		n = max(int(float64(n)*float64(target)/float64(max(got, 1))), 0)
	}
	return out
}

// words is the vocabulary of generated text: web-page prose and code
// words, so that text compresses about as much as real pages' does.
var words = strings.Fields(`the a of and to in is for on with as by this that from at be are page load
network request response server client browser cache image script style font content data value
function return var const let if else document window element class width height color margin
padding display block flex grid none auto important transition transform opacity position relative
absolute top left right bottom border radius background url center text size weight line family
quic http stream packet loss delay rate queue congestion window handshake session ticket header
body section article header footer navigation menu button link label input form search product
price cart checkout account login user profile settings privacy policy terms contact about news`)

// filler writes n bytes of words to b, with sep between them.
func (bld *pageBuilder) filler(b *strings.Builder, n int, sep string) {
	b.Grow(n + 64)
	for start := b.Len(); b.Len()-start < n; {
		b.WriteString(words[bld.rng.IntN(len(words))])
		if bld.rng.IntN(9) == 0 {
			fmt.Fprintf(b, "%d", bld.rng.IntN(1000))
		}
		b.WriteString(sep)
	}
}

// build assembles the page: fonts, images, scripts, frames, styles and the
// document that refers to them.
func (b *pageBuilder) build() (*site.Site, error) {
	fonts := b.fonts()
	inline, backgrounds, injectedImages := b.images()
	late := b.others()
	sync, async, deferred, injectedScripts := b.scripts()
	frames := b.frames()
	tag := b.tagScript(injectedScripts, injectedImages, late)
	async = append([]string{tag}, async...)
	styles := b.styles(fonts, backgrounds)
	doc := b.document(styles, sync, async, deferred, inline, len(backgrounds), len(fonts), frames)
	b.origins[firstParty].Resources["/"] = &site.Resource{Path: "/", ContentType: resType("html").contentType, Encoding: "gzip", Body: doc}
	for _, o := range b.site.Origins {
		for path := range o.Resources {
			u := "https://" + o.Host + path
			if path != "/" || o.Host != firstParty {
				b.site.Subresources = append(b.site.Subresources, u)
			}
		}
	}
	b.site.Late = late
	b.site.Scripted = slices.Concat(injectedScripts, injectedImages)
	b.site.Parents = map[string]string{}
	reveal := func(parent string, kids []string) {
		for _, k := range kids {
			b.site.Parents[k] = parent
		}
	}
	if len(styles) > 0 {
		reveal(styles[0], fonts)
		reveal(styles[min(1, len(styles)-1)], backgrounds)
	}
	reveal(tag, slices.Concat(injectedScripts, injectedImages, late))
	b.site.Subresources = site.Without(b.site.Subresources, late)
	slices.Sort(b.site.Subresources) // a map gave them: one order for every run
	return b.site, b.site.Validate()
}

// fonts makes the page's font files (bytes that are not a real font: the
// browser downloads them, rejects them and keeps its fallback font).
func (b *pageBuilder) fonts() []string {
	var urls []string
	for _, size := range b.plan.sizes["font"] {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(b.rng.Uint32())
		}
		copy(body, "wOF2")
		urls = append(urls, b.add(b.hostFor("font"), resType("font"), body))
	}
	return urls
}

// images makes the page's images, valid PNGs of one colour padded to their
// sizes, and sorts them into <img> elements, CSS backgrounds (a fifth)
// and images a script injects (a sixth).
func (b *pageBuilder) images() (inline, backgrounds, injected []string) {
	for i, size := range b.plan.sizes["image"] {
		w, h := 320, 180
		if size < 2_000 {
			w, h = 48, 48
		}
		body := solidPNG(w, h, [3]byte{byte(b.rng.IntN(200)), byte(b.rng.IntN(200)), byte(b.rng.IntN(200))}, size)
		u := b.add(b.hostFor("image"), resType("image"), body)
		switch {
		case i%5 == 1:
			backgrounds = append(backgrounds, u)
		case i%6 == 2:
			injected = append(injected, u)
		default:
			inline = append(inline, u)
		}
	}
	return inline, backgrounds, injected
}

// others makes the JSON the tag script fetches after it runs: the load
// event does not wait for them.
func (b *pageBuilder) others() []string {
	var urls []string
	for _, size := range b.plan.sizes["other"] {
		body := b.fitCompressed(size, func(n int) []byte {
			var s strings.Builder
			s.WriteString(`{"items":["`)
			b.filler(&s, n, `","`)
			s.WriteString(`"]}`)
			return []byte(s.String())
		})
		urls = append(urls, b.add(b.hostFor("other"), resType("other"), body))
	}
	return urls
}

// scripts makes the page's scripts but the tag script (the first of
// them) and sorts them: synchronous in the head, async, deferred, and
// injected by the tag script, a quarter each.
func (b *pageBuilder) scripts() (sync, async, deferred, injected []string) {
	for i, size := range b.plan.sizes["js"][1:] {
		body := b.fitCompressed(size, func(n int) []byte {
			var s strings.Builder
			fmt.Fprintf(&s, "(function(){var words=[\"")
			b.filler(&s, n, `","`)
			s.WriteString("\"];window.__quicbenchScripts=(window.__quicbenchScripts||0)+1;})();\n")
			return []byte(s.String())
		})
		u := b.add(b.hostFor("js"), resType("js"), body)
		switch i % 4 {
		case 0:
			sync = append(sync, u)
		case 1:
			async = append(async, u)
		case 2:
			deferred = append(deferred, u)
		default:
			injected = append(injected, u)
		}
	}
	return sync, async, deferred, injected
}

// tagScript makes the first script, loaded async like a tag manager's: it
// injects scripts and images (which the load event waits for) and fetches
// the JSON (which it does not).
func (b *pageBuilder) tagScript(scripts, images, fetches []string) string {
	size := b.plan.sizes["js"][0]
	list := func(urls []string) string { return `["` + strings.Join(urls, `","`) + `"]` }
	body := b.fitCompressed(size, func(n int) []byte {
		var s strings.Builder
		fmt.Fprintf(&s, `(function(){
%s.forEach(function(u){var s=document.createElement("script");s.src=u;document.head.appendChild(s);});
%s.forEach(function(u){var i=document.createElement("img");i.src=u;i.width=160;i.height=90;i.alt="";document.body.appendChild(i);});
%s.forEach(function(u){fetch(u).then(function(r){return r.text();}).catch(function(){});});
var words=["`, list(scripts), list(images), list(fetches))
		b.filler(&s, n, `","`)
		s.WriteString("\"];})();\n")
		return []byte(s.String())
	})
	return b.add(b.hostFor("js"), resType("js"), body)
}

// frames makes the page's iframes' documents (the HTML files beyond the
// page's own).
func (b *pageBuilder) frames() []string {
	var urls []string
	for _, size := range b.plan.sizes["html"][1:] {
		body := b.fitCompressed(size, func(n int) []byte {
			var s strings.Builder
			s.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body style=\"margin:0;background:#e8e8e8\"><p>")
			b.filler(&s, n, " ")
			s.WriteString("</p></body></html>\n")
			return []byte(s.String())
		})
		urls = append(urls, b.add(b.hostFor("html"), resType("html"), body))
	}
	return urls
}

// styles makes the style sheets: the first declares the fonts, the text's
// font family and the classes .f2, .f3, … of the others, the second (or the first) the background images of
// the elements .bg1, .bg2, …; all are filled with rules to their sizes.
func (b *pageBuilder) styles(fonts, backgrounds []string) []string {
	var urls []string
	for i, size := range b.plan.sizes["css"] {
		var head strings.Builder
		if i == 0 {
			for j, f := range fonts {
				fmt.Fprintf(&head, "@font-face{font-family:\"Face%d\";src:url(%q) format(\"woff2\");font-display:swap}\n", j+1, f)
			}
			if len(fonts) > 0 {
				head.WriteString("body{font-family:\"Face1\",sans-serif}\n")
				for j := 2; j <= len(fonts); j++ {
					fmt.Fprintf(&head, ".f%d{font-family:\"Face%d\",serif}\n", j, j)
				}
			}
		}
		if i == min(1, len(b.plan.sizes["css"])-1) {
			for j, u := range backgrounds {
				fmt.Fprintf(&head, ".bg%d{background-image:url(%q);background-size:cover;width:320px;height:180px;display:inline-block}\n", j+1, u)
			}
		}
		body := b.fitCompressed(size, func(n int) []byte {
			var s strings.Builder
			s.WriteString(head.String())
			for start := s.Len(); s.Len()-start < n; {
				fmt.Fprintf(&s, ".%s-%d{margin:%dpx;padding:%dpx;color:#%03x;display:%s}\n", words[b.rng.IntN(len(words))], b.rng.IntN(500),
					b.rng.IntN(24), b.rng.IntN(24), b.rng.IntN(0x1000), []string{"block", "flex", "grid", "inline-block"}[b.rng.IntN(4)])
			}
			return []byte(s.String())
		})
		urls = append(urls, b.add(b.hostFor("css"), resType("css"), body))
	}
	return urls
}

// document writes the page's HTML and returns it compressed.
func (b *pageBuilder) document(styles, sync, async, deferred, images []string, backgrounds, fonts int, frames []string) []byte {
	return b.fitCompressed(b.plan.sizes["html"][0], func(n int) []byte {
		var s strings.Builder
		fmt.Fprintf(&s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\n<link rel=\"icon\" href=\"%s\"><title>quicbench %s</title>\n", NoIcon, b.page)
		for _, u := range styles {
			fmt.Fprintf(&s, "<link rel=\"stylesheet\" href=\"%s\">\n", html.EscapeString(u))
		}
		for _, u := range sync {
			fmt.Fprintf(&s, "<script src=\"%s\"></script>\n", html.EscapeString(u))
		}
		s.WriteString("</head>\n<body style=\"margin:8px\">\n<header><h1>A generated page of the web of 2024</h1></header>\n<main>\n<p>")
		b.filler(&s, min(n, 600), " ")
		s.WriteString("</p>\n")
		for _, u := range images {
			fmt.Fprintf(&s, "<img src=\"%s\" width=\"320\" height=\"180\" alt=\"\">\n", html.EscapeString(u))
		}
		for i := range backgrounds {
			fmt.Fprintf(&s, "<div class=\"bg%d\"></div>\n", i+1)
		}
		for _, u := range frames {
			fmt.Fprintf(&s, "<iframe src=\"%s\" width=\"300\" height=\"250\" title=\"frame\"></iframe>\n", html.EscapeString(u))
		}
		for f := 2; f <= fonts; f++ { // a browser fetches a font only for text that uses it
			fmt.Fprintf(&s, "<p class=\"f%d\">", f)
			b.filler(&s, 80, " ")
			s.WriteString("</p>\n")
		}
		s.WriteString("<p>")
		b.filler(&s, max(n-600, 0), " ")
		s.WriteString("</p>\n</main>\n")
		for _, u := range async {
			fmt.Fprintf(&s, "<script async src=\"%s\"></script>\n", html.EscapeString(u))
		}
		for _, u := range deferred {
			fmt.Fprintf(&s, "<script defer src=\"%s\"></script>\n", html.EscapeString(u))
		}
		s.WriteString("</body></html>\n")
		return []byte(s.String())
	})
}
