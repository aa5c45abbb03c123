package imports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonStream reads JSON from a stream without ever holding a whole value:
// strings are read as streams (stringReader), other values are skipped
// byte by byte. The WebPageReplay importer reads its archives with it, so
// that a gzip bomb, or a string of a gigabyte, costs what the importer
// keeps and no more.
type jsonStream struct {
	r *bufio.Reader
}

// errJSON is JSON that is not well-formed.
var errJSON = errors.New("its JSON is not well-formed")

// maxJSONKey bounds an object's key (hosts and URLs), in bytes.
const maxJSONKey = 64 << 10

// next returns the next byte that is not white space.
func (s *jsonStream) next() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// peek returns the next byte that is not white space, without reading it.
func (s *jsonStream) peek() (byte, error) {
	c, err := s.next()
	if err == nil {
		err = s.r.UnreadByte()
	}
	return c, err
}

// expect reads the next byte, which must be want.
func (s *jsonStream) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return errNotWPR
	}
	return nil
}

// object reads an object, calling member with each key; member must read
// the key's value.
func (s *jsonStream) object(member func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		c, err := s.next()
		if err != nil {
			return unexpected(err)
		}
		if c == '}' {
			return nil
		}
		if !first {
			if c != ',' {
				return errJSON
			}
			if c, err = s.next(); err != nil {
				return unexpected(err)
			}
		}
		if c != '"' {
			return errNotWPR
		}
		key, err := s.smallString()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
	}
}

// array reads an array, calling element with each index; element must
// read the element.
func (s *jsonStream) array(element func(i int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := s.peek()
		if err != nil {
			return err
		}
		if c == ']' {
			_, err := s.next()
			return err
		}
		if i > 0 {
			if err := s.expect(','); err != nil {
				return err
			}
		}
		if err := element(i); err != nil {
			return err
		}
	}
}

// smallString reads the rest of a string whose opening quote was read,
// at most maxJSONKey bytes.
func (s *jsonStream) smallString() (string, error) {
	b, err := io.ReadAll(io.LimitReader(&stringReader{s: s}, maxJSONKey+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxJSONKey {
		return "", fmt.Errorf("a key is longer than %d KiB", maxJSONKey>>10)
	}
	return string(b), nil
}

// stringValue returns a reader of the next value, a string (its bytes,
// unescaped), or nil for null.
func (s *jsonStream) stringValue() (io.Reader, error) {
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	switch c {
	case '"':
		return &stringReader{s: s}, nil
	case 'n':
		return nil, s.literal("ull")
	}
	return nil, errNotWPR
}

// literal reads rest, which must follow.
func (s *jsonStream) literal(rest string) error {
	for i := range len(rest) {
		c, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		if c != rest[i] {
			return errJSON
		}
	}
	return nil
}

// skip reads and drops the next value of any kind.
func (s *jsonStream) skip() error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return s.object(func(string) error { return s.skip() })
	case '[':
		return s.array(func(int) error { return s.skip() })
	case '"':
		s.next()
		_, err := io.Copy(io.Discard, &stringReader{s: s})
		return err
	}
	return s.scalar()
}

// scalar reads and checks a number, true, false or null.
func (s *jsonStream) scalar() error {
	_, err := s.scalarText()
	return err
}

// scalarText reads and checks a number, true, false or null, and returns
// its text.
func (s *jsonStream) scalarText() (string, error) {
	var b []byte
	for len(b) <= 64 {
		c, err := s.r.ReadByte()
		if err != nil {
			return "", unexpected(err)
		}
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if err := s.r.UnreadByte(); err != nil {
				return "", err
			}
			break
		}
		b = append(b, c)
	}
	switch w := string(b); {
	case w == "true" || w == "false" || w == "null":
		return w, nil
	case len(w) > 0 && (w[0] == '-' || w[0] >= '0' && w[0] <= '9'):
		if _, err := strconv.ParseFloat(w, 64); err == nil {
			return w, nil
		}
	}
	return "", errJSON
}

// stringReader reads a JSON string's content, unescaped, up to its
// closing quote (the opening one was read).
type stringReader struct {
	s       *jsonStream
	pending []byte // unescaped bytes not yet returned
	done    bool
}

// Read returns the JSON string's next unescaped bytes, io.EOF after its
// closing quote.
func (r *stringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pending) > 0 {
			k := copy(p[n:], r.pending)
			r.pending, n = r.pending[k:], n+k
			continue
		}
		if r.done {
			break
		}
		if k := r.plain(p[n:]); k > 0 {
			n += k
			continue
		}
		c, err := r.s.r.ReadByte()
		switch {
		case err != nil:
			return n, unexpected(err)
		case c == '"':
			r.done = true
		case c == '\\':
			if r.pending, err = r.s.escape(); err != nil {
				return n, err
			}
		case c < 0x20:
			return n, errJSON
		default:
			p[n] = c
			n++
		}
	}
	if n == 0 && r.done {
		return 0, io.EOF
	}
	return n, nil
}

// plain copies into p the buffered bytes up to the next quote, backslash
// or control character, and returns how many it copied.
func (r *stringReader) plain(p []byte) int {
	buf, _ := r.s.r.Peek(min(r.s.r.Buffered(), len(p)))
	k := 0
	for k < len(buf) && buf[k] != '"' && buf[k] != '\\' && buf[k] >= 0x20 {
		k++
	}
	copy(p, buf[:k])
	r.s.r.Discard(k)
	return k
}

// unexpected makes an end of input inside a value an unexpected one.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// escape reads an escape sequence after its backslash and returns its
// bytes (UTF-8).
func (s *jsonStream) escape() ([]byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return nil, unexpected(err)
	}
	if i := indexByte(`"\/bfnrt`, c); i >= 0 {
		return []byte{"\"\\/\b\f\n\r\t"[i]}, nil
	}
	if c != 'u' {
		return nil, errJSON
	}
	r1, err := s.hex4()
	if err != nil {
		return nil, err
	}
	if utf16.IsSurrogate(r1) {
		if s.literal(`\u`) == nil {
			if r2, err := s.hex4(); err == nil {
				r1 = utf16.DecodeRune(r1, r2)
			}
		}
	}
	return utf8.AppendRune(nil, r1), nil
}

// hex4 reads four hex digits.
func (s *jsonStream) hex4() (rune, error) {
	var b [4]byte
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		return 0, unexpected(err)
	}
	v, err := strconv.ParseUint(string(b[:]), 16, 16)
	if err != nil {
		return 0, errJSON
	}
	return rune(v), nil
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}
