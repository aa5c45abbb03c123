package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/stats"
)

// The overheads a machine's runs measured, for the plan's estimate: at
// the end of a run, the median time a trial of each client (and browser
// mode) took beyond its loads (its overhead_ms), over the run's own
// trials, replaces that client's entry in the user's cache
// (overheadsFile under os.UserCacheDir). The plan then charges what this
// machine costs, not another's constants: a fresh Chromium took 1.16 s a
// load on a VM where the constant says 0.55 s.

// overheadsFile is the cache's file, below the user's cache directory.
const overheadsFile = "quicbench/overheads.json"

// Limits of what the cache keeps and believes.
const (
	// minOverheadLoads is the fewest trials a run must have of a client
	// for its median to replace the cached one.
	minOverheadLoads = 5
	// overheadsMaxAge is how old an entry may be and still be used:
	// browsers update, machines change.
	overheadsMaxAge = 30 * 24 * time.Hour
	// maxOverhead is the largest overhead believed: more is a damaged
	// file.
	maxOverhead = 10 * time.Minute
	// maxOverheadsFile is the most bytes read of the file.
	maxOverheadsFile = 64 << 10
)

// overheadEntry is one client's measured overhead in the cache.
type overheadEntry struct {
	Client    factor.Client  `json:"client"`
	Browser   factor.Browser `json:"browser,omitempty"`
	ClientCPU string         `json:"client_cpu,omitempty"`
	PerLoadMs float64        `json:"per_load_ms"`
	Loads     int            `json:"loads"`
	At        time.Time      `json:"at"`
}

// key is the entry's kind of load.
func (e overheadEntry) key() plan.OverheadKey {
	return plan.OverheadKey{Client: e.Client, Browser: e.Browser, ClientCPU: factor.ClientCPU(e.ClientCPU)}
}

// overheadCollector gathers a run's trials' overheads by kind.
type overheadCollector map[plan.OverheadKey][]float64

// add counts rec's overhead, for a trial whose overhead is the plan's: a
// first visit without frames on a page not live (a repeat visit's pause,
// the visual capture and a live page's politeness are charged apart).
func (c overheadCollector) add(s *spec.Spec, t plan.Trial, overheadMs *float64) {
	l := t.Cell.Levels
	if overheadMs == nil || l.Visit().Loads() != 1 || l.Visual().On() || t.Cell.Page.Kind == factor.PageLive {
		return
	}
	k := plan.KeyOf(s, t.Cell)
	c[k] = append(c[k], *overheadMs)
}

// MachineOverheads are the overheads this user's runs measured on this
// machine, at most overheadsMaxAge old at now; none where there is no
// cache or it cannot be read (the plan then uses its constants).
func MachineOverheads(now time.Time) plan.Overheads {
	base, err := safefs.UserCacheBase()
	if err != nil {
		return plan.Overheads{}
	}
	data, err := safefs.ReadIn(base, overheadsFile, maxOverheadsFile)
	if err != nil {
		return plan.Overheads{}
	}
	return overheadsOf(parseOverheads(data), now)
}

// parseOverheads reads the cache's entries, keeping the valid ones: a
// known client, a browser's with its mode and CPU level, a positive
// overhead under maxOverhead, some loads, a time; nil for a file that is
// not such a list.
func parseOverheads(data []byte) []overheadEntry {
	var entries []overheadEntry
	if json.Unmarshal(data, &entries) != nil {
		return nil
	}
	return slices.DeleteFunc(entries, func(e overheadEntry) bool {
		client, err := factor.Clients().Parse(string(e.Client))
		cpu, cpuErr := factor.ParseClientCPU(e.ClientCPU)
		browserOK := e.Browser == "" && e.ClientCPU == ""
		if err == nil && client.Capabilities().Renders {
			browserOK = (e.Browser == factor.BrowserFresh || e.Browser == factor.BrowserWarm) && cpuErr == nil && string(cpu) == e.ClientCPU
		}
		perLoad := time.Duration(e.PerLoadMs * float64(time.Millisecond))
		return err != nil || !browserOK || !(e.PerLoadMs > 0) || perLoad > maxOverhead || e.Loads < 1 || e.At.IsZero()
	})
}

