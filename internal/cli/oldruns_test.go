package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The runs in testdata/oldruns were made by quicbench 3f0ee68, before the
// factors were declared in one table: "compare" a Chromium comparison
// (h1, h2, h3, repeat visits with the cache on, two origins), "until" a
// run of the built-in loader with a stopping rule and two QUIC stacks.
// Their report is what that version printed, and their export's every
// column keeps the value it had (columns added since may be there too).
var oldRuns = []string{"compare", "until"}

// copyRun copies a run directory of testdata/oldruns into a temporary
// directory (reading it leaves SQLite's index files beside it).
func copyRun(t *testing.T, name string) string {
	t.Helper()
	return copyTestRun(t, filepath.Join("testdata", "oldruns", name))
}

// copyTestRun copies the run directory src (its database and spec) into a
// temporary directory.
func copyTestRun(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.db", "spec.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReportOfRunsMadeBefore(t *testing.T) {
	for _, name := range oldRuns {
		t.Run(name, func(t *testing.T) {
			dir := copyRun(t, name)
			out := filepath.Join(t.TempDir(), "report")
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), []string{"report", dir, "--out", out}, &stdout, &stderr); code != exitOK {
				t.Fatalf("report: exit %d: %s", code, stderr.String())
			}
			got := strings.ReplaceAll(stdout.String(), out, "OUT")
			golden := filepath.Join("testdata", "oldruns", name+".report.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report of a run made before differs:\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestExportOfRunsMadeBefore(t *testing.T) {
	for _, name := range oldRuns {
		t.Run(name, func(t *testing.T) {
			dir := copyRun(t, name)
			out := filepath.Join(t.TempDir(), "export")
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), []string{"export", dir, "--format", "jsonl", "--to", out}, &stdout, &stderr); code != exitOK {
				t.Fatalf("export: exit %d: %s", code, stderr.String())
			}
			for _, table := range []string{"trials", "resources", "connections"} {
				got := readJSONL(t, filepath.Join(out, table+".jsonl"))
				golden := filepath.Join("testdata", "oldruns", name+"."+table+".jsonl")
				if *update {
					data, err := os.ReadFile(filepath.Join(out, table+".jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want := readJSONL(t, golden)
				if len(got) != len(want) || table == "trials" && len(want) == 0 {
					t.Fatalf("%s: %d rows exported, want %d", table, len(got), len(want))
				}
				for i := range want {
					for col, v := range want[i] {
						if !reflect.DeepEqual(got[i][col], v) {
							t.Errorf("%s row %d column %s: %v, was %v", table, i, col, got[i][col], v)
						}
					}
				}
			}
		})
	}
}

// readJSONL reads a JSON lines file into one map per line.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
