package reproduce

import (
	"strings"
	"testing"
	"time"
)

// TestReproductionsLayOutTheirRuns: one paper's runs go in OUT/<spec>,
// all papers' in OUT/<paper>/<spec>; by default under runs/.
func TestReproductionsLayOutTheirRuns(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	one, err := Resolve("Cook", "quick", "out", now)
	if err != nil || len(one) != 1 || one[0].Dir != "out" || len(one[0].Specs) != 4 || one[0].Specs[1].Name != "cook2017-servers-quick" || one[0].Specs[2].Name != "cook2017-altsvc-quick" || one[0].Specs[3].Name != "cook2017-access-quick" {
		t.Fatalf("cook: %+v, %v", one, err)
	}
	all, err := Resolve("all", "paper", "", now)
	if err != nil || len(all) != 5 || all[3].Dir != "runs/reproduce-all-20261124-120000/wolsing2019" || all[3].Specs[0].Name != "wolsing2019" {
		t.Fatalf("all: %d reproductions, %v", len(all), err)
	}
	if !strings.Contains(all[0].Command, "quicbench reproduce all --scale paper --out runs/reproduce-all-20261124-120000") {
		t.Errorf("the command to continue: %q", all[0].Command)
	}
}
