package analysis

import (
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// SettingUse is how the verified h3 loads of a setting whose browser
// discovered h3 (factor.Discovery.Discovers) divided their requests
// between h3 and TCP.
type SettingUse struct {
	Setting Setting
	Loads   int
	Use     UseTotals
	// H3Loads counts the loads with any request over h3, and
	// DocumentsOverH3 those whose document came over h3.
	H3Loads, DocumentsOverH3 int
	// UDP is the network's UDP policy ("pass", "block", …) and
	// UDPDropped the UDP packets it dropped in these loads.
	UDP        string
	UDPDropped int64
}

// Uses are the protocol use of every setting whose h3 loads discovered
// h3, in setting order; nil for a run that forced every protocol.
func Uses(trials []results.Trial) []SettingUse {
	var out []SettingUse
	discovered := func(t results.Trial) bool { return t.Discovery.Discovers() }
	for _, g := range bySetting(trials, discovered) {
		for _, pt := range g.protocols {
			if pt.protocol != "h3" {
				continue
			}
			su := SettingUse{Setting: g.setting, Loads: len(pt.trials), UDP: pt.trials[0].UDP}
			var first []float64
			for _, t := range pt.trials {
				addUse(&su.Use, t.ProtocolUse)
				su.UDPDropped += t.UpUDPDropped + t.DownUDPDropped
				first = appendValue(first, t.FirstH3)
				if t.H3Requests > 0 {
					su.H3Loads++
				}
				if t.DocumentProtocol == "h3" {
					su.DocumentsOverH3++
				}
			}
			su.Use.FirstH3 = stats.Summarize(first)
			out = append(out, su)
		}
	}
	return out
}
