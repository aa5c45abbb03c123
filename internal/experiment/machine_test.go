package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/testenv"
)

// TestMachineLockTouchesNoFile: what an ordinary user plants in the
// shared directory (a 0600 file of theirs under the lock's old name, a link
// to a root file beside it) is neither followed nor chmodded, and the lock
// is taken all the same.
func TestMachineLockTouchesNoFile(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "root-secret")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "quicbench-measure.lock")
	if err := os.WriteFile(planted, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "quicbench-measure.lock.link")); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockMachine(t.Context(), slog.New(slog.DiscardHandler), dir, time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for _, p := range []string{planted, victim} {
		if info, err := os.Lstat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want it untouched at 0600", p, err, info.Mode())
		}
	}
}

// TestMachineLockNamesItsHolder: while another process holds the lock, a
// run with a bounded wait gives up after it, naming that process and its
// user; once it lets go, the lock is taken.
func TestMachineLockNamesItsHolder(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "flock")
	dir := t.TempDir()
	holder := exec.Command("flock", "--no-fork", "--exclusive", dir, "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	time.Sleep(300 * time.Millisecond) // until flock holds it
	start := time.Now()
	_, err := lockMachine(t.Context(), slog.New(slog.DiscardHandler), dir, 1500*time.Millisecond, false)
	var held *LockHeldError
	if !errors.As(err, &held) || time.Since(start) < 1500*time.Millisecond || time.Since(start) > 10*time.Second {
		t.Fatalf("after %v: %v, want the lock held", time.Since(start), err)
	}
	if want := fmt.Sprintf("pid %d (sleep), user root", holder.Process.Pid); held.Holder != want || !strings.Contains(err.Error(), want) {
		t.Errorf("holder %q (%v), want %q", held.Holder, err, want)
	}
	holder.Process.Kill()
	holder.Wait()
	unlock, err := lockMachine(context.Background(), slog.New(slog.DiscardHandler), dir, 5*time.Second, false)
	if err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
	unlock()
}

// TestMachineLockWantsARootDirectory: a lock directory an ordinary user
// owns (and so could have planted) is refused with its owner named.
func TestMachineLockWantsARootDirectory(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	if err := os.Chown(dir, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := lockMachine(t.Context(), slog.New(slog.DiscardHandler), dir, time.Second, false); err == nil || !strings.Contains(err.Error(), "belongs to uid 1000") {
		t.Errorf("a user's directory as the lock: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	if _, err := lockMachine(t.Context(), slog.New(slog.DiscardHandler), link, time.Second, false); err == nil {
		t.Error("a link as the lock directory was followed")
	}
}

// TestMachineLockHolderIsEscaped: any user names their own process; a
// name with a terminal escape is printed escaped, never raw.
func TestMachineLockHolderIsEscaped(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommand(t, "flock")
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	named := filepath.Join(t.TempDir(), "a\x1b]0;pw\x07b")
	if err := os.Symlink(sleep, named); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("flock", "--no-fork", "--exclusive", dir, named, "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	time.Sleep(300 * time.Millisecond)
	_, err = lockMachine(t.Context(), slog.New(slog.DiscardHandler), dir, 500*time.Millisecond, false)
	var held *LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("%v, want the lock held", err)
	}
	if strings.ContainsAny(held.Holder, "\x1b\x07") || !strings.Contains(held.Holder, `a\x1b]0;pw\ab`) {
		t.Errorf("holder %q: want its name escaped", held.Holder)
	}
}

// TestWaitLockHasADefaultLimit: a run told nothing waits DefaultWaitLock,
// not forever; --wait-lock 0 waits forever.
func TestWaitLockHasADefaultLimit(t *testing.T) {
	if WaitLockOf(0) != WaitForever || WaitLockOf(time.Minute) != time.Minute {
		t.Errorf("WaitLockOf(0) = %v, WaitLockOf(1m) = %v", WaitLockOf(0), WaitLockOf(time.Minute))
	}
	if DefaultWaitLock <= 0 || DefaultWaitLock > 24*time.Hour {
		t.Errorf("DefaultWaitLock %v", DefaultWaitLock)
	}
}
