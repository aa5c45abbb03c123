package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
)

// maxCorpusStats bounds the pages `corpus` generates (about 0.1 s each).
const maxCorpusStats = 2_000

// runCorpus prints the generated corpus's statistics beside the HTTP
// Archive's, and with --list each page's make-up.
func runCorpus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	pages := fs.Int("pages", 100, "how many `pages` of the corpus to generate and measure, from page 1")
	seed := fs.Uint64("seed", 1, "the corpus `seed` (page web2024:N@SEED)")
	list := fs.Bool("list", false, "also list each page: requests, origins, bytes")
	archive := fs.Int("archive", 0, "save page `N` of the corpus as a site archive in --to DIR instead (replay it as archive:DIR, or edit it)")
	to := fs.String("to", "", "with --archive: the site archive `directory` to write")
	if code, done := parseFlags(fs, args, "Usage: quicbench corpus [--pages N] [--seed S] [--list]\n       quicbench corpus --archive N [--seed S] --to DIR\n\nGenerates the web2024 corpus's first pages and prints their statistics beside the HTTP\nArchive's 2024 figures they follow (pages web2024:1, web2024:2, … in specs and --page),\nor saves one page as a site archive.", stdout, stderr); done {
		return code
	}
	if *archive != 0 || *to != "" {
		return saveCorpusPage(*archive, *seed, *to, stdout, stderr)
	}
	if *pages < 1 || *pages > maxCorpusStats {
		fmt.Fprintf(stderr, "quicbench corpus: --pages %d is outside 1 to %d\n", *pages, maxCorpusStats)
		return exitUsage
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "page\trequests\torigins\tKB\t")
		for n := 1; n <= *pages; n++ {
			p := factor.Page{Kind: factor.PageWeb2024, Number: n, CorpusSeed: *seed}
			s, err := gen.Web2024(p)
			if err != nil {
				fmt.Fprintln(stderr, "quicbench corpus:", err)
				return exitFailure
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", p, 1+len(s.Subresources)+len(s.Late), len(s.Origins), s.Bytes()/1000)
		}
		tw.Flush()
		fmt.Fprintln(stdout)
	}
	st, err := gen.Web2024Stats(*seed, *pages)
	if err != nil {
		fmt.Fprintln(stderr, "quicbench corpus:", err)
		return exitFailure
	}
	for _, line := range st.Table() {
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintln(stdout, "Targets: HTTP Archive 2024, desktop (Web Almanac 2024, Page Weight); bytes are on the wire (text gzip-compressed).")
	return exitOK
}

// saveCorpusPage writes page n of corpus seed as the site archive to.
func saveCorpusPage(n int, seed uint64, to string, stdout, stderr io.Writer) int {
	p := factor.Page{Kind: factor.PageWeb2024, Number: n, CorpusSeed: seed}
	err := p.Validate()
	if err == nil && to == "" {
		err = fmt.Errorf("--archive needs --to DIR, the site archive directory to write")
	}
	if err == nil {
		err = checkArchiveTarget(to)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench corpus:", err)
		return exitUsage
	}
	s, err := gen.Web2024(p)
	if err == nil {
		err = site.WriteArchive(context.Background(), to, site.ArchiveOf(s, "web2024"))
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench corpus:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s: %s as served by the Go origin without cache, %s\n", to, p, s.DocumentURL())
	return exitOK
}
