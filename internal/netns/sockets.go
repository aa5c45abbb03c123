package netns

import (
	"bytes"
	"fmt"
	"os"
)

// dnsPortHex is port 53 as the kernel's socket tables write it.
const dnsPortHex = ":0035"

// UDPSockets counts the UDP sockets, IPv4 and IPv6, open in the namespace,
// leaving out those connected to port 53 (a resolver's questions): in a
// client namespace, the browser's QUIC sockets, which it keeps until it has
// closed their connections (Firefox: until the draining period after a
// server's CONNECTION_CLOSE has ended).
func (n *Namespace) UDPSockets() (int, error) {
	count := 0
	err := n.Do(func() error {
		for _, table := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
			b, err := os.ReadFile(table)
			if err != nil {
				return fmt.Errorf("netns %s: read the UDP sockets: %w", n.Name, err)
			}
			count += countUDPSockets(b)
		}
		return nil
	})
	return count, err
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
