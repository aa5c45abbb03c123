package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Export formats.
const (
	CSV     = "csv"
	JSONL   = "jsonl"
	Parquet = "parquet"
)

// TrialRow is a trial as exported: one column per factor, metric and
// outcome. Metric names follow the papers: plt_ms is loadEventEnd (the
// PLT of seeds 001–004), onload_ms loadEventStart (HAR's onLoad, seed 000),
// dcl_ms DOMContentLoaded (seed 000's onContentLoaded), ttfb_ms the
// document's first byte; all in ms from navigation start, empty for a
// failed trial.
type TrialRow struct {
	TrialID         string   `json:"trial_id" parquet:"trial_id"`
	Seq             int64    `json:"seq" parquet:"seq"`
	Rep             int64    `json:"rep" parquet:"rep"`
	Network         string   `json:"network" parquet:"network"`
	Page            string   `json:"page" parquet:"page"`
	Origins         int64    `json:"origins" parquet:"origins"`
	Stack           string   `json:"stack" parquet:"stack"`
	Server          string   `json:"server" parquet:"server"`
	Protocol        string   `json:"protocol" parquet:"protocol"`
	Visit           string   `json:"visit" parquet:"visit"`
	Cache           bool     `json:"cache" parquet:"cache"`
	Client          string   `json:"client" parquet:"client"`
	Status          string   `json:"status" parquet:"status"`
	Attempts        int64    `json:"attempts" parquet:"attempts"`
	Error           string   `json:"error" parquet:"error"`
	PLTMs           *float64 `json:"plt_ms" parquet:"plt_ms,optional"`
	OnLoadMs        *float64 `json:"onload_ms" parquet:"onload_ms,optional"`
	DCLMs           *float64 `json:"dcl_ms" parquet:"dcl_ms,optional"`
	TTFBMs          *float64 `json:"ttfb_ms" parquet:"ttfb_ms,optional"`
	FirstVisitPLTMs *float64 `json:"first_visit_plt_ms" parquet:"first_visit_plt_ms,optional"`
	DocumentProto   string   `json:"document_protocol" parquet:"document_protocol"`
	WallMs          *float64 `json:"wall_ms" parquet:"wall_ms,optional"`
	OverheadMs      *float64 `json:"overhead_ms" parquet:"overhead_ms,optional"`
	ServerRequests  int64    `json:"server_requests" parquet:"server_requests"`
	Connections     int64    `json:"connections" parquet:"connections"`
	Handshakes      string   `json:"handshakes" parquet:"handshakes"`
	TCPCongestion   string   `json:"tcp_congestion" parquet:"tcp_congestion"`
	StartedAt       string   `json:"started_at" parquet:"started_at"`
	FinishedAt      string   `json:"finished_at" parquet:"finished_at"`
	Artifacts       string   `json:"artifacts" parquet:"artifacts"`
}

// ResourceRow is a Resource Timing entry as exported.
type ResourceRow struct {
	TrialID       string  `json:"trial_id" parquet:"trial_id"`
	URL           string  `json:"url" parquet:"url"`
	Protocol      string  `json:"protocol" parquet:"protocol"`
	StartMs       float64 `json:"start_ms" parquet:"start_ms"`
	ResponseEndMs float64 `json:"response_end_ms" parquet:"response_end_ms"`
	TransferBytes int64   `json:"transfer_bytes" parquet:"transfer_bytes"`
	Status        int64   `json:"status" parquet:"status"`
}

func ptr(f Float) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.V
	return &v
}

// Row converts t for export.
func (t Trial) Row() TrialRow {
	return TrialRow{TrialID: t.ID, Seq: int64(t.Seq), Rep: int64(t.Rep), Network: t.Network, Page: t.Page, Origins: int64(t.Origins),
		Stack: t.Stack, Server: t.Server, Protocol: t.Protocol, Visit: t.Visit, Cache: t.Cache, Client: t.Client, Status: t.Status,
		Attempts: int64(t.Attempts), Error: t.Error, PLTMs: ptr(t.PLT), OnLoadMs: ptr(t.OnLoad), DCLMs: ptr(t.DCL), TTFBMs: ptr(t.TTFB),
		FirstVisitPLTMs: ptr(t.FirstVisitPLT), DocumentProto: t.DocumentProto, WallMs: ptr(t.Wall), OverheadMs: ptr(t.Overhead),
		ServerRequests: int64(t.ServerRequests), Connections: int64(t.Connections), Handshakes: t.Handshakes, TCPCongestion: t.TCPCongestion,
		StartedAt: t.StartedAt.UTC().Format(time.RFC3339Nano), FinishedAt: t.FinishedAt.UTC().Format(time.RFC3339Nano), Artifacts: t.Artifacts}
}

// Row converts r for export.
func (r Resource) Row() ResourceRow {
	return ResourceRow{TrialID: r.TrialID, URL: r.URL, Protocol: r.Protocol, StartMs: r.StartMs, ResponseEndMs: r.ResponseEndMs,
		TransferBytes: r.TransferBytes, Status: int64(r.Status)}
}

// Export writes trials.<format> and resources.<format> into dir and
// returns their paths.
func (s *Store) Export(dir, format string) ([]string, error) {
	if format != CSV && format != JSONL && format != Parquet {
		return nil, fmt.Errorf("format %q is unknown: use csv, jsonl or parquet", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	trials := filepath.Join(dir, "trials."+format)
	if err := writeFile(trials, func(w io.Writer) error {
		return writeRows(w, format, func(emit func(TrialRow) error) error {
			return s.EachTrial(func(t Trial) error { return emit(t.Row()) })
		})
	}); err != nil {
		return nil, err
	}
	resources := filepath.Join(dir, "resources."+format)
	if err := writeFile(resources, func(w io.Writer) error {
		return writeRows(w, format, func(emit func(ResourceRow) error) error {
			return s.EachResource(func(r Resource) error { return emit(r.Row()) })
		})
	}); err != nil {
		return nil, err
	}
	return []string{trials, resources}, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}

// writeRows writes the rows that each produces in format.
func writeRows[T any](w io.Writer, format string, each func(emit func(T) error) error) error {
	switch format {
	case JSONL:
		enc := json.NewEncoder(w)
		return each(func(row T) error { return enc.Encode(row) })
	case Parquet:
		pw := parquet.NewGenericWriter[T](w)
		batch := make([]T, 0, 4096)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			_, err := pw.Write(batch)
			batch = batch[:0]
			return err
		}
		err := each(func(row T) error {
			batch = append(batch, row)
			if len(batch) == cap(batch) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if cerr := pw.Close(); err == nil {
			err = cerr
		}
		return err
	}
	cw := csv.NewWriter(w)
	var zero T
	if err := cw.Write(csvHeader(reflect.TypeOf(zero))); err != nil {
		return err
	}
	err := each(func(row T) error { return cw.Write(csvRecord(reflect.ValueOf(row))) })
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

// csvHeader is the JSON names of t's fields.
func csvHeader(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		out[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return out
}

// csvRecord formats each field: a nil pointer is an empty field.
func csvRecord(v reflect.Value) []string {
	out := make([]string, v.NumField())
	for i := range out {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		switch f.Kind() {
		case reflect.String:
			out[i] = f.String()
		case reflect.Int64, reflect.Int:
			out[i] = strconv.FormatInt(f.Int(), 10)
		case reflect.Float64:
			out[i] = strconv.FormatFloat(f.Float(), 'g', -1, 64)
		case reflect.Bool:
			out[i] = strconv.FormatBool(f.Bool())
		default:
			out[i] = fmt.Sprint(f.Interface())
		}
	}
	return out
}
