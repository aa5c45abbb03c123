package experiment

import (
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
)

// TestEveryClientLevelHasOneKind: each level of the client factor is
// implemented by exactly one registered client, which makes a Browser.
func TestEveryClientLevelHasOneKind(t *testing.T) {
	seen := map[factor.Client]int{}
	for _, k := range Clients() {
		if k.New == nil {
			t.Errorf("client %s cannot be made", k.Client)
		}
		seen[k.Client]++
	}
	for _, c := range factor.Clients().Values() {
		if seen[c] != 1 {
			t.Errorf("client %s is implemented %d times, want once", c, seen[c])
		}
	}
	if err := CheckClient("curl", ""); err == nil {
		t.Error("a client nobody implements passed the check")
	}
}
