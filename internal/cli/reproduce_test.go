package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/results"
)

// TestReproduceRefusesBadInputInOneLine: a paper, scale or directory that
// is wrong is one line on stderr and exit 2, before anything runs.
func TestReproduceRefusesBadInputInOneLine(t *testing.T) {
	dir := t.TempDir()
	stranger := filepath.Join(dir, "taken", "cook2017-quick")
	os.MkdirAll(stranger, 0o755)
	store, err := results.Create(filepath.Join(stranger, results.FileName), map[string]string{"spec_name": "demo"})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	checkUsageErrors(t, []usageCase{
		{[]string{"reproduce"}, "give a paper: nepomuceno2018, masri, cook2017, wolsing2019, biswal2016 or all"},
		{[]string{"reproduce", "seed002"}, `no paper "seed002": give one of nepomuceno2018, masri, cook2017, wolsing2019, biswal2016`},
		{[]string{"reproduce", "cook", "--scale", "huge"}, `--scale: scale "huge" is not quick or paper`},
		{[]string{"reproduce", "cook", "extra"}, `unexpected argument "extra"`},
		{[]string{"reproduce", "cook", "--out", filepath.Join(dir, "taken")}, `holds a run of the spec "demo", not of cook2017-quick: give another --out`},
	})
}

// TestReproduceListNamesEveryPaperAndClaim.
func TestReproduceListNamesEveryPaperAndClaim(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"reproduce", "--list"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"nepomuceno2018  Nepomuceno et al. 2018", "masri  Masri et al.", "cook2017  Cook et al. 2017", "wolsing2019  Wolsing et al. 2019",
		"biswal2016  Biswal and Gnawali 2016", "quick: cook2017-quick.yaml, cook2017-servers-quick.yaml", "C8  On DSL and LTE", "not reproduced: SPDY 3.1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--list lacks %q", want)
		}
	}
}

// TestReproductionsLayOutTheirRuns: one paper's runs go in OUT/<spec>,
// all papers' in OUT/<paper>/<spec>; by default under runs/.
func TestReproductionsLayOutTheirRuns(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	one, err := reproductions("Cook", "quick", "out", now)
	if err != nil || len(one) != 1 || one[0].dir != "out" || len(one[0].specs) != 2 || one[0].specs[1].Name != "cook2017-servers-quick" {
		t.Fatalf("cook: %+v, %v", one, err)
	}
	all, err := reproductions("all", "paper", "", now)
	if err != nil || len(all) != 5 || all[3].dir != "runs/reproduce-all-20261124-120000/wolsing2019" || all[3].specs[0].Name != "wolsing2019" {
		t.Fatalf("all: %d reproductions, %v", len(all), err)
	}
	if !strings.Contains(all[0].command, "quicbench reproduce all --scale paper --out runs/reproduce-all-20261124-120000") {
		t.Errorf("the command to continue: %q", all[0].command)
	}
}
