package results

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// A row type (Trial, Resource, Connection, Testbed) is a flat struct whose
// fields, embedded structs flattened, are its columns. Each field's
// parquet tag names the column everywhere: in SQLite, in CSV and JSON
// lines, and in Parquet (where parquet-go reads the tag itself). So a
// column is added by adding a field, and the store, the export and the
// readers follow.

// column is one field of a row type.
type column struct {
	name  string
	index []int
	typ   reflect.Type
}

// columnsOf lists the columns of row type t, in field order.
func columnsOf(t reflect.Type) []column {
	var cols []column
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "" || name == "-" {
			panic(fmt.Sprintf("results: field %s.%s has no parquet tag", t.Name(), f.Name))
		}
		cols = append(cols, column{name: name, index: f.Index, typ: f.Type})
	}
	return cols
}

var timeType = reflect.TypeFor[time.Time]()

// sqlType is the column's SQLite type; pointers are nullable.
func (c column) sqlType() string {
	t, null := c.typ, c.typ.Kind() == reflect.Pointer
	if null {
		t = t.Elem()
	}
	decl := "TEXT"
	switch {
	case t == timeType:
	case reflect.PointerTo(t).Implements(reflect.TypeFor[sql.Scanner]()):
	case t.Kind() == reflect.Bool, t.Kind() == reflect.Int64, t.Kind() == reflect.Int:
		decl = "INTEGER"
	case t.Kind() == reflect.Float64:
		decl = "REAL"
	}
	if !null {
		decl += " NOT NULL"
	}
	return decl
}

// storedTypes lists, for SQL's IN, the storage classes (typeof) a value of
// the column may have: integers in a REAL column too, NULL where it is
// nullable.
func (c column) storedTypes() string {
	decl := c.sqlType()
	types := "'text'"
	switch {
	case strings.HasPrefix(decl, "INTEGER"):
		types = "'integer'"
	case strings.HasPrefix(decl, "REAL"):
		types = "'real', 'integer'"
	}
	if !strings.HasSuffix(decl, "NOT NULL") {
		types += ", 'null'"
	}
	return types
}

// zeroSQL is the column's value in rows written before it existed: SQL
// NULL for a nullable column, else its type's zero.
func (c column) zeroSQL() string {
	decl := c.sqlType()
	switch {
	case !strings.HasSuffix(decl, "NOT NULL"):
		return "NULL"
	case strings.HasPrefix(decl, "INTEGER"), strings.HasPrefix(decl, "REAL"):
		return "0"
	}
	return "''"
}

// table is a row type stored in one SQLite table.
type table struct {
	name string
	typ  reflect.Type
	cols []column
	// absent are the columns a database made by an earlier quicbench
	// lacks and that could not be added (it was opened read-only): they
	// read as their zeroSQL.
	absent map[string]bool
	// missing says the database lacks the whole table and was opened
	// read-only: it reads as empty.
	missing bool
}

func newTable(name string, t reflect.Type) *table {
	return &table{name: name, typ: t, cols: columnsOf(t)}
}

// create is the CREATE TABLE statement, with extra constraints.
func (t *table) create(extra string) string {
	var defs []string
	for _, c := range t.cols {
		defs = append(defs, c.name+" "+c.sqlType())
	}
	if extra != "" {
		defs = append(defs, extra)
	}
	return fmt.Sprintf("CREATE TABLE %s (\n\t%s\n);\n", t.name, strings.Join(defs, ",\n\t"))
}

// insert is the INSERT statement of a row.
func (t *table) insert() string {
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.name, strings.Join(t.header(), ", "), strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", "))
}

// selectList is the table's columns for a SELECT, each after prefix (a
// table alias and a dot, or "").
func (t *table) selectList(prefix string) string {
	names := t.header()
	for i, c := range t.cols {
		names[i] = prefix + names[i]
		if t.absent[c.name] {
			names[i] = c.zeroSQL() + " AS " + c.name
		}
	}
	return strings.Join(names, ", ")
}

// header is the column names.
func (t *table) header() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.name
	}
	return out
}

const timeFormat = time.RFC3339Nano

// args are the values of row v for insert.
func (t *table) args(v reflect.Value) []any {
	out := make([]any, len(t.cols))
	for i, c := range t.cols {
		f := v.FieldByIndex(c.index)
		if c.typ == timeType {
			out[i] = f.Interface().(time.Time).UTC().Format(timeFormat)
			continue
		}
		out[i] = f.Interface()
	}
	return out
}

