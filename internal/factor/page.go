package factor

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/units"
)

// PageKind is the kind of a page: how its bytes come about.
type PageKind string

// The page kinds.
const (
	// PageSynthetic is an HTML document with N images of exactly SIZE
	// bytes, each a distinct URL: "synthetic:NxSIZE".
	PageSynthetic PageKind = "synthetic"
	// PageWeb2024 is page N of a generated corpus whose pages follow the
	// HTTP Archive's 2024 desktop distributions: "web2024:N", or
	// "web2024:N@SEED" for another corpus than seed 1.
	PageWeb2024 PageKind = "web2024"
	// PageArchive is a recorded site replayed from a site archive
	// directory: "archive:DIR" (made by quicbench import or record).
	PageArchive PageKind = "archive"
	// PageLive is a deployed site's page, loaded where it is served
	// through the emulated link: "url:https://host/path".
	PageLive PageKind = "url"
)

// PageKinds is the page-kind part of the page factor.
func PageKinds() Enum[PageKind] {
	return Enum[PageKind]{What: "page kind", Levels: []Level[PageKind]{
		{PageSynthetic, "synthetic:NxSIZE, an HTML document with N images of SIZE bytes (KB = 1000 B, KiB = 1024 B); synthetic:NxSIZE+waitDURATION has the server hold every response that long (Go origin)"},
		{PageWeb2024, "web2024:N, page N of a generated corpus shaped like the web of 2024 (CSS, fonts, scripts, images, third-party origins; web2024:N@SEED for corpus SEED)"},
		{PageArchive, "archive:DIR, a recorded site replayed from the site archive DIR (quicbench import, quicbench record)"},
		{PageLive, "url:https://HOST/PATH, your own deployed site, loaded live through the emulated link and the host's network (--resolve pins a staging address)"},
	}}
}

// Limits of synthetic pages.
const (
	MaxObjects     = 10_000
	MaxObjectBytes = 1 << 30
	// MaxPageBytes bounds a page's objects together, in bytes: every
	// server holds the page in memory, and the largest pages of the web
	// are a few tens of megabytes.
	MaxPageBytes = 256 << 20
	// MinObjectBytes is the smallest valid PNG the synthetic generator
	// makes (package site checks that it is so).
	MinObjectBytes = 83
)

// MaxCorpusPage is the highest page number of a generated corpus.
const MaxCorpusPage = 100_000

// Page is one level of the page factor.
type Page struct {
	Kind PageKind
	// Objects is the number of objects the document loads (synthetic).
	Objects int
	// ObjectBytes is the size of each object in bytes (synthetic).
	ObjectBytes int64
	// Number is the page's number in its corpus, from 1, and CorpusSeed
	// the corpus's seed (web2024).
	Number     int
	CorpusSeed uint64
	// Archive is the site archive directory as written (archive): a
	// relative path is relative to the spec file's directory.
	Archive string
	// URL is a live page's https URL, as ParseLiveURL gives it (live).
	URL string
	// ServerWait is how long the server holds every response of a
	// synthetic page before its first byte, its think time, written
	// "+wait" and a duration after the size, such as
	// "synthetic:8x10KB+wait200ms"; 0 for none.
	ServerWait time.Duration
}

// MaxServerWait bounds a synthetic page's server wait.
const MaxServerWait = 10 * time.Second

// waitMark separates a synthetic page's size from its server wait.
const waitMark = "+wait"

// MaxArchivePath bounds the length of an archive page's directory, in bytes.
const MaxArchivePath = 1024

// OwnOrigins reports whether the page brings its own origins (a generated
// or recorded page) rather than being spread over the origins factor.
func (p Page) OwnOrigins() bool {
	return p.Generated() || p.Kind == PageArchive || p.Kind == PageLive
}

// Generated reports whether the page comes from a generated corpus, which
// has its own origins.
func (p Page) Generated() bool { return p.Kind == PageWeb2024 }

// String gives the page in the form ParsePage reads, with the largest
// unit that divides the size exactly, such as "synthetic:32x10KB", or
// "web2024:7" (corpus seed 1) and "web2024:7@3".
func (p Page) String() string {
	if p.Kind == PageArchive {
		return string(p.Kind) + ":" + p.Archive
	}
	if p.Kind == PageLive {
		return string(p.Kind) + ":" + p.URL
	}
	if p.Generated() {
		if p.CorpusSeed == 1 {
			return fmt.Sprintf("%s:%d", p.Kind, p.Number)
		}
		return fmt.Sprintf("%s:%d@%d", p.Kind, p.Number, p.CorpusSeed)
	}
	size := strconv.FormatInt(p.ObjectBytes, 10) + "B"
	for _, u := range []struct {
		name   string
		factor int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if p.ObjectBytes%u.factor == 0 {
			size = strconv.FormatInt(p.ObjectBytes/u.factor, 10) + u.name
			break
		}
	}
	if p.ServerWait > 0 {
		size += waitMark + p.ServerWait.String()
	}
	return fmt.Sprintf("%s:%dx%s", p.Kind, p.Objects, size)
}

