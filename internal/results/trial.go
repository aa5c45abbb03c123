package results

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Trial statuses.
const (
	StatusOK     = "ok"     // verified load
	StatusFailed = "failed" // every attempt failed; Error says why the last one did
)

// Trial is one trial's row: its factor levels, outcome and metrics. Times
// are milliseconds from navigation start; a failed trial's metrics are
// null (NaN-free: Valid false).
type Trial struct {
	ID       string `json:"trial_id"`
	Seq      int    `json:"seq"`
	Rep      int    `json:"rep"`
	Network  string `json:"network"`
	Page     string `json:"page"`
	Origins  int    `json:"origins"`
	Stack    string `json:"stack"`
	Server   string `json:"server"`
	Protocol string `json:"protocol"`
	Visit    string `json:"visit"`
	Cache    bool   `json:"cache"`
	Client   string `json:"client"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
	// PLT is loadEventEnd (the papers' PLT), OnLoad loadEventStart (onLoad
	// in HAR), DCL DOMContentLoaded, TTFB the document's first byte.
	PLT             Float     `json:"plt_ms"`
	OnLoad          Float     `json:"onload_ms"`
	DCL             Float     `json:"dcl_ms"`
	TTFB            Float     `json:"ttfb_ms"`
	FirstVisitPLT   Float     `json:"first_visit_plt_ms"`
	DocumentProto   string    `json:"document_protocol"`
	Wall            Float     `json:"wall_ms"`
	Overhead        Float     `json:"overhead_ms"` // wall − page time: what the harness added
	ServerRequests  int       `json:"server_requests"`
	Connections     int       `json:"connections"`
	Handshakes      string    `json:"handshakes"` // such as "0rtt:1" or "full:4,resumed:2"
	TCPCongestion   string    `json:"tcp_congestion"`
	ConnectionsJSON string    `json:"connection_records"` // the servers' records, JSON
	StartedAt       time.Time `json:"started_at"`
	FinishedAt      time.Time `json:"finished_at"`
	Artifacts       string    `json:"artifacts"` // pcap, qlog, HAR paths in the run directory, comma-separated
}

// Float is a nullable float64: Valid false is SQL NULL, JSON null and an
// empty CSV field.
type Float struct {
	V     float64
	Valid bool
}

// F returns a valid Float.
func F(v float64) Float { return Float{V: v, Valid: true} }

// MarshalJSON writes the value or null.
func (f Float) MarshalJSON() ([]byte, error) {
	if !f.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(f.V)
}

func (f Float) sql() sql.NullFloat64 { return sql.NullFloat64{Float64: f.V, Valid: f.Valid} }

// Resource is one Resource Timing entry of a trial's load.
type Resource struct {
	TrialID       string  `json:"trial_id"`
	URL           string  `json:"url"`
	Protocol      string  `json:"protocol"`
	StartMs       float64 `json:"start_ms"`
	ResponseEndMs float64 `json:"response_end_ms"`
	TransferBytes int64   `json:"transfer_bytes"`
	Status        int     `json:"status"`
}

// Attempt is a failed attempt of a trial.
type Attempt struct {
	TrialID   string
	Attempt   int
	Error     string
	StartedAt time.Time
}

const timeFormat = time.RFC3339Nano

// AddTrial commits a trial and its resources in one transaction.
func (s *Store) AddTrial(t Trial, resources []Resource) error {
	tx, err := s.db.Begin()
	if err != nil {
		return s.explain("save trial", err)
	}
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT INTO trials (id, seq, rep, network, page, origins, stack, server, protocol, visit, cache, client,
		status, attempts, error, plt_ms, onload_ms, dcl_ms, ttfb_ms, first_visit_plt_ms, document_protocol, wall_ms, overhead_ms,
		server_requests, connections, handshakes, tcp_congestion, connection_records, started_at, finished_at, artifacts)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Seq, t.Rep, t.Network, t.Page, t.Origins, t.Stack, t.Server, t.Protocol, t.Visit, t.Cache, t.Client,
		t.Status, t.Attempts, t.Error, t.PLT.sql(), t.OnLoad.sql(), t.DCL.sql(), t.TTFB.sql(), t.FirstVisitPLT.sql(), t.DocumentProto,
		t.Wall.sql(), t.Overhead.sql(), t.ServerRequests, t.Connections, t.Handshakes, t.TCPCongestion, t.ConnectionsJSON,
		t.StartedAt.UTC().Format(timeFormat), t.FinishedAt.UTC().Format(timeFormat), t.Artifacts)
	if err != nil {
		return s.explain("save trial "+t.ID, err)
	}
	if len(resources) > 0 {
		stmt, err := tx.Prepare(`INSERT INTO resources (trial_id, url, protocol, start_ms, response_end_ms, transfer_bytes, status) VALUES (?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.explain("save resources", err)
		}
		defer stmt.Close()
		for _, r := range resources {
			if _, err := stmt.Exec(t.ID, r.URL, r.Protocol, r.StartMs, r.ResponseEndMs, r.TransferBytes, r.Status); err != nil {
				return s.explain("save resources", err)
			}
		}
	}
	return s.explainErr("save trial "+t.ID, tx.Commit())
}

