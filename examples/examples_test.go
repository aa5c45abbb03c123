package examples

import (
	"testing"

	"github.com/quicbench/quicbench/internal/spec"
)

// TestEveryExampleIsAValidSpec: each embedded spec file parses and checks
// as quicbench run would read it.
func TestEveryExampleIsAValidSpec(t *testing.T) {
	names, err := Names()
	if err != nil || len(names) == 0 {
		t.Fatalf("names %v: %v", names, err)
	}
	for _, name := range names {
		data, err := Read(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.Parse(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
