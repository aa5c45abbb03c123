package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// One measurement at a time per machine: two runs measuring at once (two
// shards of a Slurm array on one node, two users' runs) would disturb each
// other's timings, so a run holds a machine-wide lock while it loads pages
// and a second one waits for it.

// machineLockDirs are where the machine's lock file is: the temporary
// directory, which every user's runs share, rootless ones too (they have
// a /run of their own).
var machineLockDirs = []string{os.TempDir()}

// MachineLockName is the lock file's name in machineLockDirs.
const MachineLockName = "quicbench-measure.lock"

// machineLockPoll is how often a waiting run tries the lock again.
const machineLockPoll = time.Second

// lockMachine takes the machine's measurement lock, waiting (and saying
// so once) while another run holds it, until ctx is done.
func lockMachine(ctx context.Context, log *slog.Logger) (func(), error) {
	f, err := openMachineLock()
	if err != nil {
		return nil, err
	}
	said := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("machine lock %s: %w", f.Name(), err)
		}
		if !said {
			log.Warn("another quicbench run is measuring on this machine: waiting for it to finish (one measurement at a time)", "lock", f.Name())
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(machineLockPoll):
		}
	}
}

// openMachineLock opens the lock file, shared by every user (mode 0666).
func openMachineLock() (*os.File, error) {
	var errs []error
	for _, dir := range machineLockDirs {
		path := filepath.Join(dir, MachineLockName)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
		if err == nil {
			os.Chmod(path, 0o666) // past the umask: other users' runs must open it too
			return f, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no machine lock file could be opened: %w", errors.Join(errs...))
}
