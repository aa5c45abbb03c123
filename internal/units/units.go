// Package units parses the quantities users type: byte sizes ("10KB"), bit
// rates ("10mbit"), and percentages ("1%"). Decimal prefixes are powers of
// 1000 (KB, mbit); binary ones are powers of 1024 (KiB). Every error says
// what was wrong and what is allowed.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var sizeUnits = []struct {
	suffix string
	factor float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
	{"k", 1e3}, {"m", 1e6}, {"g", 1e9},
	{"b", 1},
}

// ParseBytes parses a size such as "1500", "100B", "10KB" (10,000 bytes) or
// "1MiB" (1,048,576 bytes) and returns bytes. It rejects negative and
// fractional-byte results.
func ParseBytes(s string) (int64, error) {
	num, factor, err := split(s, "size", sizeUnits, "B, KB, MB, GB, KiB, MiB, GiB", 1)
	if err != nil {
		return 0, err
	}
	v := num * factor
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	if v > 1<<50 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

var rateUnits = []struct {
	suffix string
	factor float64
}{
	{"kbit/s", 1e3}, {"mbit/s", 1e6}, {"gbit/s", 1e9}, {"bit/s", 1},
	{"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"bit", 1},
}

// ParseRate parses a bit rate such as "10mbit", "170kbit", "1gbit" or
// "7.78Mbit/s" and returns bit/s. A bare number has no unit and is refused
// (is "10" bits, kilobits or megabits?), as is a rate below 1 bit/s, which
// would round to 0 (no limit). Units in bytes per
// second ("mbps", "MB/s") are rejected: tc reads "mbps" as megabytes, people
// as megabits, and that ambiguity has misconfigured published studies.
func ParseRate(s string) (int64, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	if strings.HasSuffix(lower, "bps") || strings.HasSuffix(lower, "b/s") && !strings.HasSuffix(lower, "bit/s") {
		return 0, fmt.Errorf("rate %q is ambiguous: write bits per second as kbit, mbit or gbit (for example 10mbit)", s)
	}
	num, factor, err := split(s, "rate", rateUnits, "bit, kbit, mbit, gbit (for example 10mbit)", 0)
	if err != nil {
		return 0, err
	}
	if factor == 0 {
		return 0, fmt.Errorf("rate %q has no unit: write it as kbit, mbit or gbit (for example %smbit)", s, strings.TrimSpace(s))
	}
	v := math.Round(num * factor)
	if v < 1 {
		return 0, fmt.Errorf("rate %q is below 1 bit/s", s)
	}
	if v > 1e12 {
		return 0, fmt.Errorf("rate %q is above 1000gbit", s)
	}
	return int64(v), nil
}

// ParsePercent parses "1", "1%" or "0.5%" and returns the fraction (0.01,
// 0.005). It must be within 0 to 100 percent.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percentage: give a number from 0 to 100, such as 1 or 0.5%%", s)
	}
	if v < 0 || v > 100 {
		return 0, fmt.Errorf("%q is outside 0 to 100 percent", s)
	}
	return v / 100, nil
}

// split separates a number from a unit suffix (case-insensitive).
func split(s, what string, table []struct {
	suffix string
	factor float64
}, allowed string, bare float64) (num, factor float64, err error) {
	t := strings.ToLower(strings.TrimSpace(s))
	factor = bare
	for _, u := range table {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	num, perr := strconv.ParseFloat(t, 64)
	if perr != nil || math.IsNaN(num) || math.IsInf(num, 0) || t == "" {
		return 0, 0, fmt.Errorf("%s %q is not a number with a unit: use %s", what, s, allowed)
	}
	if num < 0 {
		return 0, 0, fmt.Errorf("%s %q is negative", what, s)
	}
	return num, factor, nil
}
