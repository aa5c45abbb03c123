package h3server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/testenv"
	"github.com/quicbench/quicbench/internal/trust"
)

// planted makes dir/bin/name, a program another user (uid 4242) owns, in a
// source tree of theirs with a go.mod, and returns the tree's data/ below
// it (where root might run quicbench from).
func plantedTree(t *testing.T, name string) (tree, data string) {
	t.Helper()
	tree = filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{tree, filepath.Join(tree, "bin"), filepath.Join(tree, "data")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"go.mod": "module proj\n", "bin/" + name: "#!/bin/sh\nid > \"$0.ran\"\n"}
	for rel, text := range files {
		if err := os.WriteFile(filepath.Join(tree, rel), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(tree, func(path string, _ os.FileInfo, _ error) error { return os.Lchown(path, 4242, 4242) })
	return tree, filepath.Join(tree, "data")
}

// TestNoServerFromTheWorkingDirectory: root running quicbench from a
// directory of another user's source tree does not take the server binary
// of that tree (issue 44, item 1).
func TestNoServerFromTheWorkingDirectory(t *testing.T) {
	testenv.RequireRoot(t)
	if !trust.InitialUserNamespace() {
		t.Skip("ownership is judged only in the initial user namespace")
	}
	tree, data := plantedTree(t, BinaryQuinn)
	t.Chdir(data)
	t.Setenv(EnvBinDir, "")
	t.Setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
	got, err := FindBinary(BinaryQuinn)
	if strings.HasPrefix(got, tree) {
		t.Fatalf("FindBinary took %s, another user's program found through the working directory", got)
	}
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("FindBinary: %q, %v; want not found", got, err)
	}
}

// TestServerDirectoriesAreChecked: a QUICBENCH_BIN or PATH entry that
// another user owns or can write is refused with its path and why.
func TestServerDirectoriesAreChecked(t *testing.T) {
	testenv.RequireRoot(t)
	if !trust.InitialUserNamespace() {
		t.Skip("ownership is judged only in the initial user namespace")
	}
	tree, _ := plantedTree(t, BinaryQuinn)
	t.Setenv(EnvBinDir, filepath.Join(tree, "bin"))
	_, err := FindBinary(BinaryQuinn)
	if err == nil || !strings.Contains(err.Error(), tree+" belongs to uid 4242") {
		t.Fatalf("FindBinary with %s=%s/bin: %v; want it refused, naming the owner", EnvBinDir, tree, err)
	}
	t.Setenv(EnvBinDir, "")
	t.Setenv("PATH", filepath.Join(tree, "bin")+":/usr/bin:/bin")
	_, err = FindBinary(BinaryQuinn)
	if err == nil || !strings.Contains(err.Error(), "only where another user can change it") {
		t.Fatalf("FindBinary with another user's PATH entry: %v; want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(tree, "bin", BinaryQuinn+".ran")); err == nil {
		t.Fatal("the planted program ran")
	}
}
