package netns

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// dnsPortHex is port 53 as the kernel's socket tables write it.
const dnsPortHex = ":0035"

// UDPTables are a namespace's UDP socket tables (IPv4 and IPv6), opened
// inside it once and read again from the start at each Sockets: a file of
// /proc/net keeps the namespace it was opened in.
type UDPTables struct {
	files []*os.File
}

// OpenUDPTables opens the namespace's UDP socket tables; the caller closes
// them.
func (n *Namespace) OpenUDPTables() (*UDPTables, error) {
	t := &UDPTables{}
	err := n.Do(func() error {
		for _, name := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			t.files = append(t.files, f)
		}
		return nil
	})
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("netns %s: open the UDP socket tables: %w", n.Name, err)
	}
	return t, nil
}

// Sockets counts the UDP sockets open in the namespace now, leaving out
// those connected to port 53 (a resolver's questions): in a client
// namespace, the browser's QUIC sockets, which it keeps until it has
// closed their connections (Firefox: until the draining period after a
// server's CONNECTION_CLOSE has ended).
func (t *UDPTables) Sockets() (int, error) {
	count := 0
	for _, f := range t.files {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		count += countUDPSockets(b)
	}
	return count, nil
}

// Close closes the tables.
func (t *UDPTables) Close() error {
	var errs []error
	for _, f := range t.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// countUDPSockets counts the rows of a /proc/net/udp or udp6 table whose
// remote end (the third field) is not port 53.
func countUDPSockets(table []byte) int {
	lines := bytes.Split(table, []byte("\n"))
	n := 0
	for _, line := range lines[min(1, len(lines)):] { // the first is the header
		fields := bytes.Fields(line)
		if len(fields) > 2 && !bytes.HasSuffix(fields[2], []byte(dnsPortHex)) {
			n++
		}
	}
	return n
}
