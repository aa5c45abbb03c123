package main

import (
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// nobody is the unprivileged user the read-only tests run as.
const nobody = 65534

// exitCode runs cmd and returns its combined output and exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exitErr):
		return string(out), exitErr.ExitCode()
	}
	t.Fatalf("%v: %v", cmd.Args, err)
	return "", -1
}

// sharedDir is a fresh directory every user may enter, owned by uid.
func sharedDir(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "quicbench-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// emptyRun makes a run directory holding a results database with facts
// and no trials, as root, and returns it.
func emptyRun(t *testing.T, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	store, err := results.Create(filepath.Join(dir, results.FileName), map[string]string{"spec_name": "ro", "spec": "name: ro\n"})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	return dir
}

// TestExportAsAnotherUser exports a root's run as an unprivileged user who
// may not write it: the export works, and the run directory is unchanged
// (no WAL or index file appears).
func TestExportAsAnotherUser(t *testing.T) {
	testenv.RequireRoot(t)
	binDir := sharedDir(t, 0)
	bin := filepath.Join(binDir, "quicbench")
	if out, err := exec.Command("cp", quicbenchBinary(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	run := emptyRun(t, sharedDir(t, 0))
	before := testenv.DirNames(t, run)
	to := filepath.Join(sharedDir(t, nobody), "export")
	cmd := exec.Command(bin, "export", run, "--to", to)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, code := exitCode(t, cmd)
	if code != 0 {
		t.Fatalf("export as nobody exited %d:\n%s", code, out)
	}
	if after := testenv.DirNames(t, run); !slices.Equal(before, after) {
		t.Errorf("the run directory changed from %v to %v", before, after)
	}
	if got := testenv.DirNames(t, to); !slices.Equal(got, []string{"connections.csv", "losses.csv", "resources.csv", "samples.csv", "trials.csv"}) {
		t.Errorf("exported %v", got)
	}
}

// TestReadersNeverWrite: report and export of an empty file say it is no
// results database, exit 2, and leave it a 0-byte file.
func TestReadersNeverWrite(t *testing.T) {
	bin := quicbenchBinary(t)
	run := t.TempDir()
	db := filepath.Join(run, results.FileName)
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for sub, outFlag := range map[string]string{"report": "--out", "export": "--to"} {
		out, code := exitCode(t, exec.Command(bin, sub, run, outFlag, filepath.Join(t.TempDir(), "x")))
		if code != 2 || !strings.Contains(out, "is not a results database") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s of an empty file: exit %d, %q", sub, code, out)
		}
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file became %v (%v)", fi.Size(), err)
	}
	if got := testenv.DirNames(t, run); !slices.Equal(got, []string{results.FileName}) {
		t.Errorf("the readers left %v", got)
	}
}

// TestExportOfAnOldRun: a database without a table export needs exits 2
// with one line and leaves no file behind.
func TestExportOfAnOldRun(t *testing.T) {
	bin := quicbenchBinary(t)
	run := emptyRun(t, t.TempDir())
	db, err := sql.Open("sqlite", filepath.Join(run, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE connections`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	to := filepath.Join(t.TempDir(), "export")
	out, code := exitCode(t, exec.Command(bin, "export", run, "--to", to))
	if code != 2 || !strings.Contains(out, "has no connections table") || strings.Count(out, "\n") != 1 {
		t.Errorf("export without a connections table: exit %d, %q", code, out)
	}
	if entries, _ := os.ReadDir(to); len(entries) != 0 {
		t.Errorf("a failed export left %v", entries)
	}
}

// TestNoAnswerIsNotSuccess: a comparison whose loads all fail, and a run
// whose trials all fail, exit 1 and say how to rerun the failures; an
// interrupt during compare's netcheck exits 130; a second compare into
// the same directory is refused without touching the first.
func TestNoAnswerIsNotSuccess(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	dir := t.TempDir()
	out, code := exitCode(t, exec.Command(bin, "compare", "--client", "loader", "--timeout", "1ns", "--runs", "1",
		"--retries", "0", "--netcheck=false", "--protocols", "h2,h3", "--out", filepath.Join(dir, "c")))
	if code != 1 || !strings.Contains(out, "no verified load over h2,h3") || !strings.Contains(out, "--retry-failed") {
		t.Errorf("compare with a 1 ns timeout: exit %d\n%s", code, out)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "c", results.FileName))
	out, code = exitCode(t, exec.Command(bin, "compare", "--client", "loader", "--runs", "1", "--netcheck=false", "--out", filepath.Join(dir, "c")))
	after, _ := os.ReadFile(filepath.Join(dir, "c", results.FileName))
	if code != 2 || !strings.Contains(out, "holds a run already") || string(before) != string(after) {
		t.Errorf("compare into an existing run: exit %d, database changed %v\n%s", code, string(before) != string(after), out)
	}

	specPath := filepath.Join(dir, "fail.yaml")
	os.WriteFile(specPath, []byte("name: fail\nrepetitions: 1\nretries: 0\nclient: loader\ntimeout: 1ms\nnetcheck: false\nfactors:\n  networks: [{rtt: 10ms}]\n  pages: [synthetic:1x1KB]\n  protocols: [h2]\n"), 0o644)
	out, code = exitCode(t, exec.Command(bin, "run", specPath, "--out", filepath.Join(dir, "r")))
	if code != 1 || !strings.Contains(out, "every trial failed") {
		t.Errorf("run whose trials all fail: exit %d\n%s", code, out)
	}

	cmd := exec.Command(bin, "compare", "--client", "loader", "--runs", "1", "--out", filepath.Join(dir, "n"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // netcheck takes about 10 s
	cmd.Process.Signal(os.Interrupt)
	var exitErr *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Errorf("interrupt during netcheck: %v, want exit status 130", err)
	}
}

// TestKilledShellTakesItsServerAlong: after SIGKILL of quicbench shell,
// the --server command and what it started are gone too.
func TestKilledShellTakesItsServerAlong(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	const marker = "27.18281"
	cmd := exec.Command(bin, "shell", "--quiet", "--rtt", "10ms", "--server", "sleep "+marker+" & sleep "+marker, "--", "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer exec.Command(bin, "cleanup").Run() // the killed run's namespaces, whatever the test found
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	sleeps := 0 // the server's two sleeps: quicbench's own arguments and the shell's hold the marker too
	for ; sleeps < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sleeps = len(sleepsWith(marker))
	}
	if sleeps < 2 {
		t.Fatalf("%d server processes started, want 2", sleeps)
	}
	cmd.Process.Signal(os.Kill)
	cmd.Wait()
	for len(proc.Using(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := proc.Using(marker); len(left) > 0 {
		t.Errorf("the server's processes outlived quicbench: %v", left)
	}
}

// sleepsWith lists the live sleep processes whose arguments hold marker.
func sleepsWith(marker string) []int {
	var out []int
	for _, pid := range proc.Using(marker) {
		if args := proc.Cmdline(pid); len(args) > 0 && filepath.Base(args[0]) == "sleep" {
			out = append(out, pid)
		}
	}
	return out
}

// TestInterruptBehindATraceGap: packets waiting out a 10-minute gap of a
// trace do not hold up Ctrl-C.
func TestInterruptBehindATraceGap(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "gap.trace")
	os.WriteFile(trace, []byte("1\n600000\n"), 0o644)
	cmd := exec.Command(bin, "compare", "--down-trace", trace, "--runs", "1", "--client", "loader", "--netcheck=false", "--out", filepath.Join(dir, "run"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(3 * time.Second)
	cmd.Process.Signal(os.Interrupt)
	interrupted := time.Now()
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Errorf("interrupt: %v, want exit status 130", err)
	}
	if took := time.Since(interrupted); took > 5*time.Second {
		t.Errorf("the interrupted run took %v to end", took)
	}
}

// TestCleanupAsAnOrdinaryUser says to run it as root, in one line with
// status 2, rather than that it "needs root in its namespace".
func TestCleanupAsAnOrdinaryUser(t *testing.T) {
	testenv.RequireRoot(t)
	bin := filepath.Join(sharedDir(t, 0), "quicbench")
	if out, err := exec.Command("cp", quicbenchBinary(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	cmd := exec.Command(bin, "cleanup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, code := exitCode(t, cmd)
	// Root's cleanup removes every user's dead namespaces but only root's
	// own directories: the message says so, not "what runs of any user left".
	if code != 2 || !strings.Contains(out, "run it as root") || strings.Contains(out, "in its namespace") || strings.Count(out, "\n") != 1 ||
		!strings.Contains(out, "your own runs' directories go when your next run starts") {
		t.Errorf("cleanup as nobody: exit %d, %q", code, out)
	}
}
