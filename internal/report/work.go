package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
)

// WriteWork writes the replay's completeness of one setting's loads (a
// comparison's), as the report does.
func WriteWork(w io.Writer, sws []analysis.SettingWork) { writeWork(w, sws, analysis.Varied{}) }

// writeWork writes the replay's completeness per setting and protocol.
func writeWork(w io.Writer, sws []analysis.SettingWork, v analysis.Varied) {
	if len(sws) == 0 {
		return
	}
	fmt.Fprintf(w, "\nReplay of recorded pages, medians per verified load: the requests the page started up to its load event\n"+
		"and their bytes (the work its load time measures), the requests and body bytes the servers answered over the\n"+
		"whole load, fuzzy matches, variants (an image the recording holds at another size), unmatched requests and\n"+
		"those not counted (the browser's own and those an earlier load found the recording lacks with no sibling); DIFFERENT WORK marks a setting whose protocols' work up to the load differs by more than %g %%:\n", 100*analysis.WorkTolerance)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tloads\trequests\tbytes\tserved\tserved bytes\tfuzzy\tvariant\tunmatched\tnot counted\t\n", variedHeader(v))
	for _, sw := range sws {
		for i, p := range sw.Protocols {
			mark := ""
			if i == 0 && sw.Differs {
				mark = fmt.Sprintf("DIFFERENT WORK (requests ±%s, bytes ±%s)", percent(sw.RequestSpread), percent(sw.ByteSpread))
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, sw.Setting),
				p.Protocol, p.Loads, num(p.Requests, 0), num(p.Bytes, 0), num(p.Served, 0), num(p.ServedBytes, 0),
				num(p.Fuzzy, 0), num(p.Variant, 0), num(p.Unmatched, 0), num(p.BrowserOwn, 0), mark)
		}
	}
	tw.Flush()
}
