package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestExportFormats(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(filepath.Join(dir, FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddTrial(trial("c1-r1", 1, true), []Resource{{URL: "https://a/1.png", Protocol: "h3", StartMs: 1.5, ResponseEndMs: 9.25, TransferBytes: 1100, Status: 200}})
	s.AddTrial(trial("c2-r1", 2, false), nil)

	for _, format := range []string{CSV, JSONL, Parquet} {
		files, err := s.Export(filepath.Join(dir, format), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var trials []TrialRow
		var resources []ResourceRow
		switch format {
		case CSV:
			f, _ := os.Open(files[0])
			recs, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(recs) != 3 {
				t.Fatalf("csv trials: %d records, %v", len(recs), err)
			}
			col := map[string]int{}
			for i, name := range recs[0] {
				col[name] = i
			}
			if recs[1][col["trial_id"]] != "c1-r1" || recs[1][col["plt_ms"]] != "812.5" || recs[2][col["plt_ms"]] != "" || recs[2][col["status"]] != "failed" || recs[1][col["cache"]] != "false" {
				t.Errorf("csv trials: %v", recs)
			}
			f, _ = os.Open(files[1])
			rr, _ := csv.NewReader(f).ReadAll()
			f.Close()
			if len(rr) != 2 || rr[1][0] != "c1-r1" || rr[1][4] != "9.25" {
				t.Errorf("csv resources: %v", rr)
			}
			continue
		case JSONL:
			f, _ := os.Open(files[0])
			for sc := bufio.NewScanner(f); sc.Scan(); {
				var r TrialRow
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				trials = append(trials, r)
			}
			f.Close()
			f, _ = os.Open(files[1])
			for sc := bufio.NewScanner(f); sc.Scan(); {
				var r ResourceRow
				json.Unmarshal(sc.Bytes(), &r)
				resources = append(resources, r)
			}
			f.Close()
		case Parquet:
			if trials, err = parquet.ReadFile[TrialRow](files[0]); err != nil {
				t.Fatal(err)
			}
			if resources, err = parquet.ReadFile[ResourceRow](files[1]); err != nil {
				t.Fatal(err)
			}
		}
		if len(trials) != 2 || trials[0].PLTMs == nil || *trials[0].PLTMs != 812.5 || trials[1].PLTMs != nil || trials[1].Error != "timed out" {
			t.Errorf("%s trials: %+v", format, trials)
		}
		if len(resources) != 1 || resources[0].ResponseEndMs != 9.25 || resources[0].TransferBytes != 1100 {
			t.Errorf("%s resources: %+v", format, resources)
		}
	}
	if _, err := s.Export(dir, "xlsx"); err == nil {
		t.Error("accepted format xlsx")
	}
}