// Web2024MedianBytes is the median page weight the web2024 corpus
// follows, in bytes (HTTP Archive 2024, desktop).
const Web2024MedianBytes = 2_650_000

// ObjectsBytes is the bytes of all objects, the document left out (for a
// generated page, the median page weight of its corpus).
func (p Page) ObjectsBytes() int64 {
	if p.OwnOrigins() {
		return Web2024MedianBytes
	}
	return int64(p.Objects) * p.ObjectBytes
}

// ParsePage parses a page such as "synthetic:32x10KB" or "web2024:7".
func ParsePage(arg string) (Page, error) {
	const usage = "use synthetic:NxSIZE, for example synthetic:32x10KB, web2024:N, for example web2024:7, archive:DIR or url:https://HOST/PATH"
	kind, rest, ok := strings.Cut(arg, ":")
	if !ok || !PageKinds().Has(PageKind(kind)) {
		return Page{}, fmt.Errorf("page %.300q is not supported: %s", arg, usage)
	}
	if PageKind(kind) == PageArchive {
		p := Page{Kind: PageArchive, Archive: rest}
		if err := p.Validate(); err != nil {
			return Page{}, fmt.Errorf("page %.300q: %w", arg, err)
		}
		return p, nil
	}
	if PageKind(kind) == PageWeb2024 {
		return parseCorpusPage(arg, rest)
	}
	if PageKind(kind) == PageLive {
		u, err := ParseLiveURL(rest)
		if err != nil {
			return Page{}, err
		}
		return Page{Kind: PageLive, URL: u.String()}, nil
	}
	rest, waitText, hasWait := strings.Cut(rest, waitMark)
	nText, sizeText, ok := strings.Cut(rest, "x")
	if !ok {
		return Page{}, fmt.Errorf("page %q lacks the x between count and size: %s", arg, usage)
	}
	n, err := strconv.Atoi(nText)
	if err != nil {
		return Page{}, fmt.Errorf("page %q: object count %q is not a whole number: %s", arg, nText, usage)
	}
	size, err := units.ParseBytes(sizeText)
	if err != nil {
		return Page{}, fmt.Errorf("page %q: %w", arg, err)
	}
	p := Page{Kind: PageKind(kind), Objects: n, ObjectBytes: size}
	if hasWait {
		if p.ServerWait, err = time.ParseDuration(waitText); err != nil || p.ServerWait <= 0 {
			return Page{}, fmt.Errorf("page %q: server wait %q is not a positive duration: write it as Go does, for example synthetic:8x10KB+wait200ms", arg, waitText)
		}
	}
	if err := p.Validate(); err != nil {
		return Page{}, fmt.Errorf("page %q: %w", arg, err)
	}
	return p, nil
}

// parseCorpusPage parses the "N" or "N@SEED" of a generated page.
func parseCorpusPage(arg, rest string) (Page, error) {
	numText, seedText, hasSeed := strings.Cut(rest, "@")
	n, err := strconv.Atoi(numText)
	if err != nil {
		return Page{}, fmt.Errorf("page %q: page number %q is not a whole number: use web2024:N, for example web2024:7", arg, numText)
	}
	p := Page{Kind: PageWeb2024, Number: n, CorpusSeed: 1}
	if hasSeed {
		if p.CorpusSeed, err = strconv.ParseUint(seedText, 10, 63); err != nil {
			return Page{}, fmt.Errorf("page %q: corpus seed %q is not a whole number: use web2024:N@SEED, for example web2024:7@2", arg, seedText)
		}
	}
	if err := p.Validate(); err != nil {
		return Page{}, fmt.Errorf("page %q: %w", arg, err)
	}
	return p, nil
}

