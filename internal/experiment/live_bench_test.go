package experiment

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/testbed/standin"
)

// BenchmarkLiveAgainstTestbed measures what a live page's path costs
// beyond the testbed's own: the same synthetic page (24 images of 20 KB,
// the same bytes from the same seed, served by the Go origin) loaded live
// from the stand-in site through the uplink, and served in the testbed,
// over the same emulated network, 10 rounds of h2 and h3 in Chromium
// each. It reports each protocol's PLT median both ways and their ratio.
// Run it with scripts/bench-live.sh.
func BenchmarkLiveAgainstTestbed(b *testing.B) {
	st := standin.Serve(b, 24, 20_000, nil, []string{standin.Host})
	const network = "networks: [{name: n, rtt: 40ms, down: 20mbit, up: 5mbit}]"
	live := fmt.Sprintf("repetitions: 10\nnetcheck: false\nlive: {resolve: [\"%s=%s\"], ca: %q}\nfactors:\n  %s\n  pages: [\"url:https://%s/\"]\n  protocols: [h2, h3]\n  client_cpu: [1]\n",
		standin.Host, standin.Addr, st.Certs.CAFile, network, standin.Host)
	served := fmt.Sprintf("repetitions: 10\nnetcheck: false\nfactors:\n  %s\n  pages: [synthetic:24x20KB]\n  protocols: [h2, h3]\n  client_cpu: [1]\n", network)
	medians := map[string]map[factor.Protocol]float64{}
	for _, run := range []struct{ name, text string }{{"live", live}, {"testbed", served}} {
		s, err := spec.Parse([]byte(run.text))
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(b.TempDir(), run.name)
		if _, err := Run(b.Context(), RunConfig{Spec: s, Dir: dir}); err != nil {
			b.Fatal(err)
		}
		store, err := results.Open(filepath.Join(dir, results.FileName))
		if err != nil {
			b.Fatal(err)
		}
		var trials []results.Trial
		err = store.EachTrial(func(t results.Trial) error { trials = append(trials, t); return nil })
		store.Close()
		if err != nil {
			b.Fatal(err)
		}
		medians[run.name] = map[factor.Protocol]float64{}
		for _, p := range analysis.SummarizeRun(trials, nil).Protocols {
			medians[run.name][p.Protocol] = p.PLT.Median
			b.Logf("%s %s: %d verified, %d failed, PLT median %.1f ms (p25 %.1f, p75 %.1f)", run.name, p.Protocol, p.OK, p.Failed, p.PLT.Median, p.PLT.P25, p.PLT.P75)
		}
	}
	for _, p := range []factor.Protocol{factor.H2, factor.H3} {
		b.ReportMetric(medians["live"][p]/medians["testbed"][p], "live/testbed-"+string(p))
	}
}
