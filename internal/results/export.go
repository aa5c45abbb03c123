package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// Export formats.
const (
	CSV     = "csv"
	JSONL   = "jsonl"
	Parquet = "parquet"
)

// Export writes trials.<format>, resources.<format> and
// connections.<format> into dir and returns their paths. Every column keeps
// its type: in Parquet numbers are INT64 or DOUBLE, flags BOOLEAN, times
// TIMESTAMP and the paths a LIST of structs; in JSON lines numbers, booleans,
// null and arrays; CSV is text, with empty fields for null.
func (s *Store) Export(dir, format string) ([]string, error) {
	if format != CSV && format != JSONL && format != Parquet {
		return nil, fmt.Errorf("format %q is unknown: use csv, jsonl or parquet", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var files []string
	for _, x := range []struct {
		name  string
		write func(w io.Writer) error
	}{
		{"trials", func(w io.Writer) error { return writeRows(w, format, s.t.trials, s.EachTrial) }},
		{"resources", func(w io.Writer) error { return writeRows(w, format, s.t.resources, s.EachResource) }},
		{"connections", func(w io.Writer) error { return writeRows(w, format, s.t.connections, s.EachConnection) }},
	} {
		path := filepath.Join(dir, x.name+"."+format)
		if err := writeFile(path, x.write); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
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
func writeRows[T any](w io.Writer, format string, tb *table, each func(func(T) error) error) error {
	switch format {
	case JSONL:
		return each(func(row T) error {
			b, err := tb.marshal(reflect.ValueOf(row))
			if err == nil {
				_, err = w.Write(append(b, '\n'))
			}
			return err
		})
	case Parquet:
		return writeParquet(w, each)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(tb.header()); err != nil {
		return err
	}
	err := each(func(row T) error { return cw.Write(tb.csvRecord(reflect.ValueOf(row))) })
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

// writeParquet writes the rows in batches with the row type's schema.
func writeParquet[T any](w io.Writer, each func(func(T) error) error) error {
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
