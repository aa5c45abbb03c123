package papers

import (
	"strings"
	"testing"
)

// TestLooksShareTheLevel: the parts of a claim's level that its looks
// spend add up to at most the level, however many rounds there are, and
// a row read at a look's part says so beside the paper's level.
func TestLooksShareTheLevel(t *testing.T) {
	sum := 0.0
	for k := range 10000 {
		sum += LookShare(k)
		if sum > 1 {
			t.Fatalf("the first %d looks spend %g of the level", k+1, sum)
		}
	}
	if sum < 0.999 {
		t.Errorf("10,000 looks spend %g of the level, want nearly all", sum)
	}
	row := Row{Claim: Claim{Alpha: 0.05 * LookShare(1), Stat: Stat{Kind: Ratio}}, Verdict: Agrees, Round: 1, Spent: true, Lo: 0.5, Hi: 0.6}
	if got := row.Level(); !strings.Contains(got, "look 2's part of the paper's p < 0.05") || !strings.Contains(got, "at p < 0.0076") {
		t.Errorf("Level() = %q", got)
	}
}
