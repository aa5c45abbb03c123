package results

import (
	"database/sql"
	"reflect"
	"time"
)

// AddTrial commits a trial with its resources, connections and samples
// (none for a load that was not sampled) in one transaction.
func (s *Store) AddTrial(t Trial, resources []Resource, conns []Connection, samples ...Sample) error {
	return s.AddLoad(t, LoadRows{Resources: resources, Connections: conns, Samples: samples})
}

// LoadRows are the rows a trial's load adds beside its trial row.
type LoadRows struct {
	Resources   []Resource
	Connections []Connection
	Samples     []Sample
	Losses      []Loss
}

// AddLoad commits a trial with its load's rows in one transaction.
func (s *Store) AddLoad(t Trial, l LoadRows) error {
	tx, err := s.db.Begin()
	if err != nil {
		return s.explain("save trial", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(s.t.trials.insert(), s.t.trials.args(reflect.ValueOf(t))...); err != nil {
		return s.explain("save trial "+t.ID, err)
	}
	if err := insertAll(tx, s.t.resources, l.Resources, func(r *Resource) { r.TrialID = t.ID }); err != nil {
		return s.explain("save resources", err)
	}
	if err := insertAll(tx, s.t.connections, l.Connections, func(c *Connection) { c.TrialID = t.ID }); err != nil {
		return s.explain("save connections", err)
	}
	if err := insertAll(tx, s.t.samples, l.Samples, func(x *Sample) { x.TrialID = t.ID }); err != nil {
		return s.explain("save samples", err)
	}
	if err := insertAll(tx, s.t.losses, l.Losses, func(x *Loss) { x.TrialID = t.ID }); err != nil {
		return s.explain("save losses", err)
	}
	return s.explainErr("save trial "+t.ID, tx.Commit())
}

// insertAll inserts rows into tb, each after fix.
func insertAll[T any](tx *sql.Tx, tb *table, rows []T, fix func(*T)) error {
	if len(rows) == 0 {
		return nil
	}
	stmt, err := tx.Prepare(tb.insert())
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range rows {
		r := rows[i]
		fix(&r)
		if _, err := stmt.Exec(tb.args(reflect.ValueOf(r))...); err != nil {
			return err
		}
	}
	return nil
}

// AddAttempt records a failed attempt.
func (s *Store) AddAttempt(a Attempt) error {
	_, err := s.db.Exec("INSERT OR REPLACE"+s.t.attempts.insert()[len("INSERT"):], s.t.attempts.args(reflect.ValueOf(a))...)
	return s.explainErr("save attempt", err)
}

// SaveTestbed records a testbed, or replaces its record (a resumed run
// builds it again).
func (s *Store) SaveTestbed(tb Testbed) error {
	_, err := s.db.Exec("INSERT OR REPLACE"+s.t.testbeds.insert()[len("INSERT"):], s.t.testbeds.args(reflect.ValueOf(tb))...)
	return s.explainErr("save testbed", err)
}

// SaveNetwork stores a network's configuration and netcheck (JSON).
func (s *Store) SaveNetwork(name string, config, netcheck []byte, at time.Time) error {
	_, err := s.db.Exec(`INSERT OR REPLACE INTO networks (name, config, netcheck, checked_at) VALUES (?, ?, ?, ?)`,
		name, string(config), string(netcheck), at.UTC().Format(timeFormat))
	return s.explainErr("save network", err)
}

// Checked reports whether the network has a stored netcheck.
func (s *Store) Checked(name string) (bool, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM networks WHERE name = ? AND netcheck != ''`, name).Scan(&n)
	return n > 0, s.explainErr("read networks", err)
}

// Netchecks returns each checked network's netcheck (JSON), by name.
func (s *Store) Netchecks() (map[string]string, error) {
	return s.pairs("read networks", `SELECT name, netcheck FROM networks WHERE netcheck != ''`)
}

// EachTrial calls fn for every trial in plan order. The store has one
// connection, which the reading holds: fn must not use the store.
func (s *Store) EachTrial(fn func(Trial) error) error {
	return each(s, s.t.trials, "SELECT "+s.t.trials.selectList("")+" FROM trials ORDER BY seq", nil, func(t Trial) error {
		t.upgrade()
		return fn(t)
	})
}

// TrialKey is what names a trial: its ID, repetition and levels (and the
// parts of its QUIC stack, for runs made before the quic column).
type TrialKey struct {
	ID  string `parquet:"trial_id"`
	Rep int64  `parquet:"rep"`
	Levels
	QUICValues
}

// EachTrialKey calls fn for every trial's key, in plan order, reading
// those columns only: for checks of a whole run that need no more.
func (s *Store) EachTrialKey(fn func(TrialKey) error) error {
	keys := newTable("trials", reflect.TypeFor[TrialKey]())
	keys.absent = s.t.trials.absent
	return each(s, keys, "SELECT "+keys.selectList("")+" FROM trials ORDER BY seq", nil, func(k TrialKey) error {
		t := Trial{Levels: k.Levels, QUICValues: k.QUICValues}
		t.upgrade()
		k.Levels = t.Levels
		return fn(k)
	})
}

// EachResource calls fn for every resource, grouped by trial in plan
// order; fn must not use the store.
func (s *Store) EachResource(fn func(Resource) error) error {
	return each(s, s.t.resources, "SELECT "+s.t.resources.selectList("r.")+" FROM resources r JOIN trials t ON t.trial_id = r.trial_id ORDER BY t.seq, r.rowid", nil, fn)
}

// EachConnection calls fn for every connection, grouped by trial in plan
// order; fn must not use the store.
func (s *Store) EachConnection(fn func(Connection) error) error {
	return each(s, s.t.connections, "SELECT "+s.t.connections.selectList("c.")+" FROM connections c JOIN trials t ON t.trial_id = c.trial_id ORDER BY t.seq, c.conn", nil, fn)
}

// EachSample calls fn for every sample, grouped by trial in plan order;
// fn must not use the store.
func (s *Store) EachSample(fn func(Sample) error) error {
	return each(s, s.t.samples, "SELECT "+s.t.samples.selectList("x.")+" FROM samples x JOIN trials t ON t.trial_id = x.trial_id ORDER BY t.seq, x.at_ms", nil, fn)
}

// SamplesOf returns one trial's samples, in time order: none for a load
// that was not sampled.
func (s *Store) SamplesOf(trialID string) ([]Sample, error) {
	return collect[Sample](s, s.t.samples, "SELECT "+s.t.samples.selectList("")+" FROM samples WHERE trial_id = ? ORDER BY at_ms", trialID)
}

// EachLoss calls fn for every loss, grouped by trial in plan order; fn
// must not use the store.
func (s *Store) EachLoss(fn func(Loss) error) error {
	return each(s, s.t.losses, "SELECT "+s.t.losses.selectList("x.")+" FROM losses x JOIN trials t ON t.trial_id = x.trial_id ORDER BY t.seq, x.from_ms", nil, fn)
}

// LossesOf returns one trial's losses, in time order: none for a load
// that lost nothing, or was made before losses were kept.
func (s *Store) LossesOf(trialID string) ([]Loss, error) {
	return collect[Loss](s, s.t.losses, "SELECT "+s.t.losses.selectList("")+" FROM losses WHERE trial_id = ? ORDER BY from_ms", trialID)
}

// ResourcesOf returns one trial's resources.
func (s *Store) ResourcesOf(trialID string) ([]Resource, error) {
	return collect[Resource](s, s.t.resources, "SELECT "+s.t.resources.selectList("")+" FROM resources WHERE trial_id = ? ORDER BY rowid", trialID)
}

// ConnectionsOf returns one trial's connections.
func (s *Store) ConnectionsOf(trialID string) ([]Connection, error) {
	return collect[Connection](s, s.t.connections, "SELECT "+s.t.connections.selectList("")+" FROM connections WHERE trial_id = ? ORDER BY conn", trialID)
}

// Testbeds returns the run's testbeds in the order they were built.
func (s *Store) Testbeds() ([]Testbed, error) {
	return collect[Testbed](s, s.t.testbeds, "SELECT "+s.t.testbeds.selectList("")+" FROM testbeds ORDER BY started_at")
}

// collect returns the rows a query selects.
func collect[T any](s *Store, tb *table, query string, queryArgs ...any) ([]T, error) {
	var out []T
	err := each(s, tb, query, queryArgs, func(r T) error { out = append(out, r); return nil })
	return out, err
}

// each calls fn for every row a query selects.
func each[T any](s *Store, tb *table, query string, queryArgs []any, fn func(T) error) error {
	if tb.missing {
		return nil
	}
	rows, err := s.db.Query(query, queryArgs...)
	if err != nil {
		return s.explain("read "+tb.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r T
		if err := tb.scan(rows, reflect.ValueOf(&r)); err != nil {
			return s.explain("read "+tb.name, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return s.explainErr("read "+tb.name, rows.Err())
}

// FirstNetcheckFact prefixes, with the network's name after it, the fact
// that keeps a network's first netcheck (JSON) when it failed and the
// network was measured again.
const FirstNetcheckFact = "netcheck failed first: "

// Facts returns the run's facts (the meta table) without the spec's text.
func (s *Store) Facts() (map[string]string, error) {
	return s.pairs("read meta", `SELECT key, value FROM meta WHERE key != 'spec'`)
}

// pairs reads a query's two text columns as a map.
func (s *Store) pairs(op, query string) (map[string]string, error) {
	rows, err := s.db.Query(query)
	if err != nil {
		return nil, s.explain(op, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, s.explain(op, err)
		}
		out[k] = v
	}
	return out, s.explainErr(op, rows.Err())
}

// Recorded is a run as its database holds it: every trial, in plan order,
// with its resources and connections, the testbeds, and each checked
// network's netcheck (JSON) by name.
type Recorded struct {
	Trials    []TrialDetail     `json:"trials"`
	Testbeds  []Testbed         `json:"testbeds"`
	Netchecks map[string]string `json:"-"`
	// StopRule is the run's until rule; nil without one.
	StopRule *StopRule `json:"-"`
}

// TrialDetail is a trial with its resources and connections.
type TrialDetail struct {
	Trial       Trial        `json:"trial"`
	Resources   []Resource   `json:"resources"`
	Connections []Connection `json:"connections"`
}

// ReadAll reads the whole run back, for a comparison's summary: the
// trials joined with their resources and connections.
func (s *Store) ReadAll() (*Recorded, error) {
	rule, err := s.StopRule()
	if err != nil {
		return nil, err
	}
	r := &Recorded{StopRule: rule}
	index := map[string]int{}
	err = s.EachTrial(func(t Trial) error {
		index[t.ID] = len(r.Trials)
		r.Trials = append(r.Trials, TrialDetail{Trial: t})
		return nil
	})
	if err == nil {
		err = s.EachResource(func(x Resource) error {
			if i, ok := index[x.TrialID]; ok {
				r.Trials[i].Resources = append(r.Trials[i].Resources, x)
			}
			return nil
		})
	}
	if err == nil {
		err = s.EachConnection(func(c Connection) error {
			if i, ok := index[c.TrialID]; ok {
				r.Trials[i].Connections = append(r.Trials[i].Connections, c)
			}
			return nil
		})
	}
	if err == nil {
		r.Testbeds, err = s.Testbeds()
	}
	if err == nil {
		r.Netchecks, err = s.Netchecks()
	}
	return r, err
}

// Attempts returns every failed attempt, in the order they started.
func (s *Store) Attempts() ([]Attempt, error) {
	return collect[Attempt](s, s.t.attempts, "SELECT "+s.t.attempts.selectList("")+" FROM attempts ORDER BY started_at, attempt")
}
