package report

import (
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
)

// TestTheReportWarnsOfStacksThatDidNotDoWhatWasApplied: testbeds whose
// stacks did what was applied are counted; each warning of one that did
// not is a WARNING line naming its setup.
func TestTheReportWarnsOfStacksThatDidNotDoWhatWasApplied(t *testing.T) {
	var b strings.Builder
	writeStacks(&b, nil, 3)
	if got := b.String(); !strings.Contains(got, "every testbed's stacks did what was applied, as far as its packets showed (3 testbeds measured)") {
		t.Errorf("all well: %q", got)
	}
	b.Reset()
	writeStacks(&b, []analysis.StackWarning{{Setup: "network=dsl;stack=tcp+", Warnings: []string{"TCP pacing is on as applied, but its first flights left in one burst on the wire"}}}, 3)
	if got := b.String(); !strings.Contains(got, "on 1 of 3 testbeds measured the stacks did not do what was applied:\n  WARNING: network=dsl;stack=tcp+: TCP pacing is on as applied, but its first flights left in one burst on the wire\n") {
		t.Errorf("one testbed off: %q", got)
	}
	b.Reset()
	writeStacks(&b, nil, 0)
	if b.Len() != 0 {
		t.Errorf("no testbed measured (a run made before 2026-11-28): %q", b.String())
	}
}
