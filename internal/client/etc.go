package client

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/trust"
)

// BindEtc makes cmd run in a mount namespace of its own in which each
// file of binds (a path under /etc, such as "/etc/hosts") is the file it
// maps to: the browser's own view of its name service, no one else's.
// cmd's path and arguments become unshare's, which runs sh to bind the
// files and then execs the original command in its place.
func BindEtc(cmd *exec.Cmd, binds map[string]string) error {
	if len(binds) == 0 {
		return nil
	}
	tools := make([]string, 3)
	for i, name := range []string{"unshare", "sh", "mount"} {
		p, err := trust.LookPath(name)
		if err != nil {
			return fmt.Errorf("%w (install util-linux)", err)
		}
		tools[i] = p
	}
	targets := slices.Sorted(maps.Keys(binds))
	var script []string
	var files []string
	for i, target := range targets {
		if !strings.HasPrefix(target, "/etc/") || strings.ContainsAny(target, "\"$`\\") {
			return fmt.Errorf("bind: %q is no file under /etc", target)
		}
		script = append(script, fmt.Sprintf(`%s --bind "$%d" %s`, tools[2], i, target))
		files = append(files, binds[target])
	}
	// sh's $0, $1, … are the files; "$@" after shift is the command.
	shift := fmt.Sprintf("shift %d && ", len(files)-1)
	line := strings.Join(script, " && ") + " && " + shift + `exec "$@"`
	args := append([]string{"unshare", "--mount", "--propagation", "private", "--", tools[1], "-c", line}, files...)
	cmd.Args = append(append(args, cmd.Path), cmd.Args[1:]...)
	cmd.Path = tools[0]
	return nil
}

// ResolverFiles writes into dir the name service of a browser that looks
// its hosts up at resolver (dns: resolved): a resolv.conf naming it
// alone, a hosts file of localhost alone, and an nsswitch.conf that asks
// those two and nothing else (no mDNS, no systemd-resolved), and returns
// them as BindEtc's binds.
func ResolverFiles(dir string, resolver netip.Addr) (map[string]string, error) {
	files := map[string]string{
		"resolv.conf":   fmt.Sprintf("nameserver %s\n", resolver),
		"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
		"nsswitch.conf": "hosts: files dns\n",
	}
	binds := map[string]string{}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("name service of the browser: %w", err)
		}
		binds["/etc/"+name] = path
	}
	return binds, nil
}
