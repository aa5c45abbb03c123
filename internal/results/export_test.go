package results

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/quicbench/quicbench/internal/testenv"
)

// exportedStore is a store with a verified and a failed trial, a
// resource, a connection and a sample.
func exportedStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Create(filepath.Join(dir, FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	res := []Resource{{URL: "https://a/1.png", Protocol: "h3", StartMs: 1.5, RequestStartMs: F(2), ResponseEndMs: 9.25, TransferBytes: 1100, Status: 200}}
	conns := []Connection{{Conn: 1, Transport: "quic", ALPN: "h3", Handshake: "0rtt", Requests: 2, OpenedAt: time.Unix(1_800_000_000, 0), BytesSent: 5000, SRTTMs: 101.5}}
	samples := []Sample{{AtMs: 50.5, ClientCPUMs: F(31.25), QuicbenchCPUMs: 4, UpBytes: 1200, DownBytes: 64000}}
	losses := []Loss{{Kind: LossDrop, Client: "10.0.0.2:40000", Server: "10.0.1.1:443", Transport: "tcp", Down: true, Bytes: 1448, FromMs: 120.5, ToMs: 120.5}}
	if err := s.AddLoad(trial("c1-r1", 1, true), LoadRows{Resources: res, Connections: conns, Samples: samples, Losses: losses}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrial(trial("c2-r1", 2, false), nil, nil); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestExportFormats(t *testing.T) {
	s, dir := exportedStore(t)
	for _, format := range []string{CSV, JSONL, Parquet} {
		files, err := s.Export(context.Background(), filepath.Join(dir, format), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if len(files) != 5 || !strings.HasSuffix(files[2], "connections."+format) || !strings.HasSuffix(files[3], "samples."+format) || !strings.HasSuffix(files[4], "losses."+format) {
			t.Fatalf("%s: files %v", format, files)
		}
		switch format {
		case CSV:
			checkCSV(t, files)
		case JSONL:
			checkJSONL(t, files)
		case Parquet:
			trials, err := parquet.ReadFile[Trial](files[0])
			if err != nil {
				t.Fatal(err)
			}
			conns, err := parquet.ReadFile[Connection](files[2])
			if err != nil {
				t.Fatal(err)
			}
			samples, err := parquet.ReadFile[Sample](files[3])
			if err != nil || len(samples) != 1 || samples[0].TrialID != "c1-r1" || samples[0].DownBytes != 64000 || *samples[0].ClientCPUMs != 31.25 {
				t.Errorf("parquet samples read back: %+v, %v", samples, err)
			}
			losses, err := parquet.ReadFile[Loss](files[4])
			if err != nil || len(losses) != 1 || losses[0].TrialID != "c1-r1" || losses[0].Kind != LossDrop || !losses[0].Down || losses[0].Bytes != 1448 || losses[0].FromMs != 120.5 {
				t.Errorf("parquet losses read back: %+v, %v", losses, err)
			}
			// parquet-go v0.32 reads a null into a pointer of an embedded
			// struct as a pointer to zero, so the nulls are checked with
			// DuckDB (TestParquetTypesInDuckDB).
			if len(trials) != 2 || *trials[0].PLT != 812.5 || trials[0].Paths[0].RTTMs != 40 || *trials[0].GERDownPct != 30 ||
				len(trials[0].UnmatchedURLs) != 2 || trials[0].UnmatchedURLs[1] != "GET https://b/beacon?t=1" || len(trials[1].UnmatchedURLs) != 0 ||
				!trials[0].StartedAt.Equal(time.Unix(1_800_000_000, 0)) || len(conns) != 1 || conns[0].Handshake != "0rtt" {
				t.Errorf("parquet read back: %+v %+v", trials, conns)
			}
		}
	}
	if _, err := s.Export(context.Background(), dir, "xlsx"); err == nil {
		t.Error("accepted format xlsx")
	}
}

func checkCSV(t *testing.T, files []string) {
	t.Helper()
	recs := testenv.ReadCSV(t, files[0])
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	if len(recs) != 3 || recs[1][col["trial_id"]] != "c1-r1" || recs[1][col["plt_ms"]] != "812.5" || recs[2][col["plt_ms"]] != "" ||
		recs[2][col["status"]] != "failed" || recs[1][col["cache"]] != "false" || recs[1][col["rtt_ms"]] != "100" ||
		recs[1][col["paths"]] != "2=40ms,0.5%" || recs[1][col["unmatched_urls"]] != "GET https://a/favicon.ico GET https://b/beacon?t=1" ||
		recs[2][col["unmatched_urls"]] != "" || recs[1][col["replay_fuzzy"]] != "1" || recs[1][col["ge_p_up_pct"]] != "" || recs[1][col["started_at"]] != "2027-01-15T08:00:00Z" {
		t.Errorf("csv trials: %v", recs)
	}
	if rr := testenv.ReadCSV(t, files[1]); len(rr) != 2 || rr[1][0] != "c1-r1" || rr[1][slices.Index(rr[0], "response_end_ms")] != "9.25" ||
		rr[1][slices.Index(rr[0], "request_start_ms")] != "2" || rr[1][slices.Index(rr[0], "dns_start_ms")] != "" {
		t.Errorf("csv resources: %v", rr)
	}
	if cr := testenv.ReadCSV(t, files[2]); len(cr) != 2 || cr[1][0] != "c1-r1" || cr[0][6] != "handshake" || cr[1][6] != "0rtt" {
		t.Errorf("csv connections: %v", cr)
	}
	// a party in quicbench's process has no CPU of its own: an empty field
	if sr := testenv.ReadCSV(t, files[3]); len(sr) != 2 || strings.Join(sr[0], ",") != "trial_id,at_ms,client_cpu_ms,server_cpu_ms,quicbench_cpu_ms,up_bytes,down_bytes" ||
		strings.Join(sr[1], ",") != "c1-r1,50.5,31.25,,4,1200,64000" {
		t.Errorf("csv samples: %v", sr)
	}
}

func checkJSONL(t *testing.T, files []string) {
	t.Helper()
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 || rows[0]["plt_ms"] != 812.5 || rows[1]["plt_ms"] != nil || rows[0]["cache"] != false || rows[0]["origins"] != 2.0 {
		t.Fatalf("jsonl trials: %v", rows)
	}
	paths, ok := rows[0]["paths"].([]any)
	if !ok || len(paths) != 1 || paths[0].(map[string]any)["loss_pct"] != 0.5 {
		t.Errorf("jsonl paths: %#v", rows[0]["paths"])
	}
	if urls, ok := rows[0]["unmatched_urls"].([]any); !ok || len(urls) != 2 || urls[0] != "GET https://a/favicon.ico" {
		t.Errorf("jsonl unmatched_urls: %#v", rows[0]["unmatched_urls"])
	}
}

// TestParquetTypesInDuckDB reads the Parquet export with DuckDB, a reader
// that is not ours (make deps installs it into .cache/pytools), and checks
// the column types and values it sees.
func TestParquetTypesInDuckDB(t *testing.T) {
	python, err := filepath.Abs("../../.cache/pytools/bin/python")
	if err != nil {
		t.Fatal(err)
	}
	testenv.RequireFile(t, python, "make deps installs DuckDB's Python package there")
	s, dir := exportedStore(t)
	if _, err := s.Export(context.Background(), dir, Parquet); err != nil {
		t.Fatal(err)
	}
	const script = `
import duckdb, json, sys
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
out = {}
for name in ("trials", "connections", "samples"):
    path = sys.argv[1] + "/" + name + ".parquet"
    out[name] = {r[0]: r[1] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()}
t = sys.argv[1] + "/trials.parquet"
out["values"] = con.execute("SELECT count(*), sum(plt_ms), count(plt_ms), max(paths[1].rtt_ms), bool_and(NOT cache), min(started_at)::VARCHAR, max(len(unmatched_urls)) FROM read_parquet(?)", [t]).fetchone()
print(json.dumps(out))
`
	cmd := exec.Command(python, "-c", script, dir)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v (%s)", err, stderrOf(err))
	}
	var got struct {
		Trials, Connections, Samples map[string]string
		Values                       []any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	for col, want := range map[string]string{
		"trial_id": "VARCHAR", "seq": "BIGINT", "rtt_ms": "DOUBLE", "cache": "BOOLEAN", "plt_ms": "DOUBLE", "origins": "BIGINT",
		"rate_down_bps": "BIGINT", "drop_head": "BOOLEAN", "started_at": "TIMESTAMP WITH TIME ZONE", "up_seed": "BIGINT", "protocol": "VARCHAR",
		"paths": "STRUCT(origin BIGINT, rtt_ms DOUBLE, loss_pct DOUBLE)[]", "unmatched_urls": "VARCHAR[]", "served_bytes": "BIGINT",
	} {
		if got.Trials[col] != want {
			t.Errorf("trials.%s is %q in DuckDB, want %s", col, got.Trials[col], want)
		}
	}
	for col, want := range map[string]string{"srtt_ms": "DOUBLE", "bytes_sent": "BIGINT", "closed": "BOOLEAN", "opened_at": "TIMESTAMP WITH TIME ZONE"} {
		if got.Connections[col] != want {
			t.Errorf("connections.%s is %q in DuckDB, want %s", col, got.Connections[col], want)
		}
	}
	for col, want := range map[string]string{"at_ms": "DOUBLE", "client_cpu_ms": "DOUBLE", "server_cpu_ms": "DOUBLE", "down_bytes": "BIGINT"} {
		if got.Samples[col] != want {
			t.Errorf("samples.%s is %q in DuckDB, want %s", col, got.Samples[col], want)
		}
	}
	want := []any{2.0, 812.5, 1.0, 40.0, true, "2027-01-15 08:00:00+00", 2.0}
	if len(got.Values) != len(want) {
		t.Fatalf("values %v", got.Values)
	}
	for i := range want {
		if got.Values[i] != want[i] {
			t.Errorf("value %d is %v, want %v", i, got.Values[i], want[i])
		}
	}
}

func stderrOf(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return ""
}
