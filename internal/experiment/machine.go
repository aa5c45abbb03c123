package experiment

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/trust"
	"golang.org/x/sys/unix"
)

// One measurement at a time per machine: two runs measuring at once (two
// shards of a Slurm array on one node, two users' runs) would disturb each
// other's timings, so a run holds a machine-wide lock while it loads pages
// and a second one waits for it.
//
// The lock is an advisory flock(2) on the system's temporary directory
// itself, not on a file in it: every user's runs see that directory,
// rootless ones too (they share /tmp), and no ordinary user can create,
// replace, link or chmod it, so there is no name to plant and no file to
// trust or to turn against another user. A run that waits names the
// holder (from /proc/locks) and waits as long as it takes, or at most
// RunConfig.WaitLock.

// MachineLockDir is the directory whose flock is the machine's
// measurement lock.
const MachineLockDir = "/tmp"

// DefaultWaitLock is how long a run waits for the machine's lock unless
// told otherwise (--wait-lock): any user can hold the lock, and a run
// that waited forever behind a stranger's would never say so; after it,
// the run ends naming the holder.
const DefaultWaitLock = 12 * time.Hour

// WaitForever is a RunConfig.WaitLock that waits as long as it takes.
const WaitForever time.Duration = -1

// WaitLockOf is the RunConfig.WaitLock of a --wait-lock flag's value,
// where 0 waits as long as it takes.
func WaitLockOf(flag time.Duration) time.Duration {
	if flag == 0 {
		return WaitForever
	}
	return flag
}

// machineLockPoll is how often a waiting run tries the lock again.
const machineLockPoll = time.Second

// LockHeldError is a run that gave up waiting for the machine's lock.
type LockHeldError struct {
	Holder string        // who holds it, such as "pid 4242 (quicbench), user alice"
	Waited time.Duration // how long the run waited
}

// Error names the run that holds the machine and how long this one
// waited.
func (e *LockHeldError) Error() string {
	return fmt.Sprintf("the machine is measuring for another run (%s) and was still after %v (--wait-lock): try again when it is done", e.Holder, e.Waited.Round(time.Second))
}

// lockMachine takes the measurement lock on dir, exclusive, or shared
// (a run on cores of its own: claimCores), waiting while another run
// holds it in a way that excludes this one (and saying who, when that
// changes) until ctx is done, or for at most wait when wait is positive
// (zero: DefaultWaitLock; negative: no limit).
func lockMachine(ctx context.Context, log *slog.Logger, dir string, wait time.Duration, shared bool) (func(), error) {
	fd, err := openLockDir(dir)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	err = waitTaking(ctx, wait, func() (string, error) {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		switch {
		case err == nil:
			return "", nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return lockHolder(fd), nil
		}
		return "", fmt.Errorf("machine lock %s: %w", dir, err)
	}, func(holder string) {
		log.Warn("another run is measuring on this machine: waiting for it (one measurement at a time)", "holder", holder, "lock", dir)
	})
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return func() { unix.Flock(fd, unix.LOCK_UN); unix.Close(fd) }, nil
}

// waitTaking calls take until it takes what it wants (it returns no
// holder and no error), or fails, every machineLockPoll, calling waiting
// with the holder each time that changes, until ctx is done, or for at
// most wait when wait is positive (zero: DefaultWaitLock; negative: no
// limit), then a LockHeldError naming the last holder.
func waitTaking(ctx context.Context, wait time.Duration, take func() (holder string, err error), waiting func(holder string)) error {
	if wait == 0 {
		wait = DefaultWaitLock
	}
	start, said := time.Now(), ""
	for {
		holder, err := take()
		if err != nil || holder == "" {
			return err
		}
		if wait > 0 && time.Since(start) >= wait {
			return &LockHeldError{Holder: holder, Waited: time.Since(start)}
		}
		if holder != said {
			waiting(holder)
			said = holder
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(machineLockPoll):
		}
	}
}

// openLockDir opens dir to lock it: a directory (not a link) that belongs
// to root, or to a user this user namespace does not map (root seen from
// a rootless run), so that no ordinary user can have put it there.
func openLockDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("machine lock %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("machine lock %s: %w", dir, err)
	}
	if st.Uid != 0 && st.Uid != overflowUID() {
		unix.Close(fd)
		return -1, fmt.Errorf("machine lock %s belongs to uid %d, not to root: an ordinary user could have made it; the machine's temporary directory must be root's", dir, st.Uid)
	}
	return fd, nil
}

// overflowUID is the uid a user namespace shows for users it does not map
// (/proc/sys/kernel/overflowuid, 65534 by default).
func overflowUID() uint32 {
	data, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil {
		return 65534
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 32)
	if err != nil {
		return 65534
	}
	return uint32(n)
}

// lockHolder names the process that holds a flock on fd's inode, from
// /proc/locks: its PID, command and user; "an unknown process" when none
// is listed (it let go meanwhile).
func lockHolder(fd int) string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return "an unknown process"
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return "an unknown process"
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiter's
		// line has "->" after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return describeProcess(pid)
		}
	}
	return "an unknown process"
}

// describeProcess is "pid N (COMMAND), user NAME" from /proc.
func describeProcess(pid int) string {
	text := fmt.Sprintf("pid %d", pid)
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		// Any user names their own process: escaped, never raw.
		text += " (" + strings.Trim(strconv.QuoteToASCII(strings.TrimSuffix(string(comm), "\n")), `"`) + ")"
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return text
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if f[0] == strconv.FormatUint(uint64(overflowUID()), 10) && !trust.InitialUserNamespace() {
					// seen from a rootless run: a user its namespace does not map
					return text + ", a user outside this rootless run's namespace (root or another user)"
				}
				if u, err := user.LookupId(f[0]); err == nil {
					return text + ", user " + u.Username
				}
				return text + ", uid " + f[0]
			}
		}
	}
	return text
}
