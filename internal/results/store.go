// Package results is a run's results database: one SQLite file (pure-Go
// driver, WAL journal) with the run's facts, one row per trial committed the
// moment the trial ends, the failed attempts, the Resource Timing entries of
// each load, and the netcheck of each network. A resumed run reads which
// trials are done from it.
package results

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/quicbench/quicbench/internal/safefs"
)

// FileName is the database's name in a run directory.
const FileName = "results.db"

// Tables of row types; the rest of the schema is written out.
const (
	schemaMeta     = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
	schemaNetworks = "CREATE TABLE networks (name TEXT PRIMARY KEY, config TEXT NOT NULL, netcheck TEXT NOT NULL, checked_at TEXT NOT NULL);\n"
	schemaIndexes  = "CREATE INDEX resources_trial ON resources (trial_id);\nCREATE INDEX connections_trial ON connections (trial_id);\n" + samplesIndex + lossesIndex
	samplesIndex   = "CREATE INDEX samples_trial ON samples (trial_id);\n"
	lossesIndex    = "CREATE INDEX losses_trial ON losses (trial_id);\n"
)

// tables are the row types' tables of a store.
type tables struct {
	trials, attempts, resources, connections, samples, losses, testbeds *table
}

func newTables() tables {
	return tables{
		trials:      newTable("trials", reflect.TypeFor[Trial]()),
		attempts:    newTable("attempts", reflect.TypeFor[Attempt]()),
		resources:   newTable("resources", reflect.TypeFor[Resource]()),
		connections: newTable("connections", reflect.TypeFor[Connection]()),
		samples:     newTable("samples", reflect.TypeFor[Sample]()),
		losses:      newTable("losses", reflect.TypeFor[Loss]()),
		testbeds:    newTable("testbeds", reflect.TypeFor[Testbed]()),
	}
}

// all are every row type's table.
func (t tables) all() []*table {
	return []*table{t.trials, t.attempts, t.resources, t.connections, t.samples, t.losses, t.testbeds}
}

// schema is the whole database's schema.
func (t tables) schema() string {
	return schemaMeta + schemaNetworks +
		t.trials.create("PRIMARY KEY (trial_id)") +
		t.attempts.create("PRIMARY KEY (trial_id, attempt)") +
		t.resources.create("") + t.connections.create("") + t.samples.create("") + t.losses.create("") +
		t.testbeds.create("PRIMARY KEY (setup)") + schemaIndexes
}

// Store is an open results database.
type Store struct {
	db   *sql.DB
	path string
	t    tables
}

// ErrDiskFull is a write that failed for want of disk space: what was
// committed before it is kept.
var ErrDiskFull = errors.New("the disk is full")

// busyTimeoutMs is how long a write waits for another process's lock.
var busyTimeoutMs = 5000

// Ways to open a database.
const (
	readWrite = iota
	readOnly
	// immutable reads a database whose WAL index (-shm) cannot be made,
	// in a directory the user may not write: then no run is writing it.
	immutable
)

// dsn opens path with the busy timeout, the WAL journal and immediate
// write transactions, or read-only (no pragma that writes).
func dsn(path string, mode int) string {
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	switch mode {
	case readOnly:
		return fmt.Sprintf("%s?mode=ro&_pragma=busy_timeout(%d)", uri, busyTimeoutMs)
	case immutable:
		return uri + "?mode=ro&immutable=1"
	}
	return fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate", uri, busyTimeoutMs)
}

// sqliteFiles are the files SQLite opens by name beside a database.
var sqliteFiles = []string{"", "-wal", "-shm", "-journal"}

// checkNoLinks refuses a database whose file or journals are symbolic
// links (SQLite would follow them) or not regular files.
func checkNoLinks(path string) error {
	for _, suffix := range sqliteFiles {
		if err := safefs.CheckNoLinks(filepath.Dir(path), filepath.Base(path)+suffix); err != nil {
			return err
		}
	}
	return nil
}

