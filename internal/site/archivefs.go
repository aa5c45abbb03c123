package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/safefs"
)

// An archive directory holds ArchiveFile, a JSON manifest (the page's
// document and every exchange's request, status and header fields), and
// under BodiesDir one file per distinct body, named by the hex SHA-256 of
// its bytes, holding the bytes as they went on the wire.
const (
	ArchiveFile   = "archive.json"
	BodiesDir     = "bodies"
	archiveFormat = "quicbench-site-archive"
	// archiveVersion is the newest version: 2 added recorded_at, 3
	// upgraded_http. Versions 1 to 3 are read; an archive is written as 2
	// unless it has upgraded exchanges, so that older readers read it.
	archiveVersion = 5
	// maxManifestBytes bounds the manifest: 10,000 exchanges with
	// generous header sections.
	maxManifestBytes = 64 << 20
)

// manifest is the JSON form of ArchiveFile.
type manifest struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Source   string `json:"source"`
	Document string `json:"document"`
	// RecordedAt is when the page was recorded (RFC 3339), "" when the
	// recording does not say.
	RecordedAt string `json:"recorded_at,omitempty"`
	// UpgradedHTTP counts exchanges recorded over http:// kept as
	// https:// (import --upgrade-http); version 3.
	UpgradedHTTP int `json:"upgraded_http,omitempty"`
	// UserAgent is the recording browser's User-Agent and Viewport the
	// viewport the recording was made at (Archive); version 4.
	UserAgent string           `json:"user_agent,omitempty"`
	Viewport  *factor.Viewport `json:"viewport,omitempty"`
	// ViewportSource says what decided the viewport (Archive); version 5.
	ViewportSource string             `json:"viewport_source,omitempty"`
	Exchanges      []manifestExchange `json:"exchanges"`
}

// manifestExchange is one exchange; Body is the SHA-256 of its body.
type manifestExchange struct {
	Method  string      `json:"method"`
	URL     string      `json:"url"`
	IP      string      `json:"ip,omitempty"`
	Status  int         `json:"status"`
	Headers [][2]string `json:"headers"`
	Body    string      `json:"body"`
	Bytes   int64       `json:"bytes"`
}

// WriteArchive saves a, which must pass Check, as the archive directory
// dir (created if missing; an archive already there is replaced). The
// manifest is written last and atomically, so a failure never leaves a
// directory that reads as an archive or an archive that reads as another:
// when ctx is done or a write fails, the bodies this call wrote are
// removed again (with the directory, if it made it). Once the new
// manifest is in place, the bodies it does not name (an earlier import's)
// are removed.
func WriteArchive(ctx context.Context, dir string, a *Archive) (err error) {
	if err := a.Check(); err != nil {
		return err
	}
	_, statErr := os.Lstat(dir)
	made := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("archive %s: %w", dir, err)
	}
	var written []string
	defer func() {
		if err == nil {
			return
		}
		if made {
			os.RemoveAll(dir)
			return
		}
		ours := map[string]bool{}
		for _, name := range written {
			ours[name] = true
		}
		safefs.PruneIn(dir, BodiesDir, func(name string) bool { return ours[name] })
	}()
	m, written, err := writeBodies(ctx, dir, a)
	if err != nil {
		return err
	}
	err = safefs.WriteAtomic(dir, ArchiveFile, 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(m)
	})
	if err != nil {
		return err
	}
	removeUnnamedBodies(dir, m)
	return nil
}

