package results

import (
	"database/sql"
	"fmt"
)

// upgrade lets a database made by an earlier quicbench be read and
// continued: columns added since are added to its tables (with their
// zero, or NULL, in the rows already there) when the store may write, and
// else read as those values.
func (s *Store) upgrade(mode int) error {
	for _, t := range []*table{s.t.trials, s.t.attempts, s.t.resources, s.t.connections, s.t.testbeds} {
		have, err := columnNames(s.db, t.name)
		if err != nil {
			return s.explain("read the schema", err)
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
