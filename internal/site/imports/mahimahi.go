package imports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
)

// A Mahimahi recording (mm-webrecord) is a directory with one file per
// exchange: a protobuf RequestResponse {string ip = 1; uint32 port = 2;
// Scheme scheme = 3 (HTTP 1, HTTPS 2); HTTPMessage request = 4;
// HTTPMessage response = 5}, HTTPMessage {bytes first_line = 1; repeated
// HTTPHeader header = 2; bytes body = 3}, HTTPHeader {bytes key = 1; bytes
// value = 2}. Recordings from before mid-2014 have {uint32 port = 1;
// string protocol = 2; string ip = 3; request = 4; response = 5} and
// headers as "Key: value" bytes; field 1's wire type tells them apart.
// Bodies are stored as sent, chunked framing included.

// mmFileOverhead is what an exchange's file may hold beyond its body:
// the request and the header fields.
const mmFileOverhead = 1 << 20

// mmRecord is one decoded exchange file.
type mmRecord struct {
	ip, scheme string
	port       uint64
	request    mmMessage
	response   mmMessage
}

// mmMessage is a decoded HTTPMessage.
type mmMessage struct {
	firstLine string
	header    []site.Field
	body      []byte
}

// Mahimahi reads the Mahimahi recording directory dir.
// opts.Document names the page ("" to let the import choose).
func Mahimahi(ctx context.Context, dir string, opts Options) (*site.Archive, Report, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, Report{}, fmt.Errorf("mahimahi recording: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		} else {
			return nil, Report{}, fmt.Errorf("mahimahi recording %s: %.100q is not a regular file: a recording holds only its exchange files", dir, e.Name())
		}
	}
	slices.Sort(names)
	c := &collector{ctx: ctx, options: opts, archive: &site.Archive{Source: "mahimahi"}}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, c.report, err
		}
		if err := c.addMahimahiFile(dir, name); err != nil {
			return nil, c.report, fmt.Errorf("mahimahi recording %s: file %.100q: %w", dir, name, err)
		}
	}
	a, rep, err := c.finish(opts.Document, "")
	if err != nil {
		return nil, rep, fmt.Errorf("mahimahi recording %s: %w", dir, err)
	}
	return a, rep, nil
}

// addMahimahiFile decodes one exchange file and adds it.
func (c *collector) addMahimahiFile(dir, name string) error {
	limit := c.room() + mmFileOverhead
	data, err := safefs.ReadIn(dir, name, limit)
	if err != nil {
		var big *safefs.TooLargeError
		if c.bodyBytes > 0 && errors.As(err, &big) {
			return fmt.Errorf("with the files before it, the recording's bodies add up to more than %d MiB, the most a page may have: split the recording", site.MaxArchiveBytes>>20)
		}
		return err
	}
	rec, err := parseMahimahi(data)
	if err != nil {
		return err
	}
	method, target, ok := parseRequestLine(rec.request.firstLine)
	if !ok {
		return fmt.Errorf("request line %.100q is not an HTTP request line", rec.request.firstLine)
	}
	status, ok := parseStatusLine(rec.response.firstLine)
	if !ok {
		if rec.response.firstLine == "" {
			c.report.Entries++
			c.report.NoResponse++
			return nil
		}
		return fmt.Errorf("status line %.100q is not an HTTP status line", rec.response.firstLine)
	}
	rawURL, err := absoluteURL(rec.scheme, site.Get(lowerNames(rec.request.header), "host"), rec.port, target)
	if err != nil {
		return err
	}
	body := rec.response.body
	if chunked(rec.response.header) {
		if body, err = dechunk(body); err != nil {
			return err
		}
	}
	c.agents.note(site.Get(lowerNames(rec.request.header), "user-agent"))
	_, err = c.add(method, rawURL, rec.ip, status, rec.response.header, body)
	return err
}

// absoluteURL builds the URL of a request to host (from its Host field) on
// port with request target (origin or absolute form).
func absoluteURL(scheme, host string, port uint64, target string) (string, error) {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return target, nil
	}
	if host == "" {
		return "", fmt.Errorf("request has no Host field")
	}
	if !strings.HasPrefix(target, "/") {
		return "", fmt.Errorf("request target %.100q is not a path", target)
	}
	if !strings.Contains(host, ":") && port != 0 && !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) {
		host += ":" + strconv.FormatUint(port, 10)
	}
	u, err := url.Parse(scheme + "://" + host + target)
	if err != nil {
		return "", fmt.Errorf("request URL is not valid: %v", err)
	}
	return u.String(), nil
}

// lowerNames is h with lower-case names.
func lowerNames(h []site.Field) []site.Field {
	out := make([]site.Field, len(h))
	for i, f := range h {
		out[i] = site.Field{Name: strings.ToLower(f.Name), Value: f.Value}
	}
	return out
}