// writeBodies writes a's bodies, each once, and returns the manifest
// naming them and the bodies that were not there before (also on error,
// for the caller to remove).
func writeBodies(ctx context.Context, dir string, a *Archive) (manifest, []string, error) {
	m := manifest{Format: archiveFormat, Version: 2, Source: a.Source, Document: a.Document, UpgradedHTTP: a.Upgraded}
	if a.Upgraded > 0 {
		m.Version = 3
	}
	if a.UserAgent != "" || !a.Viewport.IsZero() {
		m.Version, m.UserAgent = 4, a.UserAgent
		if !a.Viewport.IsZero() {
			m.Viewport = &a.Viewport
		}
	}
	if a.ViewportSource != "" {
		m.Version, m.ViewportSource = 5, a.ViewportSource
	}
	if !a.RecordedAt.IsZero() {
		m.RecordedAt = a.RecordedAt.UTC().Format(time.RFC3339Nano)
	}
	var written []string
	seen := map[string]bool{}
	for _, ex := range a.Exchanges {
		sum := sha256.Sum256(ex.Body)
		name := hex.EncodeToString(sum[:])
		if !seen[name] {
			seen[name] = true
			if err := ctx.Err(); err != nil {
				return m, written, err
			}
			_, statErr := os.Lstat(filepath.Join(dir, BodiesDir, name))
			if err := safefs.WriteFile(dir, filepath.Join(BodiesDir, name), ex.Body, 0o644); err != nil {
				return m, written, fmt.Errorf("archive %s: %w", dir, err)
			}
			if statErr != nil { // new: removed again if the archive is not completed
				written = append(written, name)
			}
		}
		me := manifestExchange{Method: ex.Method, URL: ex.URL, IP: ex.IP, Status: ex.Status, Body: name, Bytes: int64(len(ex.Body)), Headers: [][2]string{}}
		for _, f := range ex.Header {
			me.Headers = append(me.Headers, [2]string{f.Name, f.Value})
		}
		m.Exchanges = append(m.Exchanges, me)
	}
	return m, written, nil
}

// removeUnnamedBodies removes the files of dir's bodies directory that m
// does not name, through the directory's descriptor (safefs.PruneIn): a
// bodies directory swapped for a link is refused, never followed.
func removeUnnamedBodies(dir string, m manifest) {
	named := map[string]bool{}
	for _, ex := range m.Exchanges {
		named[ex.Body] = true
	}
	safefs.PruneIn(dir, BodiesDir, func(name string) bool { return !named[name] })
}

// ReadArchive reads the archive directory dir. Its files are untrusted: no
// link below dir is followed, sizes are bounded, every body must have the
// hash the manifest gives it, and the archive must pass Check.
func ReadArchive(dir string) (*Archive, error) {
	data, err := safefs.ReadIn(dir, ArchiveFile, maxManifestBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a site archive (it has no %s): make one with quicbench import or quicbench record", dir, ArchiveFile)
	}
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", dir, err)
	}
	a, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %s: %w", dir, ArchiveFile, err)
	}
	var total int64
	bodies := map[string][]byte{}
	for i, ex := range a.Exchanges {
		name := ex.bodyName
		body, ok := bodies[name]
		if !ok {
			if total += ex.bytes; total > MaxArchiveBytes {
				return nil, fmt.Errorf("archive %s: bodies add up to more than %d MiB", dir, MaxArchiveBytes>>20)
			}
			if body, err = readBody(dir, name, ex.bytes); err != nil {
				return nil, fmt.Errorf("archive %s: exchange %d (%.200q): %w", dir, i+1, ex.URL, err)
			}
			bodies[name] = body
		}
		ex.Body = body
	}
	out := &Archive{Source: a.Source, Document: a.Document, RecordedAt: a.RecordedAt, Upgraded: a.Upgraded, UserAgent: a.UserAgent, Viewport: a.Viewport, ViewportSource: a.ViewportSource}
	for _, ex := range a.Exchanges {
		out.Exchanges = append(out.Exchanges, ex.Exchange)
	}
	if err := out.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return out, nil
}

