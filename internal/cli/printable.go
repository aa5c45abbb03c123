package cli

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// printable writes to a terminal what may hold text from files users
// bring (network names, pages, URLs, errors in a results database): control
// characters other than tab and newline, escape sequences among them, are
// written as \xNN, so that no stored text can move the cursor, retitle the
// window or hide what follows, and Unicode's bidirectional controls (U+202E
// and its kin, which reorder what follows) as \uNNNN; bytes that are not
// UTF-8 become U+FFFD.
type printable struct{ w io.Writer }

// Write writes b with control characters, bidirectional controls and
// invalid UTF-8 made visible, and returns len(b) on success.
func (p printable) Write(b []byte) (int, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case r == '\t' || r == '\n':
			out = append(out, b[i])
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			out = fmt.Appendf(out, `\x%02x`, r)
		case unicode.Is(unicode.Bidi_Control, r):
			// U+202E and its kin reorder what follows on the screen.
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
