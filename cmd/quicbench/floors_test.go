package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of quicbench starts with.
const module = "github.com/quicbench/quicbench/"

// TestFloorsAreTheArchitecture: every package of the module is on the
// floor ARCHITECTURE.md's table puts it, and imports only packages on
// lower floors; a package the table lacks, or an import on its own floor
// or above, fails.
func TestFloorsAreTheArchitecture(t *testing.T) {
	floors := readFloors(t, "../../ARCHITECTURE.md")
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	packages := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := shortName(fields[0])
		floor, ok := floors[pkg]
		if !ok {
			t.Errorf("%s is on no floor of ARCHITECTURE.md: add it", pkg)
			continue
		}
		packages++
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if dep := shortName(imp); floors[dep] >= floor {
				t.Errorf("%s (floor %d) imports %s (floor %d): an import points down only", pkg, floor, dep, floors[dep])
			}
		}
	}
	if packages < 40 {
		t.Errorf("only %d packages checked", packages)
	}
}

// shortName is a package's name in the table: its path in the module
// without internal/.
func shortName(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "internal/")
}

// readFloors reads the floors table between <!-- floors --> and
// <!-- /floors --> of the file at path: package → floor.
func readFloors(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "<!-- floors -->")
	table, _, ok2 := strings.Cut(table, "<!-- /floors -->")
	if !ok || !ok2 {
		t.Fatalf("%s has no floors table", path)
	}
	floors := map[string]int{}
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) != 4 {
			continue
		}
		floor, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header
		}
		for _, pkg := range strings.Split(cells[2], ",") {
			floors[strings.TrimSpace(pkg)] = floor
		}
	}
	return floors
}