// readBody reads the body file name of size bytes and checks its hash.
func readBody(dir, name string, size int64) ([]byte, error) {
	body, err := safefs.ReadIn(dir, filepath.Join(BodiesDir, name), size+1)
	if err != nil {
		return nil, err
	}
	if int64(len(body)) != size {
		return nil, fmt.Errorf("body %s has %d bytes, the manifest says %d: the archive is damaged; import it again", name, len(body), size)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != name {
		return nil, fmt.Errorf("body %s does not have the hash it is named by: the archive is damaged; import it again", name)
	}
	return body, nil
}

// parsedExchange is an exchange of a manifest whose body is still to read.
type parsedExchange struct {
	*Exchange
	bodyName string
	bytes    int64
}

// maxViewportSource bounds a manifest's viewport_source.
const maxViewportSource = 300

// parsedArchive is a manifest checked for form, bodies not yet read.
type parsedArchive struct {
	Source, Document string
	RecordedAt       time.Time
	Upgraded         int
	UserAgent        string
	Viewport         factor.Viewport
	ViewportSource   string
	Exchanges        []parsedExchange
}

// parseManifest decodes and checks a manifest's form: format, version,
// body names and sizes. It reads no file.
func parseManifest(data []byte) (*parsedArchive, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a valid manifest: %v", err)
	}
	if m.Format == archiveFormat && m.Version > archiveVersion {
		return nil, fmt.Errorf("format %s version %d is newer than this quicbench reads (1 to %d): a newer quicbench wrote it", archiveFormat, m.Version, archiveVersion)
	}
	if m.Format != archiveFormat || m.Version < 1 {
		return nil, fmt.Errorf("format %.40q version %d is not %s version 1 to %d: the manifest is damaged or not quicbench's; import the recording again", m.Format, m.Version, archiveFormat, archiveVersion)
	}
	if len(m.Exchanges) > MaxExchanges {
		return nil, fmt.Errorf("%d exchanges, above the limit of %d", len(m.Exchanges), MaxExchanges)
	}
	if m.UpgradedHTTP < 0 || m.UpgradedHTTP > len(m.Exchanges) {
		return nil, fmt.Errorf("upgraded_http %d is outside 0 to its %d exchanges", m.UpgradedHTTP, len(m.Exchanges))
	}
	if len(m.ViewportSource) > maxViewportSource || strings.IndexFunc(m.ViewportSource, unicode.IsControl) >= 0 {
		return nil, fmt.Errorf("viewport_source is longer than %d bytes or holds a control character: import the recording again", maxViewportSource)
	}
	out := &parsedArchive{Source: m.Source, Document: m.Document, Upgraded: m.UpgradedHTTP, UserAgent: m.UserAgent, ViewportSource: m.ViewportSource}
	if m.Viewport != nil {
		if m.Viewport.IsZero() {
			return nil, fmt.Errorf("viewport is empty: leave it out for the default")
		}
		if err := m.Viewport.Check(); err != nil {
			return nil, fmt.Errorf("viewport: %v", err)
		}
		out.Viewport = *m.Viewport
	}
	if m.RecordedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, m.RecordedAt)
		if err != nil {
			return nil, fmt.Errorf("recorded_at %.40q is not an RFC 3339 time", m.RecordedAt)
		}
		out.RecordedAt = t
	}
	for i, me := range m.Exchanges {
		if len(me.Body) != 2*sha256.Size || !isHex(me.Body) {
			return nil, fmt.Errorf("exchange %d: body %.80q is not a SHA-256 in hex", i+1, me.Body)
		}
		if me.Bytes < 0 || me.Bytes > MaxArchiveBytes {
			return nil, fmt.Errorf("exchange %d: body size %d is outside 0 to %d", i+1, me.Bytes, int64(MaxArchiveBytes))
		}
		ex := &Exchange{Method: me.Method, URL: me.URL, IP: me.IP, Status: me.Status}
		for _, h := range me.Headers {
			ex.Header = append(ex.Header, Field{h[0], h[1]})
		}
		if err := ex.Check(); err != nil {
			return nil, fmt.Errorf("exchange %d: %w", i+1, err)
		}
		out.Exchanges = append(out.Exchanges, parsedExchange{Exchange: ex, bodyName: me.Body, bytes: me.Bytes})
	}
	return out, nil
}

// isHex reports whether s is lower-case hexadecimal.
func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
