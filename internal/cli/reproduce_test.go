package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
