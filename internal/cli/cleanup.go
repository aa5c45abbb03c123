package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quicbench/quicbench/internal/experiment"
)

// runCleanup removes the namespaces of quicbench runs whose process is gone
// (a run killed with SIGKILL cannot clean up after itself).
func runCleanup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	if code, done := noArgs(fs, args, "Usage: quicbench cleanup\n\nRemoves the namespaces of quicbench runs of any user whose process is gone, and the browsers'\nand work directories root's own killed runs left; another user's directories are theirs, removed\nwhen their next run starts.", stdout, stderr); done {
		return code
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(stderr, "quicbench cleanup: it removes the namespaces killed runs of any user left behind (your own runs' directories go when your next run starts): run it as root, such as sudo quicbench cleanup")
		return exitUsage
	}
	if err := checkPrivileges(); err != nil {
		fmt.Fprintln(stderr, "quicbench cleanup:", err)
		return exitUsage
	}
	dirs, removed, err := experiment.RemoveStale()
	for _, d := range dirs {
		fmt.Fprintln(stdout, "removed directory", d)
	}
	for _, name := range removed {
		what := "namespace"
		if strings.HasPrefix(name, experiment.UplinkTablePrefix) {
			what = "uplink's nftables table (its host end and forwarding with it)"
		}
		fmt.Fprintln(stdout, "removed", what, name)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quicbench cleanup:", err)
		return exitFailure
	}
	if len(removed)+len(dirs) == 0 {
		fmt.Fprintln(stdout, "nothing to clean up")
	}
	return exitOK
}
