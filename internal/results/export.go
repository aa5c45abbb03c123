package results

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"reflect"

	"github.com/parquet-go/parquet-go"

	"github.com/quicbench/quicbench/internal/safefs"
)

// Export formats.
const (
	CSV     = "csv"
	JSONL   = "jsonl"
	Parquet = "parquet"
)

// Export writes trials.<format>, resources.<format>, connections.<format>,
// samples.<format> and losses.<format> (a run made before samples or
// losses were kept: none) into
// dir and returns their paths. Every column keeps
// its type: in Parquet numbers are INT64 or DOUBLE, flags BOOLEAN, times
// TIMESTAMP and the paths a LIST of structs; in JSON lines numbers, booleans,
// null and arrays; CSV is text, with empty fields for null.
// Canceling ctx stops it; each file is written whole or not at all.
func (s *Store) Export(ctx context.Context, dir, format string) ([]string, error) {
	if format != CSV && format != JSONL && format != Parquet {
		return nil, &InputError{fmt.Errorf("format %q is unknown: use csv, jsonl or parquet", format)}
	}
	if err := s.checkTables(s.t.trials, s.t.resources, s.t.connections); err != nil {
		return nil, err
	}
	var files []string
	for _, x := range []struct {
		name  string
		write func(w io.Writer) error
	}{
		{"trials", func(w io.Writer) error { return writeRows(ctx, w, format, s.t.trials, s.EachTrial) }},
		{"resources", func(w io.Writer) error { return writeRows(ctx, w, format, s.t.resources, s.EachResource) }},
		{"connections", func(w io.Writer) error { return writeRows(ctx, w, format, s.t.connections, s.EachConnection) }},
		{"samples", func(w io.Writer) error { return writeRows(ctx, w, format, s.t.samples, s.EachSample) }},
		{"losses", func(w io.Writer) error { return writeRows(ctx, w, format, s.t.losses, s.EachLoss) }},
	} {
		name := x.name + "." + format
		if err := writeFile(dir, name, x.write); err != nil {
			return nil, err
		}
		files = append(files, filepath.Join(dir, name))
	}
	return files, nil
}

// InputError is an error the user fixes by changing the command, the spec
// or the run they name, not a failure of the run: an unknown format, a
// database without a table it needs, a run directory to choose anew.
type InputError struct{ Err error }

// Error is the wrapped error's.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap is the wrapped error.
func (e *InputError) Unwrap() error { return e.Err }

// checkTables fails with an InputError if a table is missing.
func (s *Store) checkTables(tables ...*table) error {
	for _, tb := range tables {
		var n int
		err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tb.name).Scan(&n)
		if err != nil {
			return s.explain("read schema", err)
		}
		if n == 0 {
			return &InputError{fmt.Errorf("%s has no %s table: it was written by an older quicbench; rerun it with this version", s.path, tb.name)}
		}
	}
	return nil
}

// writeFile writes dir/name through a buffer, atomically: a failed export
// leaves no partial file.
func writeFile(dir, name string, write func(io.Writer) error) error {
	err := safefs.WriteAtomic(dir, name, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("export %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// writeRows writes the rows that each produces in format, until ctx is
// done.
func writeRows[T any](ctx context.Context, w io.Writer, format string, tb *table, each func(func(T) error) error) error {
	each = untilDone(ctx, each)
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

// untilDone is each, stopping with ctx's error once ctx is done.
func untilDone[T any](ctx context.Context, each func(func(T) error) error) func(func(T) error) error {
	return func(fn func(T) error) error {
		return each(func(row T) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(row)
		})
	}
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
