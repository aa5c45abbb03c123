package safefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quicbench/quicbench/internal/trust"
	"golang.org/x/sys/unix"
)

// workPrefix starts the names of the private work directories in
// os.TempDir(); the owning process's PID and a random part follow.
const workPrefix = "quicbench-work-"

// NewWorkDir makes a private directory for what quicbench hands to the
// programs it runs as root (browser profiles and their template): in
// os.TempDir(), mode 0700, owned by this process's user, under a random
// name that no other user can predict or make first (mkdir refuses an
// existing name, and another is tried). Nobody else can enter it, and in a
// sticky directory such as /tmp nobody else can rename or remove it, so the
// paths below it stay this process's. The way to it is checked with trust
// (a TMPDIR another user can change is refused). Its name carries the
// PID, so that RemoveStaleWorkDirs finds it once the process is gone.
// The caller removes it.
func NewWorkDir() (string, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", workPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("work directory: %w", err)
	}
	if err := checkPrivate(dir); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// checkPrivate checks that dir, just made, is a directory of this user's
// that no one else may enter, on a way no other user can change.
func checkPrivate(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("work directory: %w", &os.PathError{Op: "open", Path: dir, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("work directory: %w", &os.PathError{Op: "stat", Path: dir, Err: err})
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
		return fmt.Errorf("work directory %s is not this user's alone (uid %d, mode %04o)", dir, st.Uid, st.Mode&0o7777)
	}
	if err := trust.Dir(dir); err != nil {
		return fmt.Errorf("work directory: %w: set TMPDIR to a directory only root can change", err)
	}
	return nil
}

// RemoveStaleWorkDirs removes the work directories of this user's
// processes that are gone (a run killed with SIGKILL cannot remove its
// own) and returns them.
func RemoveStaleWorkDirs() []string { return RemoveStaleOf(workPrefix) }

// RemoveStaleOf removes the directories in os.TempDir() named prefix, a
// PID and "-…" whose process is gone, and returns them: this user's
// directories only, never a link or another user's entry.
func RemoveStaleOf(prefix string) []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	var removed []string
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), prefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not one of these, or its process lives
		}
		var st unix.Stat_t
		if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		if removeAllSettled(d, staleTries, staleRetryPause) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// A dead run's browser may still be writing into its profile: Chromium's
// own processes (its GPU and network services, its renderers) are not
// killed with it but leave once they notice it gone, a few hundred
// milliseconds later. Removing a stale directory is tried staleTries
// times, staleRetryPause apart, while files keep appearing in it.
const (
	staleTries      = 20
	staleRetryPause = 100 * time.Millisecond
)

// removeAllSettled removes dir with everything in it, trying again after
// pause (up to tries times in all) while something adds files to it as it
// goes (the removal ends on a directory not empty); any other error ends
// it at once, so that a directory that cannot be removed does not hold up
// a run's start. It returns the last try's error.
func removeAllSettled(dir string, tries int, pause time.Duration) error {
	var err error
	for range tries {
		if err = os.RemoveAll(dir); err == nil || !errors.Is(err, syscall.ENOTEMPTY) {
			return err
		}
		time.Sleep(pause)
	}
	return err
}