// Create makes a new database at path with meta's facts; it fails if the
// file or one of its journals exists.
func Create(path string, meta map[string]string) (*Store, error) {
	for _, suffix := range sqliteFiles {
		if _, err := os.Lstat(path + suffix); err == nil {
			return nil, fmt.Errorf("%s exists: continue the run with --resume, or choose another --out", path+suffix)
		}
	}
	s, err := open(path, readWrite)
	if err != nil {
		return nil, err
	}
	tx, err := s.db.Begin()
	if err != nil {
		s.Close()
		return nil, s.explain("create", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(s.t.schema()); err != nil {
		s.Close()
		return nil, s.explain("create", err)
	}
	for k, v := range meta {
		if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, k, v); err != nil {
			s.Close()
			return nil, s.explain("create", err)
		}
	}
	if err := tx.Commit(); err != nil {
		s.Close()
		return nil, s.explain("create", err)
	}
	return s, nil
}

// Open opens an existing database to read and write.
func Open(path string) (*Store, error) { return openExisting(path, readWrite) }

// OpenReadOnly opens an existing database only to read it: it works on a
// read-only copy and as a user who may not write the run, and never
// changes the file.
func OpenReadOnly(path string) (*Store, error) {
	if othersRun(path) {
		// Root reading another user's run: SQLite would leave its WAL
		// index files there, root's, which the user could not remove. A
		// database without a WAL has everything in the file itself.
		return openExisting(path, immutable)
	}
	s, err := openExisting(path, readOnly)
	var cantInit *cannotWriteError
	if errors.As(err, &cantInit) {
		if _, serr := os.Lstat(path + "-shm"); errors.Is(serr, os.ErrNotExist) {
			return openExisting(path, immutable)
		}
	}
	return s, err
}

// OpenRunOf opens the run in directory dir to read it, and refuses a run
// of another spec than the one named specName (the reproduction of a
// paper finds its runs by their directories' names). The error wraps
// fs.ErrNotExist when dir holds no run.
func OpenRunOf(dir, specName string) (*Store, error) {
	path := filepath.Join(dir, FileName)
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("no run in %s: %w", dir, fs.ErrNotExist)
	}
	store, err := OpenReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("the run in %s: %w", dir, err)
	}
	got, err := store.Meta("spec_name")
	if err == nil && got != specName {
		err = fmt.Errorf("%s holds a run of the spec %q, not of %s", dir, got, specName)
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// othersRun reports whether this process is root and the database at path
// is in a directory of another user's, and has no write-ahead log.
func othersRun(path string) bool {
	if os.Geteuid() != 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Lstat(filepath.Dir(path), &st) != nil || st.Uid == 0 {
		return false
	}
	_, err := os.Lstat(path + "-wal")
	return errors.Is(err, os.ErrNotExist)
}

// cannotWriteError is SQLite's refusal to open a WAL database read-only
// where it cannot create the WAL index.
type cannotWriteError struct{ err error }

// Error is SQLite's.
func (e *cannotWriteError) Error() string { return e.err.Error() }

func openExisting(path string, mode int) (*Store, error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("no results database at %s: is this the run directory of a quicbench run or compare?", path)
	}
	if err := checkNoLinks(path); err != nil {
		return nil, err
	}
	s, err := open(path, mode)
	if err == nil {
		var n int
		if err = s.db.QueryRow(`SELECT count(*) FROM meta`).Scan(&n); err != nil {
			s.Close()
			err = s.explain("open", err)
		} else if err = s.upgrade(mode); err != nil {
			s.Close()
		}
	}
	switch {
	case err == nil:
		return s, nil
	case mode == readOnly && strings.Contains(err.Error(), "readonly database"):
		return nil, &cannotWriteError{err}
	case strings.Contains(err.Error(), "no such table"):
		return nil, fmt.Errorf("%s is not a results database (it has no meta table)", path)
	}
	return nil, err
}

func open(path string, mode int) (*Store, error) {
	db, err := sql.Open("sqlite", dsn(path, mode))
	if err != nil {
		return nil, fmt.Errorf("results database %s: %w", path, err)
	}
	// One connection: writes are serialized anyway, and the WAL lets
	// other processes (export, report) read meanwhile.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, t: newTables()}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, s.explain("open", err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// explain turns SQLite's errors into what the user can do about them.
func (s *Store) explain(op string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY"):
		return fmt.Errorf("results database %s is locked by another process: is another quicbench run using this directory? (%s: %v)", s.path, op, err)
	case strings.Contains(msg, "disk is full") || strings.Contains(msg, "SQLITE_FULL") || errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("results database %s: %w (%s)", s.path, ErrDiskFull, op)
	case strings.Contains(msg, "file is not a database"):
		return fmt.Errorf("%s is not a results database", s.path)
	}
	return fmt.Errorf("results database %s: %s: %w", s.path, op, err)
}

// Meta returns the value of a run fact, or "" if it is not set.
func (s *Store) Meta(key string) (string, error) {
	var v string
	err := s.db.QueryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", s.explain("read meta", err)
	}
	return v, nil
}

// SetMeta sets a run fact.
func (s *Store) SetMeta(key, value string) error {
	if _, err := s.db.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value); err != nil {
		return s.explain("write meta", err)
	}
	return nil
}

// Done returns the IDs of the trials recorded so far.
func (s *Store) Done() (map[string]bool, error) {
	rows, err := s.db.Query(`SELECT trial_id FROM trials`)
	if err != nil {
		return nil, s.explain("read trials", err)
	}
	defer rows.Close()
	done := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.explain("read trials", err)
		}
		done[id] = true
	}
	return done, s.explainErr("read trials", rows.Err())
}

func (s *Store) explainErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return s.explain(op, err)
}

// Counts returns how many trials are recorded, and how many of them failed.
func (s *Store) Counts() (total, failed int, err error) {
	err = s.db.QueryRow(`SELECT count(*), coalesce(sum(status != 'ok'), 0) FROM trials`).Scan(&total, &failed)
	return total, failed, s.explainErr("count trials", err)
}

// ForgetFailed removes the failed trials, with their resources,
// connections and samples, so that a resumed run runs them again; their
// attempts stay. It returns, per removed trial, how many attempts are recorded, so new
// attempts are numbered after them.
func (s *Store) ForgetFailed() (map[string]int, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return nil, s.explain("forget failed trials", err)
	}
	defer tx.Rollback()
	rows, err := tx.Query(`SELECT t.trial_id, (SELECT coalesce(max(a.attempt), 0) FROM attempts a WHERE a.trial_id = t.trial_id) FROM trials t WHERE t.status != 'ok'`)
	if err != nil {
		return nil, s.explain("forget failed trials", err)
	}
	attempts := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, s.explain("forget failed trials", err)
		}
		attempts[id] = n
	}
	rows.Close()
	for _, stmt := range []string{
		`DELETE FROM resources WHERE trial_id IN (SELECT trial_id FROM trials WHERE status != 'ok')`,
		`DELETE FROM connections WHERE trial_id IN (SELECT trial_id FROM trials WHERE status != 'ok')`,
		`DELETE FROM samples WHERE trial_id IN (SELECT trial_id FROM trials WHERE status != 'ok')`,
		`DELETE FROM trials WHERE status != 'ok'`,
	} {
		if _, err := tx.Exec(stmt); err != nil {
			return nil, s.explain("forget failed trials", err)
		}
	}
	return attempts, s.explainErr("forget failed trials", tx.Commit())
}
