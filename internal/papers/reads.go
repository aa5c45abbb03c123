package papers

import "github.com/quicbench/quicbench/internal/factor"

// Reads reports whether a load of levels l is one the claim reads: in its
// cells and at a level of its contrast (and of its By contrast for an
// interaction).
func (c Claim) Reads(l factor.Levels) bool {
	_, ok := slotOf(c.Stat, l)
	return ok && c.Cells.Has(l)
}

// SettingOf is the setting of the claim that a load of levels l belongs
// to: l without the levels the claim contrasts, the key its groups (and a
// share's counted settings) are made by.
func (c Claim) SettingOf(l factor.Levels) factor.Levels {
	l.Set(c.Stat.Vary.Factor, "")
	if c.Stat.Kind == Interaction {
		l.Set(c.Stat.By.Factor, "")
	}
	return l
}

// SettingKey is the text of a setting of the claim (SettingOf's), by
// which a Sample names it.
func SettingKey(setting factor.Levels) string { return setting.Key(factor.ScopeCell) }

// Sample is the settings a share claim reads where it is estimated from a
// random sample of its settings (claim ID → the SettingKey of each
// sampled setting); a claim not in it reads every setting loaded.
type Sample map[string]map[string]bool

// allows reports whether claim c reads loads of setting key under s.
func (s Sample) allows(c Claim, key factor.Levels) bool {
	sampled, ok := s[c.ID]
	return !ok || sampled[SettingKey(key)]
}
