package main

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// rootlessUser is the ordinary user the rootless test creates.
const rootlessUser = "quicbench-rootless"

// TestRootlessCompare: an ordinary user (one the test creates) runs
// quicbench compare: it runs in a user namespace of its own, records every
// load in a results database the user owns, and leaves nothing behind.
func TestRootlessCompare(t *testing.T) {
	testenv.RequireRoot(t) // to create the user
	uid, gid := ordinaryUser(t)
	bin := quicbenchBinary(t)
	os.Chmod(filepath.Dir(bin), 0o755)
	dir := sharedDir(t, uid)
	out := filepath.Join(dir, "run")
	cmd := exec.Command(bin, "compare", "--client", "loader", "--rtt", "20ms", "--loss", "1", "--runs", "2", "--protocols", "h2,h3", "--stack", "tcp+", "--netcheck=false", "--out", out)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rootless compare: %v\n%s", err, b)
	}
	info, err := os.Stat(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
		t.Errorf("results.db is owned by uid %d, not the user's %d", st.Uid, uid)
	}
	store, err := results.OpenReadOnly(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ok := 0
	store.EachTrial(func(tr results.Trial) error {
		if tr.Status == results.StatusOK && tr.Stack == "tcp+" {
			ok++
		}
		return nil
	})
	if ok != 4 {
		t.Errorf("%d verified loads, want 4", ok)
	}
	if names := namespacesWithPrefix(t, "qb-"); len(names) > 0 {
		t.Errorf("namespaces left in the host: %v", names)
	}
}

// TestRootlessCompareWithTheDefaults: an ordinary user's compare with the
// default client (Chromium) and --client-cpu auto succeeds on a machine
// of fewer than 4 cores, where auto would cap the browser at one core but
// the user has no cgroup to cap it in: auto picks unlimited and the first
// line says so and why.
func TestRootlessCompareWithTheDefaults(t *testing.T) {
	testenv.RequireRoot(t) // to create the user
	if runtime.NumCPU() >= 4 {
		t.Skip("auto leaves the browser unlimited on 4 cores or more anyway")
	}
	uid, gid := ordinaryUser(t)
	bin := quicbenchBinary(t)
	os.Chmod(filepath.Dir(bin), 0o755)
	dir := sharedDir(t, uid)
	cmd := exec.Command(bin, "compare", "--runs", "2", "--netcheck=false", "--out", filepath.Join(dir, "run"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rootless compare with the defaults: %v\n%s", err, b)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if !strings.Contains(first, "client CPU unlimited") || !strings.Contains(first, "this run cannot cap the browser") {
		t.Errorf("the first line does not say why the browser is not capped: %s", first)
	}
	if names := namespacesWithPrefix(t, "qb-"); len(names) > 0 {
		t.Errorf("namespaces left in the host: %v", names)
	}
}

// ordinaryUser is the uid and gid of rootlessUser, created if missing.
func ordinaryUser(t *testing.T) (uid, gid int) {
	t.Helper()
	if _, err := user.Lookup(rootlessUser); err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", rootlessUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v: %s", err, out)
		}
	}
	u, err := user.Lookup(rootlessUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}
