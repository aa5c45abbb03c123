package netns

import "testing"

// TestUplinkTableNamesCarryTheForwarding: an uplink's host table names its
// link and the forwarding to put back; other tables are not taken for one.
func TestUplinkTableNamesCarryTheForwarding(t *testing.T) {
	for _, was := range []string{"", "0"} {
		link, got, ok := parseHostTable(hostTableName("qbu0123abcd", was))
		if !ok || link != "qbu0123abcd" || got != was {
			t.Errorf("forwarding %q: read back %q, %q, %v", was, link, got, ok)
		}
	}
	for _, name := range []string{"filter", "quicbench_uplink", "quicbench_eth0_forward0", "quicbench_qbu1_forward7", "nat"} {
		if _, _, ok := parseHostTable(name); ok {
			t.Errorf("%q taken for an uplink's table", name)
		}
	}
}
