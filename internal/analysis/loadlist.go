package analysis

import (
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// MaxListedLoads is the most loads the report lists one by one (about
// 250 bytes of HTML each); a larger run says how to export them.
const MaxListedLoads = 3000

// Load is one trial as the report's list of loads shows it.
type Load struct {
	ID       string
	Protocol factor.Protocol
	Rep      int64
	// Status is the trial's outcome (results.StatusOK: verified) and
	// Failure why it failed.
	Status, Failure string
	// Value is the report's metric of the load, ms (nil: not measured).
	Value *float64
	// Files are the load's artifacts (HAR, qlog, pcap, net log, frames),
	// as paths in the run directory.
	Files []string
}

// SettingLoads are one setting's loads, in the order they ran.
type SettingLoads struct {
	Setting Setting
	Loads   []Load
}

// Loads are a run's loads listed by setting (in the order of the
// analysis's settings) for the report, and how many there are; none are
// listed when there are more than MaxListedLoads.
func Loads(trials []results.Trial, metric string) (listed []SettingLoads, count int) {
	if len(trials) > MaxListedLoads {
		return nil, len(trials)
	}
	value := MetricOf(metric)
	index := map[Setting]int{}
	for _, t := range trials {
		s := SettingOf(t)
		i, ok := index[s]
		if !ok {
			i = len(listed)
			index[s] = i
			listed = append(listed, SettingLoads{Setting: s})
		}
		var files []string
		for _, f := range strings.Split(t.Artifacts, ",") {
			if f != "" {
				files = append(files, f)
			}
		}
		listed[i].Loads = append(listed[i].Loads, Load{ID: t.ID, Protocol: t.Protocol, Rep: t.Rep, Status: t.Status,
			Failure: t.Error, Value: value(t), Files: files})
	}
	slices.SortStableFunc(listed, func(a, b SettingLoads) int { return CompareSettings(a.Setting, b.Setting) })
	return listed, len(trials)
}
