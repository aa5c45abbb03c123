package results

import (
	"database/sql"
	"fmt"
)

// upgrade lets a database made by an earlier quicbench be read and
// continued: tables and columns added since are added (with their zero,
// or NULL, in the rows already there) when the store may write, and else
// a missing table reads as empty and a missing column as those values.
func (s *Store) upgrade(mode int) error {
	for _, t := range s.t.all() {
		have, err := columnNames(s.db, t.name)
		if err != nil {
			return s.explain("read the schema", err)
		}
		if len(have) == 0 && (t == s.t.samples || t == s.t.losses) { // the tables added since
			if err := s.addTable(t, mode); err != nil {
				return err
			}
			continue
		}
		for _, c := range t.cols {
			if have[c.name] {
				continue
			}
			if mode != readWrite {
				if t.absent == nil {
					t.absent = map[string]bool{}
				}
				t.absent[c.name] = true
				continue
			}
			stmt := fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.name, c.name, c.sqlType())
			if zero := c.zeroSQL(); zero != "NULL" {
				stmt += " DEFAULT " + zero
			}
			if _, err := s.db.Exec(stmt); err != nil {
				return s.explain("add column "+c.name, err)
			}
		}
	}
	return nil
}

// addTable makes table t, which a database made by an earlier quicbench
// lacks, with its index (only the samples' and the losses' are added
// since); a store that may not write reads it as empty.
func (s *Store) addTable(t *table, mode int) error {
	if mode != readWrite {
		t.missing = true
		return nil
	}
	index := samplesIndex
	if t == s.t.losses {
		index = lossesIndex
	}
	if _, err := s.db.Exec(t.create("") + index); err != nil {
		return s.explain("add table "+t.name, err)
	}
	return nil
}

// columnNames lists the columns table has in db.
func columnNames(db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names[name] = true
	}
	return names, rows.Err()
}
