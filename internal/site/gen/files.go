package gen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
)

// Files builds a site of one origin that serves, for each size in bytes, a
// file of incompressible bytes from seed at "/file/<size>". The document
// at "/" lists them.
func Files(host string, sizes []int64, seed uint64) (*site.Site, error) {
	rng := rand.New(rand.NewPCG(seed, 0xf11e))
	o := &site.Origin{Host: host, Resources: map[string]*site.Resource{}}
	s := &site.Site{Origins: []*site.Origin{o}, DocumentPath: "/"}
	var index strings.Builder
	for _, size := range sizes {
		if size < 1 || size > factor.MaxObjectBytes {
			return nil, fmt.Errorf("file size %d B is outside 1 B to 1 GiB", size)
		}
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		path := FilePath(size)
		o.Resources[path] = &site.Resource{Path: path, ContentType: "application/octet-stream", Body: body}
		fmt.Fprintln(&index, path)
	}
	o.Resources["/"] = &site.Resource{Path: "/", ContentType: "text/plain; charset=utf-8", Body: []byte(index.String())}
	return s, s.Validate()
}

// FilePath is where Files serves the file of size bytes.
func FilePath(size int64) string { return fmt.Sprintf("/file/%d", size) }
