package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/trust"
)

// openStore creates the run's database, or opens it for a resume and
// checks that the spec is the one the run started with.
func openStore(cfg RunConfig, p plan.Plan) (*results.Store, error) {
	path := filepath.Join(cfg.Dir, results.FileName)
	if cfg.Resume {
		return openToResume(cfg, path, p)
	}
	meta := map[string]string{
		"spec_sha256": cfg.Spec.SHA256, "spec_name": cfg.Spec.Name, "spec": string(cfg.Spec.Source),
		"plan_trials": fmt.Sprint(len(p.Trials)), "created_at": time.Now().UTC().Format(time.RFC3339),
	}
	if cfg.Shard.N > 0 {
		meta["shard"] = cfg.Shard.String()
	}
	if len(cfg.Cells) > 0 {
		meta["cells"] = cfg.cellsText()
	}
	if r := stopRuleOf(cfg.Spec); r != nil {
		k, v := results.StopRuleFact(*r)
		meta[k] = v
	}
	for k, v := range cfg.Facts {
		meta[k] = v
	}
	store, err := results.Create(path, meta)
	if err != nil {
		return nil, err
	}
	if err := safefs.WriteFile(cfg.Dir, "spec.yaml", cfg.Spec.Source, 0o644); err != nil {
		store.Close()
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return store, nil
}

// lockRunDir takes the run directory's lock, for a new run after checking
// that the directory is new or empty (a run never writes among files it
// did not make).
func lockRunDir(cfg RunConfig) (func(), error) {
	if cfg.Resume {
		if err := CheckRunDir(cfg.Dir); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(filepath.Join(cfg.Dir, results.FileName)); err != nil {
			return nil, inputErrorf("no results database in %s: is it the run directory of a quicbench run or compare?", cfg.Dir)
		}
	} else if err := checkNewRunDir(cfg.Dir); err != nil {
		return nil, err
	}
	unlock, err := safefs.Lock(cfg.Dir)
	var held *safefs.HeldError
	if errors.As(err, &held) {
		return nil, &InputError{Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if err := CheckRunDir(cfg.Dir); err != nil { // another user may have made it first
		unlock()
		return nil, err
	}
	return unlock, nil
}

// CheckRunDir refuses, when quicbench runs as root, a run directory that
// another user owns or could change: one they own, or one below a
// directory they can write (unless it has the sticky bit, as /tmp), where
// they could swap what root writes for a link to something of theirs. Run
// checks it before it writes anything; commands call it to say so before
// they start.
func CheckRunDir(dir string) error {
	if err := trust.CheckUserPaths(trust.UserPath{Kind: trust.Output, Value: dir, Name: "--out"}); err != nil {
		return &InputError{Err: err}
	}
	return nil
}

// checkNewRunDir checks that dir is new or empty (a run never writes
// among files it did not make), and writes nothing.
func checkNewRunDir(dir string) error {
	if err := CheckRunDir(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return inputErrorf("run directory: %v", err)
	}
	for _, e := range entries {
		if e.Name() == results.FileName {
			return inputErrorf("%s holds a run already: continue it with --resume, or choose another --out", dir)
		}
	}
	if len(entries) > 0 {
		return inputErrorf("%s exists and is not empty: a new run starts in a new or empty directory; choose another --out", dir)
	}
	return nil
}

// openToResume opens the database at path and checks that the run is the
// one cfg describes: its spec, shard and chosen cells (or, where cfg may
// grow the run, takes cfg's: growRun); p is cfg's plan.
func openToResume(cfg RunConfig, path string, p plan.Plan) (*results.Store, error) {
	store, err := results.Open(path)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if err := checkResumedRun(cfg, store, p); err != nil {
		store.Close()
		return nil, err
	}
	if err := noteChangedFacts(cfg.Facts, store, time.Now()); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// noteChangedFacts keeps, for a run resumed by another build or on
// another machine, each fact of facts that differs from the one the run
// holds (the one it started with, or the latest such note) as the meta
// "resumed <UTC time>: <fact>", so that its report says from when its
// loads were made with what. Facts that did not change add nothing.
func noteChangedFacts(facts map[string]string, store *results.Store, now time.Time) error {
	held, err := store.Facts()
	if err != nil {
		return err
	}
	latest := map[string]string{}
	for k := range facts {
		latest[k] = held[k]
	}
	var notes []string
	for k := range held {
		if strings.HasPrefix(k, resumedPrefix) {
			notes = append(notes, k)
		}
	}
	slices.Sort(notes) // RFC 3339 UTC times sort as text
	for _, k := range notes {
		_, fact, _ := strings.Cut(strings.TrimPrefix(k, resumedPrefix), ": ")
		if _, ok := latest[fact]; ok {
			latest[fact] = held[k]
		}
	}
	stamp := now.UTC().Format(time.RFC3339)
	for k, v := range facts {
		if latest[k] != v {
			if err := store.SetMeta(fmt.Sprintf("%s%s: %s", resumedPrefix, stamp, k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// resumedPrefix begins the meta keys noteChangedFacts writes.
const resumedPrefix = "resumed "

// checkResumedRun refuses to resume the run in store as other than it
// started: another spec, shard or choice of cells, unless cfg.Grow lets
// it go on to cfg's cells and repetitions.
func checkResumedRun(cfg RunConfig, store *results.Store, p plan.Plan) error {
	was, err := store.Meta("spec_sha256")
	if err != nil {
		return err
	}
	if shard, err := store.Meta("shard"); err != nil || shard != cfg.Shard.String() {
		if err != nil {
			return err
		}
		return inputErrorf("this run is shard %q of its plan, not %q: resume it with the --shard it started with", shard, cfg.Shard.String())
	}
	cells, err := store.Meta("cells")
	if err != nil || (was == cfg.Spec.SHA256 && cells == cfg.cellsText()) {
		return err
	}
	if cfg.Grow && len(cfg.Cells) > 0 {
		return growRun(cfg, store, p, was, cells)
	}
	if was != cfg.Spec.SHA256 {
		return inputErrorf("the spec changed since this run started (its SHA-256 was %.12s…, now %.12s…; the original is %s): restore it, or start a new run with another --out", was, cfg.Spec.SHA256, filepath.Join(cfg.Dir, "spec.yaml"))
	}
	return inputErrorf("this run loads %d chosen cells of its plan, not these %d: resume it as it started", len(strings.Fields(cells)), len(cfg.Cells))
}

// growRun lets the run in store go on to cfg's cells and repetitions
// where its spec is otherwise the one it started with: a sequential
// reproduction's pilot or round planned by an earlier version of its
// design. What it loaded stays; its spec, cells and plan size become
// cfg's (p's), and the earlier spec and cells (wasSHA, wasCells, as
// store holds them) are kept in the meta "grown_from", one line each time.
func growRun(cfg RunConfig, store *results.Store, p plan.Plan, wasSHA, wasCells string) error {
	was, err := store.Meta("spec")
	if err != nil {
		return err
	}
	earlier, err := spec.Parse([]byte(was))
	if err != nil {
		return inputErrorf("this run's stored spec does not read: %v; start a new run with another --out", err)
	}
	if same, err := sameButRepetitions(earlier, cfg.Spec); err != nil || !same {
		if err != nil {
			return err
		}
		return inputErrorf("the spec changed since this run started in more than its repetitions (the original is %s): restore it, or start a new run with another --out", filepath.Join(cfg.Dir, "spec.yaml"))
	}
	history, err := store.Meta("grown_from")
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s: spec %.12s, repetitions %d, cells %s", time.Now().UTC().Format(time.RFC3339), wasSHA, earlier.Repetitions, wasCells)
	updates := [][2]string{{"grown_from", strings.TrimPrefix(history+"\n"+line, "\n")}, {"cells", cfg.cellsText()},
		{"plan_trials", fmt.Sprint(len(p.Trials))}, {"spec", string(cfg.Spec.Source)}, {"spec_sha256", cfg.Spec.SHA256}}
	for _, kv := range updates {
		if err := store.SetMeta(kv[0], kv[1]); err != nil {
			return err
		}
	}
	cfg.Log.Info("the run goes on to the cells its design now gives", "dir", cfg.Dir, "cells", len(cfg.Cells), "trials", len(p.Trials), "earlier", wasCells)
	if err := safefs.WriteFile(cfg.Dir, "spec.yaml", cfg.Spec.Source, 0o644); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}

// sameButRepetitions says whether specs a and b differ in nothing but
// their repetitions, as written.
func sameButRepetitions(a, b *spec.Spec) (bool, error) {
	withA := *b
	withA.Repetitions = a.Repetitions
	textA, err := spec.Format(a)
	if err != nil {
		return false, err
	}
	textB, err := spec.Format(&withA)
	if err != nil {
		return false, err
	}
	return bytes.Equal(textA, textB), nil
}
