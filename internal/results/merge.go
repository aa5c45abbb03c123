package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Merge copies the rows of the results database at path (a shard of the
// same plan) into s: its trials, attempts, resources, connections,
// samples and testbeds (one record per testbed: a testbed whose repetitions were split
// over shards keeps the first), and the netchecks of networks s has none
// of yet. It returns
// the trials it copied and the networks whose netcheck s already had
// (kept in s; the caller keeps the shard's elsewhere). A trial already in
// s is an error that names it, and nothing of the shard is kept then.
func (s *Store) Merge(ctx context.Context, path string) (trials int, dupNetworks []string, err error) {
	if err := checkNoLinks(path); err != nil {
		return 0, nil, err
	}
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path) + "?mode=ro"
	if _, err := s.db.Exec(`ATTACH DATABASE ? AS shard`, uri); err != nil {
		return 0, nil, s.explain("open shard "+path, err)
	}
	defer s.db.Exec(`DETACH DATABASE shard`)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, s.explain("merge", err)
	}
	defer tx.Rollback()
	var dup string
	err = tx.QueryRowContext(ctx, `SELECT trial_id FROM shard.trials WHERE trial_id IN (SELECT trial_id FROM main.trials) LIMIT 1`).Scan(&dup)
	switch {
	case err == nil:
		return 0, nil, &InputError{fmt.Errorf("trial %.40s of %s is already in the merged run: a shard was given twice, or two runs of one shard", dup, path)}
	case !errors.Is(err, sql.ErrNoRows):
		return 0, nil, s.explain("merge "+path, err)
	}
	for _, t := range s.t.all() {
		if has, err := shardHas(tx, t.name); err != nil || !has {
			if err != nil {
				return 0, nil, s.explain("merge "+path, err)
			}
			continue // a shard made before the samples were kept
		}
		cols := make([]string, len(t.cols))
		for i, c := range t.cols {
			cols[i] = c.name
		}
		list := strings.Join(cols, ", ")
		verb := "INSERT"
		if t == s.t.testbeds {
			verb = "INSERT OR IGNORE" // a testbed split by repetitions over shards: its first record
		}
		res, err := tx.ExecContext(ctx, fmt.Sprintf(`%s INTO main.%s (%s) SELECT %s FROM shard.%s`, verb, t.name, list, list, t.name))
		if err != nil {
			return 0, nil, s.explain("merge "+t.name+" of "+path, err)
		}
		if t == s.t.trials {
			n, _ := res.RowsAffected()
			trials = int(n)
		}
	}
	if dupNetworks, err = mergeNetworks(tx); err != nil {
		return 0, nil, s.explain("merge networks of "+path, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, nil, s.explain("merge "+path, err)
	}
	return trials, dupNetworks, nil
}

// CheckTypes refuses a database whose tables hold a value of another type
// than its column's (text in a number's column, say), naming the first
// such column: what a run holds after a tool other than quicbench wrote
// into it. Merge's caller checks each shard with it first.
func (s *Store) CheckTypes(ctx context.Context) error {
	q, schema, path := s.db, "", s.path
	for _, t := range s.t.all() {
		if t.missing {
			continue
		}
		var wrong []string
		var cols []column
		for _, c := range t.cols {
			if !t.absent[c.name] {
				wrong, cols = append(wrong, fmt.Sprintf("typeof(%s) NOT IN (%s)", c.name, c.storedTypes())), append(cols, c)
			}
		}
		if len(wrong) == 0 {
			continue // a table a database made by an older quicbench lacks
		}
		// One scan of the table; the column is looked for only if a row
		// is wrong.
		var n int
		query := fmt.Sprintf(`SELECT count(*) FROM %s%s WHERE %s`, schema, t.name, strings.Join(wrong, " OR "))
		if err := q.QueryRowContext(ctx, query).Scan(&n); err != nil {
			return s.explain("check "+path, err)
		}
		if n == 0 {
			continue
		}
		for i, c := range cols {
			var bad int
			if err := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s%s WHERE %s`, schema, t.name, wrong[i])).Scan(&bad); err == nil && bad > 0 {
				return &InputError{fmt.Errorf("%s: %d rows of %s hold another type than column %s's (%s): the run was altered", path, bad, t.name, c.name, c.sqlType())}
			}
		}
	}
	return nil
}

// shardHas says whether the attached shard has a table name.
func shardHas(tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM shard.sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// mergeNetworks copies the shard's netchecks of networks the merged run
// has none of, and names those it has.
func mergeNetworks(tx *sql.Tx) ([]string, error) {
	rows, err := tx.Query(`SELECT name FROM shard.networks WHERE name IN (SELECT name FROM main.networks) ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var dup []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		dup = append(dup, name)
	}
	rows.Close()
	_, err = tx.Exec(`INSERT INTO main.networks SELECT * FROM shard.networks WHERE name NOT IN (SELECT name FROM main.networks)`)
	return dup, err
}

// NetworkReport returns the stored netcheck of network name, as SaveNetwork
// stored it ("" for none).
func (s *Store) NetworkReport(name string) (config, report string, err error) {
	err = s.db.QueryRow(`SELECT config, netcheck FROM networks WHERE name = ?`, name).Scan(&config, &report)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", s.explain("read network "+name, err)
	}
	return config, report, nil
}

// NetworkConfigs returns every stored network's link configuration
// (JSON, as SaveNetwork stored it) by network name.
func (s *Store) NetworkConfigs() (map[string]string, error) {
	return s.pairs("read networks", `SELECT name, config FROM networks`)
}

// NetworkReports returns every stored netcheck by network name.
func (s *Store) NetworkReports() (map[string]string, error) {
	return s.pairs("read networks", `SELECT name, netcheck FROM networks`)
}

// RunLevels reads every trial's factor levels, by trial ID, from the run
// directory dir: what two runs of one plan (a merged one and one in a
// piece) must agree on.
func RunLevels(dir string) (map[string]Levels, error) {
	s, err := OpenReadOnly(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := map[string]Levels{}
	err = s.EachTrial(func(t Trial) error { out[t.ID] = t.Levels; return nil })
	return out, err
}
