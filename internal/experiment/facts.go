package experiment

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/factor"
)

// HostFacts describes the software and machine a run measures with:
// quicbench's version (the build's VCS revision, else version), Go's,
// quic-go's and chromedp's, the version of each client at its binary in
// binaries (none: its default) as "<client>_version", the kernel, the
// CPU and its frequency governor. (The runner adds how it counted the
// loads' CPU, cpu_accounting.)
func HostFacts(clients []factor.Client, binaries map[factor.Client]string, version string) map[string]string {
	facts := map[string]string{
		"go_version": runtime.Version(),
		"cpus":       strconv.Itoa(runtime.NumCPU()),
	}
	facts["quicbench_version"] = version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				facts["quicbench_version"] = s.Value
			}
		}
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/quic-go/quic-go":
				facts["quic_go_version"] = d.Version
			case "github.com/chromedp/chromedp":
				facts["chromedp_version"] = d.Version
			}
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		facts["kernel"] = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	if model := cpuModel(); model != "" {
		facts["cpu_model"] = model
	}
	facts["cpu_governor"] = governors()
	if facts["cpu_governor"] == "" {
		facts["cpu_governor"] = "not exposed"
	}
	for _, c := range clients {
		if k, err := clientKind(c); err == nil {
			if v := k.Version(binaries[c]); v != "" {
				facts[string(c)+"_version"] = v
			}
		}
	}
	return facts
}

// cpuModel is the first CPU's model name from /proc/cpuinfo, "" if none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
