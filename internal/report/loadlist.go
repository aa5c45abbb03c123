package report

import (
	"path/filepath"
	"strings"
)

// fileLink is the link from the report directory out to file, a path in
// the run directory runDir; "" if there is none.
func fileLink(out, runDir, file string) string {
	if runDir == "" || filepath.IsAbs(file) || strings.Contains(file, "..") {
		return ""
	}
	rel, err := filepath.Rel(out, filepath.Join(runDir, file))
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}