// scan reads one row of rows into the row that ptr points to.
func (t *table) scan(rows *sql.Rows, ptr reflect.Value) error {
	v := ptr.Elem()
	dest := make([]any, len(t.cols))
	times := map[int]*string{}
	for i, c := range t.cols {
		if c.typ == timeType {
			s := new(string)
			times[i], dest[i] = s, s
			continue
		}
		dest[i] = v.FieldByIndex(c.index).Addr().Interface()
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	for i, s := range times {
		tm, err := time.Parse(timeFormat, *s)
		if err != nil {
			return fmt.Errorf("column %s: %w", t.cols[i].name, err)
		}
		v.FieldByIndex(t.cols[i].index).Set(reflect.ValueOf(tm))
	}
	return t.checkBounds(v)
}

// Bounds of the values a row may hold: a time in ms (a column named
// *_ms) within MaxMillis of zero, any other number finite and within
// MaxMagnitude. No load quicbench measures comes near either; a value
// beyond is a database someone edited or damaged, refused when read
// rather than drawn or summed.
const (
	// MaxMillis is about 11.6 days, in ms.
	MaxMillis = 1e9
	// MaxMagnitude bounds counts, rates (bit/s) and shares.
	MaxMagnitude = 1e15
)

// OutOfBoundsError is a value a row holds beyond its column's bound.
type OutOfBoundsError struct {
	Column string
	Value  float64
	Bound  float64
}

// Error names the column, the value and the bound it passes.
func (e *OutOfBoundsError) Error() string {
	return fmt.Sprintf("column %s holds %g, outside ±%g: the results database was edited or damaged; correct or delete that row", e.Column, e.Value, e.Bound)
}

// checkBounds checks row v's numbers against their columns' bounds.
func (t *table) checkBounds(v reflect.Value) error {
	for _, c := range t.cols {
		f := v.FieldByIndex(c.index)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		if f.Kind() != reflect.Float64 {
			continue
		}
		bound := MaxMagnitude
		if strings.HasSuffix(c.name, "_ms") {
			bound = MaxMillis
		}
		if x := f.Float(); !(math.Abs(x) <= bound) {
			return &OutOfBoundsError{Column: c.name, Value: x, Bound: bound}
		}
	}
	return nil
}

// csvRecord formats row v: a nil pointer is an empty field, a time is
// RFC 3339, a list its text.
func (t *table) csvRecord(v reflect.Value) []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		f := v.FieldByIndex(c.index)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		switch x := f.Interface().(type) {
		case time.Time:
			out[i] = x.UTC().Format(timeFormat)
		case fmt.Stringer:
			out[i] = x.String()
		case float64:
			out[i] = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			out[i] = fmt.Sprint(x)
		}
	}
	return out
}

// marshal writes row v as a JSON object with its columns in order.
func (t *table) marshal(v reflect.Value) ([]byte, error) {
	b := []byte{'{'}
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		b = append(b, ':')
		f := v.FieldByIndex(c.index).Interface()
		if tm, ok := f.(time.Time); ok {
			f = tm.UTC().Format(timeFormat)
		}
		val, err := json.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		b = append(b, val...)
	}
	return append(b, '}'), nil
}

// Paths is a trial's per-origin paths: a list in Parquet and JSON, JSON
// text in SQLite (json_each reads it), "N=RTT,LOSS" pairs in CSV.
type Paths []PathValues

// PathValues is the extra way to one origin's server.
type PathValues struct {
	// Origin is the origin's number, from 1 (origin N is server N).
	Origin int64 `parquet:"origin" json:"origin"`
	// RTTMs is the extra round trip in ms; LossPct the extra loss in each
	// direction, in percent.
	RTTMs   float64 `parquet:"rtt_ms" json:"rtt_ms"`
	LossPct float64 `parquet:"loss_pct" json:"loss_pct"`
}

// Value stores the paths as JSON text.
func (p Paths) Value() (driver.Value, error) { return jsonListValue(p) }

// Scan reads the JSON text Value wrote.
func (p *Paths) Scan(src any) (err error) {
	*p, err = scanJSONList[PathValues](src, "paths")
	return err
}

// String is the paths as "2=40ms,0.5%;3=100ms,0%".
func (p Paths) String() string {
	parts := make([]string, len(p))
	for i, x := range p {
		parts[i] = fmt.Sprintf("%d=%sms,%s%%", x.Origin, strconv.FormatFloat(x.RTTMs, 'g', -1, 64), strconv.FormatFloat(x.LossPct, 'g', -1, 64))
	}
	return strings.Join(parts, ";")
}

// Strings is a list of text values: a list in Parquet and JSON, JSON text
// in SQLite (json_each reads it), the values joined by spaces in CSV (they
// are URLs and such, which hold none).
type Strings []string

// Value stores the list as JSON text.
func (s Strings) Value() (driver.Value, error) { return jsonListValue(s) }

// Scan reads the JSON text Value wrote; an empty text (a row written
// before the column existed) reads as an empty list.
func (s *Strings) Scan(src any) (err error) {
	*s, err = scanJSONList[string](src, "strings")
	return err
}

// jsonListValue is list as JSON text, "[]" for none.
func jsonListValue[T any](list []T) (driver.Value, error) {
	if list == nil {
		list = []T{}
	}
	b, err := json.Marshal(list)
	return string(b), err
}

// scanJSONList reads the JSON text of a list column called what; an empty
// list or text is nil.
func scanJSONList[T any](src any, what string) ([]T, error) {
	var text []byte
	switch v := src.(type) {
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		return nil, fmt.Errorf("%s: cannot read %T", what, src)
	}
	if len(text) == 0 {
		return nil, nil
	}
	var out []T
	if err := json.Unmarshal(text, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// String is the values joined by spaces.
func (s Strings) String() string { return strings.Join(s, " ") }
