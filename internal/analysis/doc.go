// Package analysis analyses a run's results the way the papers do, the
// same way every time, apart from any rendering:
// per setting (everything of a cell but the protocol) the samples of each
// protocol and their comparison (medians with bootstrap intervals, ratio,
// paired ratio, Mann–Whitney and Welch, the verdict), every other pair of
// protocols and of levels, the stacks' ANOVAs, the share of pages where
// one protocol won, the stopping rule replayed, the lower bounds, the CPU
// and the work of each load, the loads listed by setting, the run's
// calibrations, compare's run summary and a pilot's power plan. Package
// report renders it (text, HTML, figures); compare prints it; plan reads
// the power. Nothing here reads a file but the results database.
package analysis
