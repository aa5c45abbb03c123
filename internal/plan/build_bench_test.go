package plan

import (
	"testing"

	"github.com/quicbench/quicbench/examples"
	"github.com/quicbench/quicbench/internal/spec"
)

// BenchmarkBuildNepomucenoPaperScale plans Nepomuceno et al.'s paper-scale
// spec (288,000 trials): go test -bench BuildNepomuceno -benchmem ./internal/plan
func BenchmarkBuildNepomucenoPaperScale(b *testing.B) {
	data, err := examples.Read("nepomuceno2018.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s, err := spec.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if p := Build(s); len(p.Trials) == 0 {
			b.Fatal("no trials")
		}
	}
}
