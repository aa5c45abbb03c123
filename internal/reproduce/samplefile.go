package reproduce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/quicbench/quicbench/internal/papers"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/safefs"
)

// SampleFile, in a sequential reproduction's directory, holds the
// settings each share claim reads (its random sample), so that every
// evaluation of the reproduction's runs, its report's too, reads what the
// rounds decided on.
const SampleFile = "sequential.json"

// maxSampleFile bounds the file: a setting's key is a few hundred bytes,
// and a paper's shares hold at most thousands of settings.
const maxSampleFile = 16 << 20

// sampleFile is SampleFile's content.
type sampleFile struct {
	// Samples are each share claim's sampled settings' keys
	// (papers.SettingKey), by claim ID.
	Samples map[string][]string `json:"samples"`
}

// claimID is the form of a claim's ID.
var claimID = regexp.MustCompile(`^C[0-9]{1,3}$`)

// WriteSample records a sequential reproduction's samples in dir,
// replacing what was there as a whole.
func WriteSample(dir string, s papers.Sample) error {
	f := sampleFile{Samples: map[string][]string{}}
	for id, keys := range s {
		f.Samples[id] = slices.Sorted(maps.Keys(keys))
	}
	err := safefs.WriteAtomic(dir, SampleFile, 0o644, func(w io.Writer) error { return json.NewEncoder(w).Encode(f) })
	if err != nil {
		return fmt.Errorf("recording the share claims' samples: %w", err)
	}
	return nil
}

// CheckDesign refuses to go on with a reproduction in r.Dir of the
// other design: a sequential one (its SampleFile there) without
// sequential, or runs of the fixed design with it.
func (r Reproduction) CheckDesign(sequential bool) error {
	_, err := os.Lstat(filepath.Join(r.Dir, SampleFile))
	isSequential := err == nil
	switch {
	case isSequential && !sequential:
		return fmt.Errorf("--out %s holds a sequential reproduction (its %s): continue it with --sequential, or give another --out", r.Dir, SampleFile)
	case !isSequential && sequential:
		for _, s := range r.Specs {
			if _, err := os.Lstat(filepath.Join(r.RunDir(s), results.FileName)); err == nil {
				return fmt.Errorf("--out %s holds a run of the fixed design (%s): give another --out to reproduce it sequentially, or replay the sequential design on it with --replay-sequential", r.Dir, s.Name)
			}
		}
	}
	return nil
}

// ReadSample reads the samples of the sequential reproduction in dir;
// nil for a reproduction of fixed repetitions (no file).
func ReadSample(dir string) (papers.Sample, error) {
	data, err := safefs.ReadIn(dir, SampleFile, maxSampleFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the share claims' samples: %w", err)
	}
	s, err := parseSample(data)
	if err != nil {
		return nil, fmt.Errorf("the share claims' samples in %s: %w: move the file away to read every setting", dir, err)
	}
	return s, nil
}

// parseSample reads SampleFile's content, refusing what no sequential
// reproduction writes.
func parseSample(data []byte) (papers.Sample, error) {
	var f sampleFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, errors.New("not the JSON a sequential reproduction writes")
	}
	if f.Samples == nil {
		return nil, errors.New("it names no samples")
	}
	out := papers.Sample{}
	for id, keys := range f.Samples {
		if !claimID.MatchString(id) {
			return nil, errors.New("a sample names no claim (claims are C1, C2, …)")
		}
		set := map[string]bool{}
		for _, k := range keys {
			if k == "" || len(k) > 4096 {
				return nil, fmt.Errorf("%s's sample has a setting of %d bytes: a setting is named in 1 to 4096", id, len(k))
			}
			set[k] = true
		}
		out[id] = set
	}
	return out, nil
}
