package report

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/analysis"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
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
		"and the body bytes the servers send for them (the work its load time measures), the requests and body bytes the servers answered over the\n"+
		"whole load, fuzzy matches, variants (an image the recording holds at another size), unmatched requests and\n"+
		"those not counted (the browser's own and those an earlier load found the recording lacks with no sibling), and the\n"+
		"images the browser could not show (broken); DIFFERENT WORK marks a setting whose protocols' work up to the load differs by more than %g %%:\n", 100*analysis.WorkTolerance)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%sprotocol\tloads\trequests\tbytes\tserved\tserved bytes\tfuzzy\tvariant\tunmatched\tnot counted\tbroken\t\n", variedHeader(v))
	for _, sw := range sws {
		for i, p := range sw.Protocols {
			mark := ""
			if i == 0 && sw.Differs {
				mark = fmt.Sprintf("DIFFERENT WORK (requests ±%s, bytes ±%s)", percent(sw.RequestSpread), percent(sw.ByteSpread))
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", variedRow(v, sw.Setting),
				p.Protocol, p.Loads, num(p.Requests, 0), num(p.Bytes, 0), num(p.Served, 0), num(p.ServedBytes, 0),
				num(p.Fuzzy, 0), num(p.Variant, 0), num(p.Unmatched, 0), num(p.BrowserOwn, 0), num(p.Broken, 0), mark)
		}
	}
	tw.Flush()
	for _, sw := range sws {
		writeWorkDifferences(w, sw, v)
	}
}

// writeWorkDifferences names the requests behind a setting's different
// work, the first maxUnmatchedListed.
func writeWorkDifferences(w io.Writer, sw analysis.SettingWork, v analysis.Varied) {
	if len(sw.Differences) == 0 {
		return
	}
	where := ""
	if label := strings.TrimSpace(strings.ReplaceAll(variedRow(v, sw.Setting), "\t", " ")); label != "" {
		where = " in " + label
	}
	fmt.Fprintf(w, "Different work%s: requests most loads of some protocols started before their load event and most of the others' did not (a page's race with its own load event, or a request one protocol makes):\n", where)
	for _, d := range sw.Differences[:min(len(sw.Differences), maxUnmatchedListed)] {
		fmt.Fprintf(w, "  %s: in %s, not in %s\n", shortURL(d.URL), protocolList(d.In), protocolList(d.NotIn))
	}
	if len(sw.Differences) > maxUnmatchedListed {
		fmt.Fprintf(w, "  and %d more\n", len(sw.Differences)-maxUnmatchedListed)
	}
}

// protocolList is protocols joined by commas.
func protocolList(ps []factor.Protocol) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// maxUnmatchedListed bounds the requests the text report lists per site.
const maxUnmatchedListed = 10

// unmatchedCauses are the causes in the order the report gives them:
// the excused first.
var unmatchedCauses = []string{results.CauseBrowserOwn, results.CauseNavigation, results.CauseSteady, results.CauseSibling, results.CauseUnrecorded}

// variantCause is unmatched.csv's cause of a request answered with a
// variant (not unmatched: its served column names what answered it);
// brokenCause prefixes a broken image's cause there.
const (
	variantCause = "variant"
	brokenCause  = "broken image: "
)

// excusedCause says whether an unmatched request of cause does not count
// against a recording's tolerance.
func excusedCause(cause string) bool {
	return cause == results.CauseBrowserOwn || cause == results.CauseNavigation || cause == results.CauseSteady
}

