package testenv

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ourPrefix starts the import path of every package of quicbench's
// internal tree.
const ourPrefix = "github.com/quicbench/quicbench/internal/"

// DependsOnlyOn fails t if the package pkg (a path go list takes, such as
// "." or "../plan") depends, directly or not, on a package of
// quicbench's internal tree that allowed does not name (names below
// internal/, such as "factor"), or on an outside package that banned
// names. It fails as well if go list names no dependency of ours (the
// guard would read nothing).
func DependsOnlyOn(t testing.TB, pkg string, allowed, banned []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	ours := 0
	for _, dep := range strings.Fields(string(out)) {
		if slices.ContainsFunc(banned, func(b string) bool { return dep == b || strings.HasPrefix(dep, b+"/") }) {
			t.Errorf("%s depends on %s", pkg, dep)
		}
		name, ok := strings.CutPrefix(dep, ourPrefix)
		if !ok {
			continue
		}
		ours++
		if !slices.Contains(allowed, name) {
			t.Errorf("%s depends on %s, which is not among %v", pkg, name, allowed)
		}
	}
	if ours == 0 {
		t.Errorf("go list named no package of ours among %s's dependencies", pkg)
	}
}
