package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/cpuuse"
)

// Several runs on one machine: a run given cores (RunConfig.Cores) holds
// the machine's lock shared, not exclusive, and an exclusive flock(2) on
// the sysfs directory of each CPU it measures on
// (/sys/devices/system/cpu/cpuN: root's, the same for every user and
// every namespace quicbench makes, with no name in it anyone can plant or
// link). It then moves every thread of its process onto those CPUs;
// what it starts from then on (emulator threads, servers, browsers)
// inherits them. Runs with cores of their own measure side by side on
// disjoint CPUs; a run without (the default) takes the machine's lock
// exclusive, so it waits for every run with cores and they for it.

// CoreLockDir is the directory, by CPU number, whose flock is that CPU's
// lock.
const CoreLockDir = "/sys/devices/system/cpu/cpu%d"

// coreClaim is a run's CPUs: their locks, held, and the CPUs its threads
// ran on before.
type coreClaim struct {
	fds    []int
	cpus   []int
	before unix.CPUSet
}

// CoresText is the claim's CPUs as a list, such as "0,1".
func (c *coreClaim) CoresText() string { return joinCPUs(c.cpus) }

// release moves the process's threads back to the CPUs they had and
// lets the CPUs go.
func (c *coreClaim) release() {
	cpuuse.PinProcess(&c.before)
	c.unlock()
}

// unlock lets the claim's CPUs go (a claim not yet pinned: tryCores's).
func (c *coreClaim) unlock() {
	for _, fd := range c.fds {
		unix.Flock(fd, unix.LOCK_UN)
		unix.Close(fd)
	}
}

// claimCores takes n of the CPUs this process may use, each one's lock
// exclusive, waiting while fewer than n are free (naming a holder when
// it changes) until ctx is done, or for at most wait (as lockMachine),
// and moves this process's threads onto them.
func claimCores(ctx context.Context, log *slog.Logger, n int, wait time.Duration) (*coreClaim, error) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, fmt.Errorf("cores: %w", err)
	}
	usable := cpuuse.CPUList(before)
	if n < 1 || n > len(usable) {
		return nil, inputErrorf("--cores %d: this process may use %d CPUs (%s): give 1 to %d", n, len(usable), joinCPUs(usable), len(usable))
	}
	var claim *coreClaim
	err := waitTaking(ctx, wait, func() (holder string, err error) {
		claim, holder, err = tryCores(usable, n)
		return holder, err
	}, func(holder string) {
		log.Warn("other runs measure on this machine's CPUs: waiting for cores", "want", n, "holder", holder)
	})
	if err != nil {
		return nil, err
	}
	claim.before = before
	if err := claim.pin(); err != nil {
		claim.release()
		return nil, err
	}
	return claim, nil
}

// tryCores locks the first n free CPUs of usable without waiting: the
// claim, or nil and the holder of the first CPU it could not take.
func tryCores(usable []int, n int) (*coreClaim, string, error) {
	claim := &coreClaim{}
	holder := ""
	for _, cpu := range usable {
		if len(claim.cpus) == n {
			break
		}
		dir := fmt.Sprintf(CoreLockDir, cpu)
		fd, err := openLockDir(dir)
		if err != nil {
			claim.unlock()
			return nil, "", fmt.Errorf("core lock: %w", err)
		}
		switch err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); {
		case err == nil:
			claim.fds, claim.cpus = append(claim.fds, fd), append(claim.cpus, cpu)
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			if holder == "" {
				holder = lockHolder(fd)
			}
			unix.Close(fd)
		default:
			unix.Close(fd)
			claim.unlock()
			return nil, "", fmt.Errorf("core lock %s: %w", dir, err)
		}
	}
	if len(claim.cpus) < n {
		claim.unlock()
		return nil, holder, nil
	}
	return claim, "", nil
}

// pin moves every thread of this process onto the claim's CPUs.
func (c *coreClaim) pin() error {
	var set unix.CPUSet
	for _, cpu := range c.cpus {
		set.Set(cpu)
	}
	if err := cpuuse.PinProcess(&set); err != nil {
		return fmt.Errorf("cores %s: %w", c.CoresText(), err)
	}
	return nil
}

// joinCPUs is a list of CPUs as "0,1".
func joinCPUs(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, cpu := range cpus {
		parts[i] = strconv.Itoa(cpu)
	}
	return strings.Join(parts, ",")
}

// machineHold is what a run measures on: the machine's lock, and the
// CPUs of its own where it has some.
type machineHold struct {
	unlock func()
	cores  *coreClaim // nil: the whole machine
}

// holdMachine takes what cfg's run measures on: the machine's lock,
// exclusive; or, with cfg.Cores, shared and that many CPUs of its own.
func holdMachine(ctx context.Context, cfg RunConfig) (*machineHold, error) {
	unlock, err := lockMachine(ctx, cfg.Log, MachineLockDir, cfg.WaitLock, cfg.Cores > 0)
	if err != nil {
		return nil, err
	}
	if cfg.Cores == 0 {
		return &machineHold{unlock: unlock}, nil
	}
	claim, err := claimCores(ctx, cfg.Log, cfg.Cores, cfg.WaitLock)
	if err != nil {
		unlock()
		return nil, err
	}
	return &machineHold{unlock: unlock, cores: claim}, nil
}

// release lets go of the CPUs, then of the machine's lock.
func (h *machineHold) release() {
	if h.cores != nil {
		h.cores.release()
	}
	h.unlock()
}

// describe is the run's cores meta: "the whole machine" or "CPUs 0 of
// 2, its own (other runs may measure on the others)".
func (h *machineHold) describe() string {
	if h.cores == nil {
		return "the whole machine (one run at a time)"
	}
	return fmt.Sprintf("CPUs %s of %d, its own (runs with cores of their own may measure on the others)", h.cores.CoresText(), h.cores.before.Count())
}
