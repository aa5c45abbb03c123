package results

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
)

// TestLevelsHaveAColumnPerFactor keeps Levels and factor.Table in step:
// one field per factor, named by its column, of the type its storage
// says, and no field without a factor.
func TestLevelsHaveAColumnPerFactor(t *testing.T) {
	typ := reflect.TypeFor[Levels]()
	columns := map[string]reflect.Kind{}
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("parquet"), ",")
		columns[name] = typ.Field(i).Type.Kind()
	}
	want := map[factor.Storage]reflect.Kind{factor.StoreText: reflect.String, factor.StoreCount: reflect.Int64, factor.StoreFlag: reflect.Bool, factor.StoreCores: reflect.Pointer}
	for _, f := range factor.Table() {
		kind, ok := columns[f.Column]
		if !ok {
			t.Errorf("factor %s has no column %q in Levels", f.What, f.Column)
			continue
		}
		if kind != want[f.Store] {
			t.Errorf("column %s is a %v, its factor is stored as a %v", f.Column, kind, want[f.Store])
		}
		delete(columns, f.Column)
	}
	for c := range columns {
		t.Errorf("Levels has column %s, which is no factor's", c)
	}
}

func TestLevelsRoundTrip(t *testing.T) {
	var l factor.Levels
	for id, v := range map[factor.ID]string{factor.IDNetwork: "n", factor.IDPage: "synthetic:2x1KB", factor.IDOrigins: "4", factor.IDStack: "tcp+",
		factor.IDServer: "nginx", factor.IDQUIC: "quinn+bbr", factor.IDProtocol: "h3", factor.IDVisit: "repeat", factor.IDCache: "on",
		factor.IDClient: "loader", factor.IDClientCPU: "0.5", factor.IDBrowser: "warm", factor.IDVisual: "off"} {
		l.Set(id, v)
	}
	cols, err := LevelsOf(l)
	if err != nil {
		t.Fatal(err)
	}
	if cols.Origins != 4 || !cols.Cache || cols.Visual || cols.QUIC != factor.QUICQuinnBBR || cols.Server != factor.ServerNginx ||
		cols.ClientCPU == nil || *cols.ClientCPU != 0.5 {
		t.Errorf("columns %+v", cols)
	}
	if back := cols.Factors(); back != l {
		t.Errorf("round trip: %v, want %v", back, l)
	}
	l.Set(factor.IDClientCPU, string(factor.ClientCPUUnlimited))
	if cols, err := LevelsOf(l); err != nil || cols.ClientCPU != nil || cols.Factors() != l {
		t.Errorf("unlimited: column %v (%v), back %v", cols.ClientCPU, err, cols.Factors())
	}
	l.Set(factor.IDOrigins, "many")
	if _, err := LevelsOf(l); err == nil || !strings.Contains(err.Error(), `origins "many"`) {
		t.Errorf("error %v", err)
	}
}

func TestTrialsBeforeTheQUICColumnReadAsTheirStack(t *testing.T) {
	for _, c := range []struct {
		server factor.QUICServer
		cc     factor.CC
		want   factor.QUIC
	}{{"", "", factor.QUICGoNewReno}, {"quic-go", "newreno", factor.QUICGoNewReno}, {"quinn", "cubic", factor.QUICQuinnCubic}, {"quiche", "bbr2", "quiche+bbr2"}} {
		tr := Trial{QUICValues: QUICValues{QUICServer: c.server, QUICCC: c.cc}}
		tr.upgrade()
		if tr.QUIC != c.want {
			t.Errorf("%s+%s: %s, want %s", c.server, c.cc, tr.QUIC, c.want)
		}
	}
}

func TestStopRuleIsStoredAndReadFromRunsMadeBefore(t *testing.T) {
	dir := t.TempDir()
	rule := StopRule{Min: 10, Max: 100, CIRatio: 0.03, Seed: 7, Baseline: "h2", Compare: "h3", Paired: true}
	k, v := StopRuleFact(rule)
	s, err := Create(dir+"/new.db", map[string]string{k: v, "spec": "seed: 99\nrepetitions: 5\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.StopRule(); err != nil || got == nil || *got != rule {
		t.Errorf("stored rule %+v, %v; want %+v", got, err, rule)
	}
	for spec, want := range map[string]*StopRule{
		"seed: 4\nrepetitions: {min: 3, max: 5, until: {ci_ratio: 0.3}}\nfactors: {networks: [gone]}\n": {Min: 3, Max: 5, CIRatio: 0.3, Seed: 4, Paired: true},
		"repetitions: {min: 10, max: 40, until: {ci_ratio: 0.05}}\n":                                    {Min: 10, Max: 40, CIRatio: 0.05, Seed: 1, Paired: true},
		"repetitions: 30\n": nil,
	} {
		old, err := Create(dir+"/old.db", map[string]string{"spec": spec})
		if err != nil {
			t.Fatal(err)
		}
		got, err := old.StopRule()
		if err != nil || (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("spec %q: rule %+v, %v; want %+v", spec, got, err, want)
		}
		old.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(dir + "/old.db" + suffix)
		}
	}
}

// FuzzLegacyStopRule: a run's stored spec comes from a database a user
// brings; reading its rule never panics, and a rule read has what the
// stored text said.
func FuzzLegacyStopRule(f *testing.F) {
	f.Add([]byte("seed: 4\nrepetitions: {min: 3, max: 5, until: {ci_ratio: 0.3}}\n"))
	f.Add([]byte("repetitions: 30\n"))
	f.Add([]byte("repetitions: {min: &a [*a], max: 1}\n"))
	f.Add([]byte("repetitions: {until: {ci_ratio: .nan}}\n"))
	f.Fuzz(func(t *testing.T, spec []byte) {
		r, err := legacyStopRule(spec)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("a multi-line error: %q", err)
		}
		if r != nil && r.Seed == 0 && !strings.Contains(string(spec), "seed") {
			t.Errorf("rule %+v without a seed in the text", r)
		}
	})
}

func TestTrialsBeforeTheDiscoveryColumnReadAsForced(t *testing.T) {
	tr := Trial{}
	tr.upgrade()
	if tr.Discovery != factor.DiscoveryForced {
		t.Errorf("discovery %q, want forced", tr.Discovery)
	}
	tr = Trial{Levels: Levels{Discovery: factor.DiscoveryAltSvc}}
	tr.upgrade()
	if tr.Discovery != factor.DiscoveryAltSvc {
		t.Errorf("discovery %q, want alt-svc kept", tr.Discovery)
	}
}
