// Package pcap writes packet captures in the classic pcap format with
// nanosecond timestamps and raw IP link type, as Wireshark and tcpdump read.
package pcap

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"
)

// Header values of the format.
const (
	magicNanoseconds = 0xa1b23c4d // pcap with nanosecond timestamps
	linkTypeRaw      = 101        // LINKTYPE_RAW: packets start with the IP header
	snapLen          = 65535
)

// Writer writes packets to a capture. Safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	buf *bufio.Writer
	err error
}

// NewWriter writes the file header to w and returns a Writer. Call Flush
// before closing w.
func NewWriter(w io.Writer) (*Writer, error) {
	pw := &Writer{buf: bufio.NewWriterSize(w, 1<<20)}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], magicNanoseconds)
	binary.LittleEndian.PutUint16(h[4:], 2) // version 2.4
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], snapLen)
	binary.LittleEndian.PutUint32(h[20:], linkTypeRaw)
	if _, err := pw.buf.Write(h[:]); err != nil {
		return nil, fmt.Errorf("pcap: header: %w", err)
	}
	return pw, nil
}

// WritePacket records pkt, an IP packet seen at t.
func (w *Writer) WritePacket(t time.Time, pkt []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	n := min(len(pkt), snapLen)
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(t.Unix()))
	binary.LittleEndian.PutUint32(h[4:], uint32(t.Nanosecond()))
	binary.LittleEndian.PutUint32(h[8:], uint32(n))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(pkt)))
	if _, err := w.buf.Write(h[:]); err != nil {
		w.err = err
		return
	}
	_, w.err = w.buf.Write(pkt[:n])
}

// Flush writes what is buffered and returns the first error of any write.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("pcap: %w", w.err)
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("pcap: %w", err)
	}
	return nil
}

// Packet is one record read back by Read.
type Packet struct {
	Time time.Time
	Data []byte
}

// Read reads a capture written by Writer (for tests and tools).
func Read(r io.Reader) ([]Packet, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("pcap: header: %w", err)
	}
	if binary.LittleEndian.Uint32(h[0:]) != magicNanoseconds || binary.LittleEndian.Uint32(h[20:]) != linkTypeRaw {
		return nil, fmt.Errorf("pcap: not a nanosecond raw-IP capture")
	}
	var out []Packet
	for {
		var rec [16]byte
		if _, err := io.ReadFull(r, rec[:]); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("pcap: record %d: %w", len(out)+1, err)
		}
		n := binary.LittleEndian.Uint32(rec[8:])
		if n > snapLen {
			return out, fmt.Errorf("pcap: record %d: length %d exceeds the snap length", len(out)+1, n)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return out, fmt.Errorf("pcap: record %d: %w", len(out)+1, err)
		}
		t := time.Unix(int64(binary.LittleEndian.Uint32(rec[0:])), int64(binary.LittleEndian.Uint32(rec[4:])))
		out = append(out, Packet{Time: t, Data: data})
	}
}
