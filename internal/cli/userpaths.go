package cli

import (
	"flag"
	"maps"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/trust"
)

// pathFlags is every flag that names a path, by command, with what the
// command does with it: parseFlags (and compare's parser) applies the
// ownership rule (trust.CheckUserPaths) to each one given, before the
// command does anything else. A command's new flag that names a path is
// added here; the enumerating test fails until every flag of every
// command is classified.
func pathFlags() map[string]map[string]trust.PathKind {
	browsers := map[string]trust.PathKind{"chromium": trust.Program, "chromium-shell": trust.Program, "firefox": trust.Program}
	traces := map[string]trust.PathKind{"down-trace": trust.InputFile, "up-trace": trust.InputFile}
	with := func(base, more map[string]trust.PathKind) map[string]trust.PathKind {
		m := maps.Clone(base)
		maps.Copy(m, more)
		return m
	}
	return map[string]map[string]trust.PathKind{
		"compare":   with(with(browsers, traces), map[string]trust.PathKind{"out": trust.Output, "ca": trust.InputFile, "page": trust.InputDir}),
		"shell":     with(traces, map[string]trust.PathKind{"pcap": trust.OutputFile}),
		"netcheck":  traces,
		"corpus":    {"to": trust.Output},
		"import":    {"to": trust.Output},
		"record":    {"to": trust.Output, "chromium": trust.Program},
		"parity":    {"out": trust.Output},
		"plan":      with(browsers, map[string]trust.PathKind{"pilot": trust.InputDir}),
		"run":       with(browsers, map[string]trust.PathKind{"out": trust.Output}),
		"slurm":     {"out": trust.Output, "bin": trust.Program},
		"export":    {"to": trust.Output},
		"report":    {"out": trust.Output},
		"reproduce": with(browsers, map[string]trust.PathKind{"out": trust.Output, "sites": trust.InputDir}),
		"doctor":    browsers,
	}
}

// pathArgs is what each command's positional arguments are, where they
// name paths: the last kind stands for every argument after it (merge's
// shards). import's first argument, the format, is taken before.
func pathArgs() map[string][]trust.UserPath {
	spec := []trust.UserPath{{Kind: trust.InputFile, Name: "SPEC"}}
	run := []trust.UserPath{{Kind: trust.InputDir, Name: "DIR"}}
	return map[string][]trust.UserPath{
		"run": spec, "plan": spec, "slurm": spec,
		"export": run, "report": run,
		"import": {{Kind: trust.Input, Name: "PATH"}},
		"merge":  {{Kind: trust.Output, Name: "OUT"}, {Kind: trust.InputDir, Name: "DIR"}},
	}
}

// flagPaths lists the path flags of fs that were given, with their
// values: a page names a path only as archive:DIR.
func flagPaths(fs *flag.FlagSet) []trust.UserPath {
	kinds := pathFlags()[fs.Name()]
	var paths []trust.UserPath
	fs.Visit(func(f *flag.Flag) {
		kind, ok := kinds[f.Name]
		if !ok {
			return
		}
		value := f.Value.String()
		if f.Name == "page" {
			rest, isArchive := strings.CutPrefix(value, string(factor.PageArchive)+":")
			if !isArchive {
				return
			}
			value = rest
		}
		paths = append(paths, trust.UserPath{Kind: kind, Value: value, Name: "--" + f.Name})
	})
	return paths
}

// argPaths are the positional arguments args of command that name paths.
func argPaths(command string, args []string) []trust.UserPath {
	kinds := pathArgs()[command]
	if len(kinds) == 0 {
		return nil
	}
	var paths []trust.UserPath
	for i, a := range args {
		p := kinds[min(i, len(kinds)-1)]
		p.Value = a
		paths = append(paths, p)
	}
	return paths
}