// parseRequestLine splits "GET /x HTTP/1.1".
func parseRequestLine(line string) (method, target string, ok bool) {
	parts := strings.Split(strings.TrimRight(line, "\r\n"), " ")
	if len(parts) != 3 || !site.ValidFieldName(parts[0]) || parts[1] == "" || !strings.HasPrefix(parts[2], "HTTP/") {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// parseStatusLine reads the code of "HTTP/1.1 200 OK".
func parseStatusLine(line string) (int, bool) {
	parts := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/") || len(parts[1]) != 3 {
		return 0, false
	}
	code, err := strconv.Atoi(parts[1])
	return code, err == nil && code >= 100 && code <= 599
}

// errNotProtobuf is what any damage to a file's wire format reports.
var errNotProtobuf = errors.New("not a Mahimahi protobuf record (truncated or another kind of file)")

// parseMahimahi decodes one record file of either format.
func parseMahimahi(data []byte) (mmRecord, error) {
	old, err := isOldFormat(data)
	if err != nil {
		return mmRecord{}, err
	}
	var rec mmRecord
	err = eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 4 && typ == protowire.BytesType:
			return parseMessage(v, old, &rec.request)
		case num == 5 && typ == protowire.BytesType:
			return parseMessage(v, old, &rec.response)
		case !old && num == 1 && typ == protowire.BytesType, old && num == 3 && typ == protowire.BytesType:
			rec.ip = string(v)
		case !old && num == 2 && typ == protowire.VarintType, old && num == 1 && typ == protowire.VarintType:
			rec.port = n
		case !old && num == 3 && typ == protowire.VarintType:
			rec.scheme = map[uint64]string{1: "http", 2: "https"}[n]
		case old && num == 2 && typ == protowire.BytesType:
			rec.scheme = strings.ToLower(string(v))
		}
		return nil
	})
	if err != nil {
		return mmRecord{}, err
	}
	if rec.scheme != "http" && rec.scheme != "https" {
		rec.scheme = map[bool]string{true: "https", false: "http"}[rec.port == 443]
	}
	if rec.request.firstLine == "" {
		return mmRecord{}, fmt.Errorf("%w: it has no request", errNotProtobuf)
	}
	return rec, nil
}

// isOldFormat reports whether the record is of the pre-2014 format: its
// field 1 is a number (the port), where the later format has a string.
func isOldFormat(data []byte) (bool, error) {
	old, seen := false, false
	err := eachField(data, func(num protowire.Number, typ protowire.Type, _ []byte, _ uint64) error {
		if !seen && (num == 1 || num == 2) {
			seen = true
			old = (num == 1 && typ == protowire.VarintType) || (num == 2 && typ == protowire.BytesType)
		}
		return nil
	})
	return old, err
}

// parseMessage decodes an HTTPMessage; old headers are "Key: value".
func parseMessage(data []byte, old bool, m *mmMessage) error {
	return eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			m.firstLine = string(v)
		case 3:
			m.body = v
		case 2:
			f, err := parseHeader(v, old)
			if err != nil {
				return err
			}
			m.header = append(m.header, f)
		}
		return nil
	})
}

// parseHeader decodes an HTTPHeader, or an old "Key: value" line.
func parseHeader(v []byte, old bool) (site.Field, error) {
	if old {
		key, value, ok := bytes.Cut(v, []byte(":"))
		if !ok {
			return site.Field{}, fmt.Errorf("%w: a header line has no colon", errNotProtobuf)
		}
		return site.Field{Name: strings.TrimSpace(string(key)), Value: strings.TrimSpace(string(value))}, nil
	}
	var f site.Field
	err := eachField(v, func(num protowire.Number, typ protowire.Type, b []byte, _ uint64) error {
		if typ == protowire.BytesType && num == 1 {
			f.Name = string(b)
		} else if typ == protowire.BytesType && num == 2 {
			f.Value = strings.TrimSpace(string(b))
		}
		return nil
	})
	return f, err
}

// eachField calls fn for every field of a protobuf message: v for
// length-delimited fields, n for varints.
func eachField(data []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(data) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(data)
		if tagLen < 0 {
			return errNotProtobuf
		}
		data = data[tagLen:]
		var v []byte
		var n uint64
		var size int
		switch typ {
		case protowire.BytesType:
			v, size = protowire.ConsumeBytes(data)
		case protowire.VarintType:
			n, size = protowire.ConsumeVarint(data)
		default:
			size = protowire.ConsumeFieldValue(num, typ, data)
		}
		if size < 0 {
			return errNotProtobuf
		}
		data = data[size:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}
