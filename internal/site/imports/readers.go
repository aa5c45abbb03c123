package imports

import (
	"context"
	"strings"

	"github.com/quicbench/quicbench/internal/site"
)

// Reader reads the recording at path into a site archive.
type Reader func(ctx context.Context, path string, opts Options) (*site.Archive, Report, error)

// ReaderFor is the reader of a recording named name, by what it is: a
// directory is a Mahimahi recording, a file ending in .har (any case) a
// HAR, one ending in .wprgo a WebPageReplay archive; false for a file of
// another name, which is no recording.
func ReaderFor(name string, isDir bool) (Reader, bool) {
	lower := strings.ToLower(name)
	switch {
	case isDir:
		return Mahimahi, true
	case strings.HasSuffix(lower, ".har"):
		return HAR, true
	case strings.HasSuffix(lower, ".wprgo"):
		return WPR, true
	}
	return nil, false
}