// writeUnmatched lists, per recorded page, the distinct requests its
// verified loads asked for that the recording lacked, by cause, those
// answered with a variant, and the screen it was replayed at.
func writeUnmatched(w io.Writer, sites []analysis.SiteUnmatched) {
	if len(sites) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWhat recorded pages asked for that their recording lacked, per page over its verified loads: distinct requests by cause (%s, %s (the tab sent away from the page to one the recording lacks, held so that it stayed) and %s are excused; %s, the recording holding the file at other sizes, and %s count against the tolerance), and those answered with a variant (the recording's response for the same file at another size); all in unmatched.csv:\n",
		results.CauseBrowserOwn, results.CauseNavigation, results.CauseSteady, results.CauseSibling, results.CauseUnrecorded)
	for _, s := range sites {
		var parts []string
		for _, c := range unmatchedCauses {
			parts = append(parts, fmt.Sprintf("%s %d", c, s.ByCause[c]))
		}
		fmt.Fprintf(w, "  %s at %s, %d loads: %s; variants %d\n", s.Page, cmp.Or(s.Screen, "an unrecorded screen"), s.Loads, strings.Join(parts, ", "), len(s.Variants))
		for _, u := range s.URLs[:min(len(s.URLs), maxUnmatchedListed)] {
			fmt.Fprintf(w, "    %s (%s, %d loads)\n", shortRequest(u.Request), u.Cause, u.Loads)
		}
		if len(s.URLs) > maxUnmatchedListed {
			fmt.Fprintf(w, "    and %d more\n", len(s.URLs)-maxUnmatchedListed)
		}
		for _, v := range s.Variants[:min(len(s.Variants), maxUnmatchedListed)] {
			fmt.Fprintf(w, "    %s (variant: served %s, %d loads)\n", shortRequest(v.Request), shortURL(v.Served), v.Loads)
		}
		if len(s.Variants) > maxUnmatchedListed {
			fmt.Fprintf(w, "    and %d more variants\n", len(s.Variants)-maxUnmatchedListed)
		}
		writeBrokenImages(w, "    ", s.Broken)
	}
}

// WriteBroken lists, per recorded page, the images its verified loads
// could not show, with why, as the report does; nothing where none broke.
func WriteBroken(w io.Writer, sites []analysis.SiteUnmatched) {
	for _, s := range sites {
		if len(s.Broken) > 0 {
			fmt.Fprintf(w, "Broken images in the verified loads of %s (%d loads):\n", s.Page, s.Loads)
			writeBrokenImages(w, "  ", s.Broken)
		}
	}
}

// writeBrokenImages lists broken images, the first maxUnmatchedListed,
// each with its cause and loads.
func writeBrokenImages(w io.Writer, indent string, broken []analysis.BrokenImage) {
	for _, b := range broken[:min(len(broken), maxUnmatchedListed)] {
		fmt.Fprintf(w, "%simage %s (broken: %s, %d loads)\n", indent, shortURL(b.URL), b.Cause, b.Loads)
	}
	if len(broken) > maxUnmatchedListed {
		fmt.Fprintf(w, "%sand %d more broken images\n", indent, len(broken)-maxUnmatchedListed)
	}
}

// shortRequest is "METHOD URL" with the URL cut as a waterfall row's.
func shortRequest(req string) string {
	method, u, ok := strings.Cut(req, " ")
	if !ok {
		return shortURL(req)
	}
	return method + " " + shortURL(u)
}

// unmatchedTable is a.Unmatched as CSV rows, with a header: each
// unmatched request with its cause and whether it is excused, and each
// request answered with a variant with the recorded target served.
func unmatchedTable(a *analysis.Analysis) [][]string {
	rows := [][]string{{"page", "screen", "loads", "request", "cause", "excused", "in_loads", "served"}}
	for _, s := range a.Unmatched {
		for _, u := range s.URLs {
			excused := excusedCause(u.Cause)
			rows = append(rows, []string{s.Page, s.Screen, strconv.Itoa(s.Loads), u.Request, u.Cause, strconv.FormatBool(excused), strconv.Itoa(u.Loads), ""})
		}
		for _, v := range s.Variants {
			rows = append(rows, []string{s.Page, s.Screen, strconv.Itoa(s.Loads), v.Request, variantCause, "", strconv.Itoa(v.Loads), v.Served})
		}
		for _, b := range s.Broken {
			excused := b.Cause != results.BrokenHeld
			rows = append(rows, []string{s.Page, s.Screen, strconv.Itoa(s.Loads), "GET " + b.URL, brokenCause + b.Cause, strconv.FormatBool(excused), strconv.Itoa(b.Loads), ""})
		}
	}
	return rows
}
