package factor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quicbench/quicbench/internal/units"
)

// PageKind is the kind of a page: how its bytes come about.
type PageKind string

// The page kinds.
const (
	// PageSynthetic is an HTML document with N images of exactly SIZE
	// bytes, each a distinct URL: "synthetic:NxSIZE".
	PageSynthetic PageKind = "synthetic"
)

// PageKinds is the page-kind part of the page factor.
func PageKinds() Enum[PageKind] {
	return Enum[PageKind]{What: "page kind", Levels: []Level[PageKind]{
		{PageSynthetic, "synthetic:NxSIZE, an HTML document with N images of SIZE bytes (KB = 1000 B, KiB = 1024 B)"},
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

// Page is one level of the page factor.
type Page struct {
	Kind PageKind
	// Objects is the number of objects the document loads.
	Objects int
	// ObjectBytes is the size of each object in bytes.
	ObjectBytes int64
}

// String gives the page in the form ParsePage reads, with the largest
// unit that divides the size exactly, such as "synthetic:32x10KB".
func (p Page) String() string {
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
	return fmt.Sprintf("%s:%dx%s", p.Kind, p.Objects, size)
}

// ObjectsBytes is the bytes of all objects, the document left out.
func (p Page) ObjectsBytes() int64 { return int64(p.Objects) * p.ObjectBytes }

// ParsePage parses a page such as "synthetic:32x10KB".
func ParsePage(arg string) (Page, error) {
	const usage = "use synthetic:NxSIZE, for example synthetic:32x10KB"
	kind, rest, ok := strings.Cut(arg, ":")
	if !ok || !PageKinds().Has(PageKind(kind)) {
		return Page{}, fmt.Errorf("page %q is not supported: %s", arg, usage)
	}
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
	if err := p.Validate(); err != nil {
		return Page{}, fmt.Errorf("page %q: %w", arg, err)
	}
	return p, nil
}

// Validate reports a page outside the limits.
func (p Page) Validate() error {
	switch {
	case !PageKinds().Has(p.Kind):
		return fmt.Errorf("page kind %q is unknown: use %s", p.Kind, PageKinds().Names())
	case p.Objects < 1 || p.Objects > MaxObjects:
		return fmt.Errorf("object count %d is outside 1 to %d", p.Objects, MaxObjects)
	case p.ObjectBytes < MinObjectBytes || p.ObjectBytes > MaxObjectBytes:
		return fmt.Errorf("object size %d B is outside %d B (the smallest valid image) to 1 GiB", p.ObjectBytes, MinObjectBytes)
	case p.ObjectsBytes() > MaxPageBytes:
		return fmt.Errorf("the page's objects add up to %d MB, above the limit of 256 MiB: use fewer or smaller objects", p.ObjectsBytes()/1e6)
	}
	return nil
}
