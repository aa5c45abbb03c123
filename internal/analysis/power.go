package analysis

import (
	"fmt"
	"math"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/stats"
)

// PowerRow is one compared setting of a pilot run: its loads, the spread
// of its metric and the repetitions a study needs to find the ratio asked.
type PowerRow struct {
	Setting string
	// Baseline and Compare count the pilot's verified loads.
	Baseline, Compare int
	// SDLog is the pooled standard deviation of the log of the metric.
	SDLog float64
	// Needed is the loads per protocol (repetitions) to find the ratio;
	// 0 where the pilot had too few loads to tell.
	Needed int
}

// PowerPlan reads a pilot run's trials and says, per compared setting, how
// many repetitions find a ratio of medians of ratio (such as 1.05) at
// stats.Alpha with probability power (see stats.RepetitionsFor).
func PowerPlan(trials []results.Trial, o Options, ratio, power float64) ([]PowerRow, error) {
	if !(ratio > 1) || !(power > 0 && power < 1) {
		return nil, fmt.Errorf("power planning needs a ratio above 1 (such as 1.05) and a power between 0 and 1")
	}
	a, err := Analyze(trials, o)
	if err != nil {
		return nil, err
	}
	v := VariedIn(a.Comparisons)
	var rows []PowerRow
	for _, c := range a.Comparisons {
		row := PowerRow{Setting: v.Label(c.Setting) + " " + c.Setting.Page(), Baseline: len(c.Baseline.Values), Compare: len(c.Compare.Values),
			SDLog: stats.PooledLogSD(c.Baseline.Values, c.Compare.Values)}
		if !math.IsNaN(row.SDLog) {
			row.Needed = stats.RepetitionsFor(row.SDLog, ratio, stats.Alpha, power)
		}
		rows = append(rows, row)
	}
	return rows, nil
}
