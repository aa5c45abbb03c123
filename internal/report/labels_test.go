package report

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestFitLabelsNumbersAllWhenOneIsTooLong: short names stay as they are;
// one name wider than the slot turns every label into its number, and
// the key names each.
func TestFitLabelsNumbersAllWhenOneIsTooLong(t *testing.T) {
	short := []string{"dsl", "lte"}
	if labels, key := fitLabels(short, vg.Inch, vg.Points(10)); !slices.Equal(labels, short) || key != "" {
		t.Errorf("short names: labels %q, key %q", labels, key)
	}
	long := []string{"dsl", "lte-urban-drive-test-with-handovers-01"}
	labels, key := fitLabels(long, vg.Inch, vg.Points(10))
	if !slices.Equal(labels, []string{"1", "2"}) {
		t.Errorf("labels %q, want 1 and 2", labels)
	}
	if !strings.Contains(key, "1 = dsl") || !strings.Contains(key, "2 = lte-urban-drive-test-with-handovers-01") {
		t.Errorf("key %q does not name both", key)
	}
	if w := textWidth(long[1], vg.Points(10)); w < vg.Inch || w > 4*vg.Inch {
		t.Errorf("a 38-letter name measures %v at 10 points", w)
	}
}
