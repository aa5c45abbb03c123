package gen

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"html"
	"math/rand/v2"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// Build builds the site of page: a synthetic page spread over origins
// origins with its bytes from seed, a page of a generated corpus (which
// has its own origins and seed), or the site an archive directory
// recorded (archiveDir, the page's directory resolved), or a live page's
// site of its own host alone (the run adds the hosts it pins).
func Build(page factor.Page, origins int, seed uint64, archiveDir string) (*site.Site, error) {
	switch page.Kind {
	case factor.PageWeb2024:
		return Web2024(page)
	case factor.PageArchive:
		a, err := site.ReadArchive(archiveDir)
		if err != nil {
			return nil, err
		}
		return a.Site()
	case factor.PageLive:
		u, err := factor.ParseLiveURL(page.URL)
		if err != nil {
			return nil, err
		}
		return site.LiveSite(u, nil), nil
	}
	return Synthetic(page, OriginHosts(origins), seed)
}

// OriginHosts names the origins of a synthetic page on k origins:
// www.quicbench.test for the first (it serves the document), then
// o2.quicbench.test, o3.quicbench.test, ….
func OriginHosts(k int) []string {
	hosts := []string{"www.quicbench.test"}
	for i := 2; i <= k; i++ {
		hosts = append(hosts, fmt.Sprintf("o%d.quicbench.test", i))
	}
	return hosts
}

// NoIcon is the icon link of generated documents: an empty data URL, so
// that the browser does not ask the servers for /favicon.ico.
const NoIcon = "data:,"

// TileSize is the side, in CSS pixels, at which a synthetic page shows each
// object: a grey square, so that the page's visual progress follows its
// objects' arrival.
const TileSize = 48

// Synthetic builds the page of spec on the origins hosts: a document at "/"
// on hosts[0] with spec.Objects <img> elements, object i on
// hosts[i mod len(hosts)] at the distinct URL "/obj/<i>.png", each a valid
// 1×1 PNG of exactly spec.ObjectBytes bytes, padded with incompressible
// bytes from seed, shown as a TileSize square.
func Synthetic(spec factor.Page, hosts []string, seed uint64) (*site.Site, error) {
	if err := spec.Validate(); err != nil || spec.Kind != factor.PageSynthetic {
		return nil, fmt.Errorf("synthetic page %v: not a valid synthetic page (%v)", spec, err)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("synthetic page %v: no origin", spec)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := &site.Site{DocumentPath: "/", ServerWait: spec.ServerWait}
	for _, h := range hosts {
		s.Origins = append(s.Origins, &site.Origin{Host: h, Resources: map[string]*site.Resource{}})
	}
	var doc strings.Builder
	// An empty icon: otherwise the browser asks for /favicon.ico after the
	// load, a request that is not the page's.
	fmt.Fprintf(&doc, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"%s\"><title>quicbench %s</title></head>\n<body>\n", NoIcon, html.EscapeString(spec.String()))
	padding := make([]byte, spec.ObjectBytes-factor.MinObjectBytes)
	for i := range spec.Objects {
		path := fmt.Sprintf("/obj/%d.png", i)
		for j := range padding {
			padding[j] = byte(rng.Uint32())
		}
		origin := s.Origins[i%len(hosts)]
		origin.Resources[path] = &site.Resource{Path: path, ContentType: "image/png", Body: pngOfSize(len(padding), padding)}
		u := "https://" + origin.Host + path
		s.Subresources = append(s.Subresources, u)
		// No white space between the images: Chromium offers the body's
		// lines of white space as a Largest Contentful Paint candidate
		// before any image is painted (FCP ignores them), and the tiles,
		// smaller than those lines, would then never be LCP.
		fmt.Fprintf(&doc, "<img src=\"%s\" width=\"%d\" height=\"%d\" alt=\"\">", html.EscapeString(u), TileSize, TileSize)
	}
	doc.WriteString("\n</body></html>\n")
	s.Origins[0].Resources["/"] = &site.Resource{Path: "/", ContentType: "text/html; charset=utf-8", Body: []byte(doc.String())}
	return s, s.Validate()
}

// pngOfSize returns a 1×1 grey PNG with a private ancillary chunk "qbPd"
// holding padLen bytes of pad (zeros if pad is nil). Decoders skip the chunk.
func pngOfSize(padLen int, pad []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0} // 1×1, 8-bit greyscale
	writeChunk(&b, "IHDR", ihdr)
	if pad == nil {
		pad = make([]byte, padLen)
	}
	writeChunk(&b, "qbPd", pad[:padLen])
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte{0, 0x80}) // filter 0, one grey pixel
	zw.Close()
	writeChunk(&b, "IDAT", z.Bytes())
	writeChunk(&b, "IEND", nil)
	return b.Bytes()
}

func writeChunk(b *bytes.Buffer, kind string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	b.WriteString(kind)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}

// solidPNG returns a w×h PNG of one colour, padded with a private chunk to
// size bytes when it is smaller (it stays as it is when it is larger).
func solidPNG(w, h int, rgb [3]byte, size int64) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	writeChunk(&b, "IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	row := make([]byte, 1+3*w) // filter 0, then the pixels
	for x := range w {
		copy(row[1+3*x:], rgb[:])
	}
	for range h {
		zw.Write(row)
	}
	zw.Close()
	const chunkOverhead, iend = 12, 12
	if pad := size - int64(b.Len()+chunkOverhead+z.Len()+iend+chunkOverhead); pad >= 0 {
		writeChunk(&b, "qbPd", make([]byte, pad))
	}
	writeChunk(&b, "IDAT", z.Bytes())
	writeChunk(&b, "IEND", nil)
	return b.Bytes()
}