// AddAttempt records a failed attempt.
func (s *Store) AddAttempt(a Attempt) error {
	_, err := s.db.Exec(`INSERT OR REPLACE INTO attempts (trial_id, attempt, error, started_at) VALUES (?, ?, ?, ?)`,
		a.TrialID, a.Attempt, a.Error, a.StartedAt.UTC().Format(timeFormat))
	return s.explainErr("save attempt", err)
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

// EachTrial calls fn for every trial in plan order.
func (s *Store) EachTrial(fn func(Trial) error) error {
	rows, err := s.db.Query(`SELECT id, seq, rep, network, page, origins, stack, server, protocol, visit, cache, client,
		status, attempts, error, plt_ms, onload_ms, dcl_ms, ttfb_ms, first_visit_plt_ms, document_protocol, wall_ms, overhead_ms,
		server_requests, connections, handshakes, tcp_congestion, connection_records, started_at, finished_at, artifacts
		FROM trials ORDER BY seq`)
	if err != nil {
		return s.explain("read trials", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t Trial
		var plt, onload, dcl, ttfb, first, wall, overhead sql.NullFloat64
		var started, finished string
		if err := rows.Scan(&t.ID, &t.Seq, &t.Rep, &t.Network, &t.Page, &t.Origins, &t.Stack, &t.Server, &t.Protocol, &t.Visit, &t.Cache, &t.Client,
			&t.Status, &t.Attempts, &t.Error, &plt, &onload, &dcl, &ttfb, &first, &t.DocumentProto, &wall, &overhead,
			&t.ServerRequests, &t.Connections, &t.Handshakes, &t.TCPCongestion, &t.ConnectionsJSON, &started, &finished, &t.Artifacts); err != nil {
			return s.explain("read trials", err)
		}
		for _, p := range []struct {
			dst *Float
			src sql.NullFloat64
		}{{&t.PLT, plt}, {&t.OnLoad, onload}, {&t.DCL, dcl}, {&t.TTFB, ttfb}, {&t.FirstVisitPLT, first}, {&t.Wall, wall}, {&t.Overhead, overhead}} {
			*p.dst = Float{V: p.src.Float64, Valid: p.src.Valid}
		}
		t.StartedAt, _ = time.Parse(timeFormat, started)
		t.FinishedAt, _ = time.Parse(timeFormat, finished)
		if err := fn(t); err != nil {
			return err
		}
	}
	return s.explainErr("read trials", rows.Err())
}

// EachResource calls fn for every resource, grouped by trial in plan order.
func (s *Store) EachResource(fn func(Resource) error) error {
	rows, err := s.db.Query(`SELECT r.trial_id, r.url, r.protocol, r.start_ms, r.response_end_ms, r.transfer_bytes, r.status
		FROM resources r JOIN trials t ON t.id = r.trial_id ORDER BY t.seq, r.rowid`)
	if err != nil {
		return s.explain("read resources", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Resource
		if err := rows.Scan(&r.TrialID, &r.URL, &r.Protocol, &r.StartMs, &r.ResponseEndMs, &r.TransferBytes, &r.Status); err != nil {
			return s.explain("read resources", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return s.explainErr("read resources", rows.Err())
}

// ResourcesOf returns one trial's resources.
func (s *Store) ResourcesOf(trialID string) ([]Resource, error) {
	rows, err := s.db.Query(`SELECT trial_id, url, protocol, start_ms, response_end_ms, transfer_bytes, status FROM resources WHERE trial_id = ? ORDER BY rowid`, trialID)
	if err != nil {
		return nil, s.explain("read resources", err)
	}
	defer rows.Close()
	var out []Resource
	for rows.Next() {
		var r Resource
		if err := rows.Scan(&r.TrialID, &r.URL, &r.Protocol, &r.StartMs, &r.ResponseEndMs, &r.TransferBytes, &r.Status); err != nil {
			return nil, s.explain("read resources", err)
		}
		out = append(out, r)
	}
	return out, s.explainErr("read resources", rows.Err())
}

// Facts returns the run's facts (the meta table) without the spec's text.
func (s *Store) Facts() (map[string]string, error) {
	rows, err := s.db.Query(`SELECT key, value FROM meta WHERE key != 'spec'`)
	if err != nil {
		return nil, s.explain("read meta", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, s.explain("read meta", err)
		}
		out[k] = v
	}
	return out, s.explainErr("read meta", rows.Err())
}
