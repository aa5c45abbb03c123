package cli

import (
	"flag"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/netconf"
)

// networkFlags are the flags that describe the emulated network, shared by
// every subcommand that builds one.
type networkFlags struct {
	fs       *flag.FlagSet
	values   map[string]*string
	defaults map[string]string
	paths    []string // --path values, in order
	dropHead *bool
}

// networkDefaults are a subcommand's defaults for the network flags.
type networkDefaults struct {
	rtt, loss, down, up, queue string
}

func addNetworkFlags(fs *flag.FlagSet, d networkDefaults) *networkFlags {
	n := &networkFlags{fs: fs, values: map[string]*string{}, defaults: map[string]string{}}
	add := func(name, def, usage string) {
		n.values[name] = fs.String(name, def, usage)
		n.defaults[name] = def
	}
	add("net", "", "network `preset` (quicbench presets lists them); flags given with it override its values")
	add("rtt", d.rtt, "round-trip `delay` added by the link, split evenly between the directions (e.g. 100ms)")
	add("jitter", "0", "vary each packet's one-way delay uniformly within ± this `duration`, without reordering")
	add("loss", d.loss, "random packet loss in `percent`, applied independently in each direction (e.g. 1 or 0.5%)")
	add("loss-down", "", "loss in `percent` of the downlink only (servers → client), overriding --loss")
	add("loss-up", "", "loss in `percent` of the uplink only (client → servers), overriding --loss")
	add("gilbert", "", "bursty Gilbert-Elliott loss in each direction, netem's `p,r[,1-h[,1-k]]` in percent (e.g. 1,30,100,0): p good→bad, r bad→good, loss in the bad and good states (defaults 100 and 0)")
	add("down", d.down, "downlink (servers → client) `rate`: bit, kbit, mbit, gbit; 0 for unlimited")
	add("up", d.up, "uplink (client → servers) `rate`; 0 for unlimited")
	add("down-trace", "", "Mahimahi trace `file` for the downlink instead of --down (one ms timestamp per line, each a 1500-byte opportunity)")
	add("up-trace", "", "Mahimahi trace `file` for the uplink instead of --up")
	add("udp", "", "what the network does to UDP on port 443 (QUIC's), as networks that block or throttle QUIC do: block (every packet), block-after-N (each flow's first N packets pass), or a `rate` such as 1mbit that polices UDP; default pass. Forced h3 then fails; under --discovery the browser falls back to TCP")
	add("queue", d.queue, "drop-tail queue of each direction: `bytes` (64KB), packets (100pkt) or time at that direction's mean rate (200ms); 0 for unlimited")
	n.dropHead = fs.Bool("drop-head", false, "a full queue drops its oldest waiting packet instead of the arriving one (drop-head; default drop-tail)")
	fs.Func("path", "extra round trip and loss towards server N beyond the shared link, as `N=RTT[,LOSS%]` (e.g. 2=40ms,0.5); repeatable. Server 1 is $QUICBENCH_SERVER_ADDR", func(v string) error {
		n.paths = append(n.paths, v)
		return nil
	})
	return n
}

// description is the network the flags describe. With --net, the preset is
// the base and only the flags given on the command line change it; without
// it, the flags given and the non-zero defaults apply (a value left out is
// zero: no delay, loss, rate limit or queue).
func (n *networkFlags) description() netconf.Description {
	given := map[string]bool{}
	n.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	d := netconf.Description{Preset: *n.values["net"], Values: map[string]string{}, DropHead: *n.dropHead, Paths: n.paths}
	for _, key := range netconf.Keys {
		v := *n.values[key]
		if given[key] || (d.Preset == "" && v != "" && v != "0") {
			d.Values[key] = v
		}
	}
	// A trace is named by its absolute path, so that the spec a
	// comparison writes into its run directory resumes from anywhere.
	for _, key := range []string{"down-trace", "up-trace"} {
		if v := d.Values[key]; v != "" && !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				d.Values[key] = abs
			}
		}
	}
	return d
}

// resolve is the network the flags describe, validated.
func (n *networkFlags) resolve() (*netconf.Network, error) {
	return netconf.Resolve(n.description(), nil)
}
