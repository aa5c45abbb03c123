package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/testenv"
)

// stranger is another user of a shared machine: a uid that owns the
// directories an attacker prepares.
const stranger = 4242

// systemPath is a PATH with root's system directories only.
const systemPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// envWithout is this process's environment without the variables named.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := name != "PATH"
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(env, systemPath)
}

// TestRootTakesNoServerFromAnotherUsersTree: root runs quicbench from a
// directory of another user's tree holding go.mod and bin/quicbench-h3;
// quicbench does not run that program (issue 44, item 1).
func TestRootTakesNoServerFromAnotherUsersTree(t *testing.T) {
	testenv.RequireRoot(t)
	bin := filepath.Join(sharedDir(t, 0), "quicbench") // no servers beside it
	if out, err := exec.Command("cp", quicbenchBinary(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	tree := sharedDir(t, stranger)
	for _, d := range []string{"bin", "data"} {
		if err := os.Mkdir(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(tree, "ran-as")
	files := map[string]string{"go.mod": "module proj\n", "bin/quicbench-h3": "#!/bin/sh\nid > " + marker + "\nexit 1\n"}
	for rel, text := range files {
		if err := os.WriteFile(filepath.Join(tree, rel), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(tree, func(path string, _ os.FileInfo, _ error) error { return os.Lchown(path, stranger, stranger) })
	cmd := exec.Command(bin, "compare", "--quic-server", "quinn", "--client", "loader", "--protocols", "h3", "--runs", "1",
		"--netcheck=false", "--out", filepath.Join(t.TempDir(), "run"))
	cmd.Dir = filepath.Join(tree, "data")
	cmd.Env = envWithout("QUICBENCH_BIN")
	out, code := exitCode(t, cmd)
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("root ran another user's bin/quicbench-h3 found through the working directory: %s", b)
	}
	if code != 2 || !strings.Contains(out, "quicbench-h3 not found") {
		t.Errorf("compare --quic-server quinn without its server: exit %d, %q; want 2 and 'not found'", code, out)
	}
}

// TestRootRefusesAnotherUsersRunDirectory: a root run, compare or
// reproduce refuses, in one line with status 2 naming the owner, an --out
// that another user owns or one below a directory they can write without
// the sticky bit, and writes nothing there (issue 44, item 2).
func TestRootRefusesAnotherUsersRunDirectory(t *testing.T) {
	testenv.RequireRoot(t)
	bin := quicbenchBinary(t)
	theirs := sharedDir(t, stranger)
	open := sharedDir(t, 0)
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(spec, []byte("name: s\nrepetitions: 1\nfactors:\n  networks: [{name: n, rtt: 20ms}]\n  pages: [synthetic:2x1KB]\n  clients: [loader]\n"), 0o644)
	cases := map[string][]string{
		"compare into theirs":     {"compare", "--client", "loader", "--netcheck=false", "--out", theirs},
		"run below theirs":        {"run", spec, "--out", filepath.Join(theirs, "new")},
		"reproduce into theirs":   {"reproduce", "cook2017", "--out", filepath.Join(theirs, "r")},
		"compare below open":      {"compare", "--client", "loader", "--netcheck=false", "--out", filepath.Join(open, "run")},
		"resume theirs":           {"run", spec, "--out", theirs, "--resume"},
		"run in open, not sticky": {"run", spec, "--out", open},
		"parity into theirs":      {"parity", "--out", theirs},
	}
	for name, args := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a build that accepts it runs it
		out, code := exitCode(t, exec.CommandContext(ctx, bin, args...))
		cancel()
		want := "uid 4242"
		if strings.Contains(name, "open") {
			want = "can be written by other users"
		}
		if code != 2 || !strings.Contains(out, want) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want 2 and one line saying %q", name, code, out, want)
		}
	}
	for _, dir := range []string{theirs, open} {
		if names := testenv.DirNames(t, dir); len(names) > 0 {
			t.Errorf("root wrote %v into %s", names, dir)
		}
	}
}

// TestKilledBrowserRunLeavesNoProfiles: a Chromium run killed with SIGKILL
// mid-load leaves no browser profile in its run directory, and cleanup
// removes its private work directory (issue 44, items 2 and 5).
func TestKilledBrowserRunLeavesNoProfiles(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, chromium.DefaultChromiumPath, "apt-get install chromium")
	for _, c := range []string{"chromium", "firefox"} {
		t.Run(c, func(t *testing.T) {
			if c == "firefox" {
				testenv.RequireFile(t, firefox.DefaultPath, "apt-get install firefox-esr")
			}
			killMidLoadThenCleanup(t, c)
		})
	}
}

func killMidLoadThenCleanup(t *testing.T, client string) {
	bin := quicbenchBinary(t)
	tmp := t.TempDir()
	runDir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "compare", "--client", client, "--runs", "20", "--rtt", "20ms", "--page", "synthetic:8x2KB", "--netcheck=false", "--out", runDir)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	lines := startWithStderr(t, cmd)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "load   1/") {
	}
	go func() {
		for lines.Scan() {
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(profilesIn(t, runDir, tmp)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	profiles := profilesIn(t, runDir, tmp)
	if len(profiles) == 0 {
		t.Fatal("no browser profile appeared within 20 s")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for _, p := range profiles {
		if strings.HasPrefix(p, runDir) {
			t.Errorf("a browser profile in the run directory: %s", p)
		}
	}
	cleanup := exec.Command(bin, "cleanup")
	cleanup.Env = cmd.Env
	if out, code := exitCode(t, cleanup); code != 0 {
		t.Fatalf("cleanup: exit %d: %s", code, out)
	}
	if left := profilesIn(t, runDir, tmp); len(left) > 0 {
		t.Errorf("after cleanup, profiles are left: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "quicbench-work-*")); len(left) > 0 {
		t.Errorf("after cleanup, work directories are left: %v", left)
	}
	if names := namespacesWithPrefix(t, netns.RunName(cmd.Process.Pid, "")); len(names) > 0 {
		t.Errorf("after cleanup, namespaces are left: %v", names)
	}
}

// profilesIn lists the browser profiles and templates in the run directory
// and in the work directories below tmp.
func profilesIn(t *testing.T, runDir, tmp string) []string {
	t.Helper()
	var found []string
	for _, pattern := range []string{"profile-*", "template-*"} {
		for _, dir := range []string{runDir, filepath.Join(tmp, "quicbench-work-*")} {
			m, _ := filepath.Glob(filepath.Join(dir, pattern))
			found = append(found, m...)
		}
	}
	return found
}

// TestRootlessMarkerInRootsEnvironment: QUICBENCH_ROOTLESS_INSIDE=1 in
// root's environment does not make quicbench mount anything (issue 44,
// item 6). The command runs in a mount namespace of its own, so that a
// build with the defect does not change the machine's mounts.
func TestRootlessMarkerInRootsEnvironment(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "unshare")
	bin := quicbenchBinary(t)
	script := `before=$(wc -l < /proc/self/mountinfo); QUICBENCH_ROOTLESS_INSIDE=1 "$0" presets >/dev/null || exit 3; after=$(wc -l < /proc/self/mountinfo); echo "$before $after"`
	out, err := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("presets with the marker: %v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[0] != f[1] {
		t.Errorf("mounts before and after `presets` with QUICBENCH_ROOTLESS_INSIDE=1: %q; want no new mount", out)
	}
}

// TestARunThatGivesUpOnTheLockLeavesNothing: while another process holds
// the machine's measurement lock, a compare with --wait-lock gives up in
// one line naming the holder, prints no summary and leaves no results
// database; seen from a rootless run, root's holder is not called "nobody"
// (issue 44, low).
func TestARunThatGivesUpOnTheLockLeavesNothing(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "flock")
	holder := exec.Command("flock", "--no-fork", "--exclusive", "/tmp", "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	time.Sleep(300 * time.Millisecond) // until flock holds it
	out := filepath.Join(t.TempDir(), "run")
	text, code := exitCode(t, exec.Command(quicbenchBinary(t), "compare", "--client", "loader", "--runs", "1", "--netcheck=false",
		"--wait-lock", "1s", "--out", out))
	if code != 1 || !strings.Contains(text, "(sleep), user root") || strings.Contains(text, "protocol  ok") {
		t.Errorf("compare while the lock is held: exit %d, %q; want 1, the holder named, no summary", code, text)
	}
	if _, err := os.Lstat(filepath.Join(out, "results.db")); err == nil {
		t.Errorf("a run that never started left %s", filepath.Join(out, "results.db"))
	}
	uid, gid := ordinaryUser(t)
	bin := filepath.Join(sharedDir(t, 0), "quicbench")
	if out, err := exec.Command("cp", quicbenchBinary(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	dir := sharedDir(t, uid)
	cmd := exec.Command(bin, "compare", "--client", "loader", "--runs", "1", "--netcheck=false", "--wait-lock", "1s", "--out", filepath.Join(dir, "run"))
	cmd.Dir = dir
	cmd.Env = []string{systemPath, "HOME=" + dir, "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	text, _ = exitCode(t, cmd)
	if strings.Contains(text, "user nobody") || !strings.Contains(text, "(sleep)") {
		t.Errorf("a rootless compare names root's holder as %q", text)
	}
}
