package har

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// BodiesTooLargeError is a HAR whose bodies add up to more than a
// reader's budget: the reading stopped there, before the rest was read.
type BodiesTooLargeError struct {
	Budget int64 // bytes
}

// Error says the bodies pass the budget (printed in MiB).
func (e *BodiesTooLargeError) Error() string {
	return fmt.Sprintf("its bodies add up to more than %d MiB, the limit of a site archive: record fewer or smaller responses", e.Budget>>20)
}

// decode reads a HAR document from r one entry at a time, as
// json.Unmarshal would read it into a HAR (names matched without regard
// to case, the last of a repeated name winning, other names skipped), and
// stops with a BodiesTooLargeError as soon as the entries' bodies pass
// budget bytes (decoded: base64 text counts three quarters), so that
// memory stays near the budget whatever the document's size. A negative
// budget sets no limit.
func decode(r io.Reader, budget int64) (*HAR, error) {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
		br.Discard(3) // a byte-order mark, as some tools write UTF-8
	}
	dec := json.NewDecoder(br)
	var h HAR
	err := eachMember(dec, func(name string) error {
		if !strings.EqualFold(name, "log") {
			return skipValue(dec)
		}
		return decodeLog(dec, &h.Log, budget)
	})
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not a HAR document (more after its end)")
	}
	return &h, nil
}

// decodeLog reads the log object into l, its entries one by one within
// budget.
func decodeLog(dec *json.Decoder, l *Log, budget int64) error {
	return eachMember(dec, func(name string) error {
		switch strings.ToLower(name) {
		case "version":
			return dec.Decode(&l.Version)
		case "creator":
			return dec.Decode(&l.Creator)
		case "pages":
			l.Pages = nil
			return dec.Decode(&l.Pages)
		case "entries":
			entries, err := decodeEntries(dec, budget)
			l.Entries = entries
			return err
		}
		return skipValue(dec)
	})
}

// decodeEntries reads the entries array (null: none), counting their
// bodies against budget.
func decodeEntries(dec *json.Decoder, budget int64) ([]Entry, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("log.entries is not an array")
	}
	var entries []Entry
	var bodies int64
	for dec.More() {
		var e Entry
		if err := dec.Decode(&e); err != nil {
			return nil, err
		}
		if c := e.Response.Content; c.Text != nil {
			n := int64(len(*c.Text))
			if strings.EqualFold(c.Encoding, "base64") {
				n = n / 4 * 3
			}
			if bodies += n; budget >= 0 && bodies > budget {
				return nil, &BodiesTooLargeError{Budget: budget}
			}
		}
		entries = append(entries, e)
	}
	_, err = dec.Token() // ']'
	return entries, err
}

// eachMember reads an object (null: nothing) and calls member for each
// name, which must read the value.
func eachMember(dec *json.Decoder, member func(name string) error) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errNotAHAR
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := member(tok.(string)); err != nil {
			return err
		}
	}
	_, err = dec.Token() // '}'
	return err
}

// errNotAHAR is a document that is JSON but not shaped as a HAR.
var errNotAHAR = errors.New("not a HAR document")

// skipValue reads and drops one value.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}