// overheadsOf is the plan's overheads from entries, leaving out those
// older than overheadsMaxAge at now (or from the future).
func overheadsOf(entries []overheadEntry, now time.Time) plan.Overheads {
	o := plan.Overheads{Measured: map[plan.OverheadKey]plan.Measured{}}
	for _, e := range entries {
		if age := now.Sub(e.At); age < 0 || age > overheadsMaxAge {
			continue
		}
		o.Measured[e.key()] = plan.Measured{
			PerLoad: time.Duration(e.PerLoadMs * float64(time.Millisecond)), Loads: e.Loads, At: e.At}
	}
	return o
}

// save replaces the cache's entries of the kinds this run measured on
// minOverheadLoads trials or more with their medians, at now; a cache it
// cannot write is logged, not an error of the run.
func (c overheadCollector) save(now time.Time, log *slog.Logger) {
	var fresh []overheadEntry
	for k, vs := range c {
		if len(vs) >= minOverheadLoads {
			fresh = append(fresh, overheadEntry{Client: k.Client, Browser: k.Browser, ClientCPU: string(k.ClientCPU), PerLoadMs: stats.Median(vs), Loads: len(vs), At: now.UTC()})
		}
	}
	if len(fresh) == 0 {
		return
	}
	if err := writeOverheads(fresh); err != nil {
		log.Warn("the plan's cache of this machine's overheads was not updated", "err", err)
	}
}

// writeOverheads merges fresh into the cache file, atomically.
func writeOverheads(fresh []overheadEntry) error {
	base, err := safefs.UserCacheBase()
	if err != nil {
		return err
	}
	data, err := safefs.ReadIn(base, overheadsFile, maxOverheadsFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	entries := parseOverheads(data)
	for _, f := range fresh {
		entries = slices.DeleteFunc(entries, func(e overheadEntry) bool { return e.key() == f.key() })
	}
	entries = append(entries, fresh...)
	slices.SortFunc(entries, func(a, b overheadEntry) int { return cmp.Compare(a.key().String(), b.key().String()) })
	if err := safefs.MkdirAll(base, filepath.Dir(overheadsFile), 0o700); err != nil {
		return err
	}
	return safefs.WriteAtomic(base, overheadsFile, 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	})
}

// pilotLoads is how many loads of each kind the overheads' pilot makes:
// one over minOverheadLoads, so that one failed load still leaves enough.
const pilotLoads = minOverheadLoads + 1

// MeasureOverheads runs a pilot of s's kinds of load (its clients, its
// browser mode and its client CPU levels) on a page of one 1 KB object
// over a 10 ms link, without a netcheck, pilotLoads each, in a work
// directory it removes: the run stores their overheads in the machine's
// cache like any run (MachineOverheads). About a minute where Firefox is
// among the clients, its fresh starts most of it.
func MeasureOverheads(ctx context.Context, s *spec.Spec, binaries map[factor.Client]string, log *slog.Logger) error {
	text := fmt.Sprintf("name: overheads-pilot\nrepetitions: %d\nnetcheck: false\n", pilotLoads)
	if b := s.Browser(); b != "" {
		text += fmt.Sprintf("browser: %s\n", b)
	}
	text += "factors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2]\n"
	var clients []string
	for _, c := range s.Clients() {
		clients = append(clients, string(c))
	}
	text += fmt.Sprintf("  clients: [%s]\n", strings.Join(clients, ", "))
	if levels := s.LevelsOf(factor.IDClientCPU); len(levels) > 0 {
		text += fmt.Sprintf("  client_cpu: [%s]\n", strings.Join(levels, ", "))
	}
	pilot, err := spec.Parse([]byte(text))
	if err != nil {
		return fmt.Errorf("overheads pilot: %w", err)
	}
	work, err := safefs.NewWorkDir()
	if err != nil {
		return fmt.Errorf("overheads pilot: %w", err)
	}
	defer os.RemoveAll(work)
	res, err := Run(ctx, RunConfig{Spec: pilot, Dir: filepath.Join(work, "run"), ClientBinaries: binaries, Log: log, NoLanes: true})
	if err == nil && res.Failed > 0 {
		err = fmt.Errorf("%d of its %d loads failed", res.Failed, res.Done)
	}
	if err != nil {
		return fmt.Errorf("overheads pilot: %w", err)
	}
	return nil
}
