package netns

import "testing"

// TestUplinkTableNamesCarryTheRun: an uplink's host table names its link
// and the PID of the run that made it; other tables are not taken for one.
func TestUplinkTableNamesCarryTheRun(t *testing.T) {
	link, pid, ok := parseHostTable(hostTableName("qbu0123abcd", 4321))
	if !ok || link != "qbu0123abcd" || pid != 4321 {
		t.Errorf("read back %q, %d, %v", link, pid, ok)
	}
	for _, name := range []string{"filter", "quicbench_uplink", "quicbench_eth0_42", "quicbench_qbu1_forward0", "quicbench_qbu1_0", "quicbench_qbu1_-3", "nat"} {
		if _, _, ok := parseHostTable(name); ok {
			t.Errorf("%q taken for an uplink's table", name)
		}
	}
}
