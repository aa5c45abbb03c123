package factor

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTableDeclaresEachFactorOnce: IDs in order, columns and spec keys
// unique, every default a level that parses to itself, and every level of
// an enumerated factor parses to itself.
func TestTableDeclaresEachFactorOnce(t *testing.T) {
	columns, keys := map[string]bool{}, map[string]bool{}
	for i, f := range Table() {
		if f.ID != ID(i) || Of(f.ID).Column != f.Column {
			t.Errorf("factor %d has ID %d", i, f.ID)
		}
		if f.Column == "" || f.SpecKey == "" || f.What == "" || f.Plural == "" || columns[f.Column] || keys[f.SpecKey] {
			t.Errorf("factor %+v: empty or repeated names", f)
		}
		columns[f.Column], keys[f.SpecKey] = true, true
		if g, ok := BySpecKey(f.SpecKey); !ok || g.ID != f.ID {
			t.Errorf("BySpecKey(%q) = %v, %v", f.SpecKey, g.ID, ok)
		}
		if f.Default != "" {
			if got, err := f.Parse(f.Default); err != nil || got != f.Default {
				t.Errorf("%s: default %q parses as %q, %v", f.What, f.Default, got, err)
			}
		}
		if f.Enum == nil {
			continue
		}
		for _, l := range f.Enum.Values() {
			if got, err := f.Parse(l); err != nil || got != l || f.Words(l) == "" {
				t.Errorf("%s %q parses as %q, %v; words %q", f.What, l, got, err, f.Words(l))
			}
		}
		if f.Implicit && f.Default == "" {
			t.Errorf("%s is left out of keys at its default, but has none", f.What)
		}
	}
}

// TestKeysLeaveOutImplicitDefaults: a key names every setup (and cell)
// factor in table order, the cache as a boolean, and leaves out an
// implicit factor at its default.
func TestKeysLeaveOutImplicitDefaults(t *testing.T) {
	var l Levels
	for _, f := range Table() {
		l.Set(f.ID, f.Default)
	}
	l.Set(IDNetwork, "n")
	l.Set(IDPage, "synthetic:1x1KB")
	l.Set(IDProtocol, "h3")
	if got, want := l.Key(ScopeSetup), "network=n;page=synthetic:1x1KB;origins=1;stack=tcp;server=go"; got != want {
		t.Errorf("setup key %q, want %q", got, want)
	}
	if got, want := l.Key(ScopeCell), "network=n;page=synthetic:1x1KB;origins=1;stack=tcp;server=go;protocol=h3;visit=first;cache=false"; got != want {
		t.Errorf("cell key %q, want %q", got, want)
	}
	l.Set(IDQUIC, string(QUICQuinnBBR))
	l.Set(IDVisual, string(VisualOn))
	l.Set(IDCache, string(CacheOn))
	if got := l.Key(ScopeCell); !strings.Contains(got, ";server=go;quic=quinn+bbr;protocol=h3;") || !strings.HasSuffix(got, ";cache=true;visual=on") {
		t.Errorf("cell key %q", got)
	}
	if s := l.Setting(); s.Protocol() != "" || s.QUIC() != QUICQuinnBBR || s.Levels.Key(ScopeCell) == l.Key(ScopeCell) {
		t.Errorf("setting %v keeps the protocol or loses a level", s)
	}
}

func TestSettingMarshalsAsColumns(t *testing.T) {
	var l Levels
	l.Set(IDNetwork, "40ms")
	l.Set(IDPage, `archive:a "b"`)
	l.Set(IDProtocol, "h3")
	got, err := json.Marshal(l.Setting())
	if err != nil || string(got) != `{"network":"40ms","page":"archive:a \"b\""}` {
		t.Errorf("setting as JSON: %s, %v", got, err)
	}
}