// Validate reports a page outside the limits.
func (p Page) Validate() error {
	if p.Kind == PageArchive {
		if p.Archive == "" || len(p.Archive) > MaxArchivePath || strings.ContainsAny(p.Archive, "\x00\n\r") {
			return fmt.Errorf("archive directory %.300q is not a usable path: give the directory quicbench import or record wrote, such as archive:sites/news", p.Archive)
		}
		return nil
	}
	if p.Kind == PageLive {
		u, err := ParseLiveURL(p.URL)
		if err == nil && u.String() != p.URL {
			err = fmt.Errorf("live page URL %.100q is not as written: write it as %.100q", p.URL, u.String())
		}
		return err
	}
	if p.Generated() {
		if p.Number < 1 || p.Number > MaxCorpusPage {
			return fmt.Errorf("page number %d is outside 1 to %d", p.Number, MaxCorpusPage)
		}
		return nil
	}
	switch {
	case !PageKinds().Has(p.Kind):
		return fmt.Errorf("page kind %q is unknown: use %s", p.Kind, PageKinds().Names())
	case p.Objects < 1 || p.Objects > MaxObjects:
		return fmt.Errorf("object count %d is outside 1 to %d", p.Objects, MaxObjects)
	case p.ObjectBytes < MinObjectBytes || p.ObjectBytes > MaxObjectBytes:
		return fmt.Errorf("object size %d B is outside %d B (the smallest valid image) to 1 GiB", p.ObjectBytes, MinObjectBytes)
	case p.ServerWait < 0 || p.ServerWait > MaxServerWait:
		return fmt.Errorf("server wait %v is outside 0 to %v", p.ServerWait, MaxServerWait)
	case p.ObjectsBytes() > MaxPageBytes:
		return fmt.Errorf("the page's objects add up to %d MB, above the limit of 256 MiB: use fewer or smaller objects", p.ObjectsBytes()/1e6)
	}
	return nil
}

// ComparePages orders pages as tables read them: synthetic pages by object
// count, then size; generated pages by corpus seed and number; archives
// by directory; the kinds in that order. A text that is no page sorts as
// text.
func ComparePages(a, b string) int {
	pa, errA := ParsePage(a)
	pb, errB := ParsePage(b)
	switch {
	case errA != nil || errB != nil:
		return strings.Compare(a, b)
	case pa.Kind != pb.Kind:
		return cmp.Compare(pageKindRank(pa.Kind), pageKindRank(pb.Kind))
	case pa.Kind == PageArchive:
		return strings.Compare(pa.Archive, pb.Archive)
	case pa.Kind == PageLive:
		return strings.Compare(pa.URL, pb.URL)
	case pa.Generated():
		return cmp.Or(cmp.Compare(pa.CorpusSeed, pb.CorpusSeed), cmp.Compare(pa.Number, pb.Number))
	}
	return cmp.Or(cmp.Compare(pa.Objects, pb.Objects), cmp.Compare(pa.ObjectBytes, pb.ObjectBytes), cmp.Compare(pa.ServerWait, pb.ServerWait))
}

// pageKindRank orders page kinds: synthetic, generated, archives, then
// live pages.
func pageKindRank(k PageKind) int {
	return slices.Index([]PageKind{PageSynthetic, PageWeb2024, PageArchive, PageLive}, k)
}

// MaxLiveURLBytes bounds a live page's URL, in bytes.
const MaxLiveURLBytes = 2048

// ParseLiveURL reads a live page's URL: https, a host name (no user or
// password), at most MaxLiveURLBytes; the fragment dropped.
func ParseLiveURL(raw string) (*url.URL, error) {
	const fix = "give the page's https URL, such as url:https://www.example.com/"
	if len(raw) > MaxLiveURLBytes || strings.ContainsAny(raw, "\x00\r\n\t ") {
		return nil, fmt.Errorf("live page URL %.100q is too long or holds spaces or control characters: %s", raw, fix)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil && strings.Contains(raw, "://["):
		return nil, fmt.Errorf("live page URL %.100q names an IPv6 address, and the testbed carries IPv4 only: give a host name (pinned with --resolve NAME=IPV4 if need be) or an IPv4 address", raw)
	case err != nil:
		return nil, fmt.Errorf("live page URL %.100q does not parse: %s", raw, fix)
	case u.Scheme != "https":
		return nil, fmt.Errorf("live page URL %.100q is not https (HTTP/2 and HTTP/3 need TLS): %s", raw, fix)
	case u.User != nil:
		return nil, fmt.Errorf("live page URL %.100q carries a user name or password: leave them out", raw)
	case u.Hostname() == "":
		return nil, fmt.Errorf("live page URL %.100q names no host: %s", raw, fix)
	case u.Port() != "" && u.Port() != "443":
		return nil, fmt.Errorf("live page URL %.100q names port %s: a live page is loaded from port 443, where HTTP/3 is forced", raw, u.Port())
	}
	if err := CheckHostName(NormalHost(u.Hostname())); err != nil {
		return nil, fmt.Errorf("live page URL %.100q: %v", raw, err)
	}
	u.Host = NormalHost(u.Hostname())
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}
