package report

import (
	"fmt"
	"io"

	"github.com/quicbench/quicbench/internal/analysis"
)

// useWords says how a discovering setting's h3 loads divided their
// requests between h3 and TCP: "the browser discovered h3 (alt-svc): 8
// of 17 requests (47 %) and 52 % of the bytes came over h3, the document
// in 0 of 1 loads, the first h3 request at 313 ms (median); 9 requests
// went over TCP after their host had offered h3".
func useWords(su analysis.SettingUse) string {
	u := su.Use
	n := u.H3Requests + u.TCPRequests
	s := fmt.Sprintf("the browser discovered h3 (%s): %d of %d requests (%s) and %s of the transfer bytes it reported came over h3, the document in %d of %d loads",
		su.Setting.Discovery(), u.H3Requests, n, percent(u.RequestShare()), percent(u.ByteShare()), su.DocumentsOverH3, su.Loads)
	if u.FirstH3.N > 0 {
		s += fmt.Sprintf(", the first h3 request at %s ms (median)", num(u.FirstH3.Median, 0))
	} else {
		s += ", none over h3"
	}
	if su.UDP != "" && su.UDP != "pass" {
		s += fmt.Sprintf("; the network's UDP policy (%s) dropped %d UDP packets of these loads, so the time against h2 is what offering h3 cost users behind such a network", su.UDP, su.UDPDropped)
	}
	if u.TCPAfterOffer > 0 {
		s += fmt.Sprintf("; %d requests went over TCP after their host had offered h3 (the browser kept its TCP connection, or QUIC lost its race or was marked broken)", u.TCPAfterOffer)
	}
	return s
}

// useOf is setting s's protocol use in a, if the browser discovered h3.
func useOf(a *analysis.Analysis, s analysis.Setting) (analysis.SettingUse, bool) {
	for _, su := range a.Uses {
		if su.Setting == s {
			return su, true
		}
	}
	return analysis.SettingUse{}, false
}

// UseLines are one line per setting whose browser discovered h3, with the
// setting's label (useWords); nil when every load forced its protocol.
func UseLines(a *analysis.Analysis) []string {
	v := analysis.VariedIn(a.Comparisons)
	var out []string
	for _, su := range a.Uses {
		out = append(out, fmt.Sprintf("%s, %s: %s.", v.Label(su.Setting), su.Setting.Page(), useWords(su)))
	}
	return out
}

// writeUses writes UseLines under a heading, if any.
func writeUses(w io.Writer, a *analysis.Analysis) {
	lines := UseLines(a)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "h3 as the browser met it (discovery rather than forced: h3 means the servers offered it; the loads are mixed by design):")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	fmt.Fprintln(w)
}
