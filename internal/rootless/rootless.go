// Package rootless lets an ordinary user run quicbench: the process runs
// itself again as root of a new user, network and mount namespace of its
// own (what `unshare --user --map-root-user --net --mount` does), with a
// private tmpfs on /run for the network namespaces it creates. Inside,
// TUN devices, nested namespaces, routes with initcwnd, per-namespace
// sysctls, congestion control, nginx and Chromium all work as for root;
// the namespace and everything in it ends with the process.
package rootless

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/trust"
)

// envInside marks the process that runs inside the namespace.
const envInside = "QUICBENCH_ROOTLESS_INSIDE"

// Inside reports whether this process is the one Run started: the kernel
// must say so (a user namespace other than the initial one, see
// trust.InitialUserNamespace), not only the variable Run sets, which a
// process in root's own namespace does not believe. It takes the variable
// out of this process's environment either way, so that no program it
// starts inherits it.
func Inside() bool {
	marked := os.Getenv(envInside) == "1"
	os.Unsetenv(envInside)
	return marked && !trust.InitialUserNamespace()
}

// Run runs this program with args again inside a new user, network and
// mount namespace, as its root, with stdin, stdout and stderr passed on,
// and returns its exit status. A signal that cancels ctx is passed on
// (SIGINT), so that the inner run stops and keeps what it recorded.
func Run(ctx context.Context, args []string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("rootless: find this program: %w", err)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInside+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("rootless: cannot create a user namespace (%v): allow them (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0) or run as root", err)
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Signal(os.Interrupt) })
	defer stop()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("rootless: %w", err)
	}
	return 0, nil
}

// Prepare sets up the namespace Run entered: mounts private from here on,
// a tmpfs on /run for the network namespaces quicbench creates, and the
// loopback device up.
func Prepare() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("rootless: make mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("rootless: mount a tmpfs on /run: %w", err)
	}
	for _, dir := range []string{"/run/netns", "/run/lock"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("rootless: %w", err)
		}
	}
	ip, err := trust.LookPath("ip")
	if err != nil {
		return fmt.Errorf("rootless: %w", err)
	}
	if out, err := exec.Command(ip, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("rootless: bring up loopback: %v: %s", err, out)
	}
	return nil
}
