package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/presets"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/units"
)

// networkFlags are the flags that describe the emulated network, shared by
// every subcommand that builds one.
type networkFlags struct {
	fs       *flag.FlagSet
	values   map[string]*string
	paths    []string // --path values, in order
	dropHead *bool
}

// networkDefaults are a subcommand's defaults for the network flags.
type networkDefaults struct {
	rtt, loss, down, up, queue string
}

// The network flags, in the order they are applied (queue last: a queue in
// time depends on the rates).
var networkFlagOrder = []string{"rtt", "jitter", "loss", "loss-down", "loss-up", "gilbert", "down", "up", "down-trace", "up-trace", "queue"}

func addNetworkFlags(fs *flag.FlagSet, d networkDefaults) *networkFlags {
	n := &networkFlags{fs: fs, values: map[string]*string{}}
	add := func(name, def, usage string) { n.values[name] = fs.String(name, def, usage) }
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
	add("queue", d.queue, "drop-tail queue of each direction: `bytes` (64KB), packets (100pkt) or time at that direction's mean rate (200ms); 0 for unlimited")
	n.dropHead = fs.Bool("drop-head", false, "a full queue drops its oldest waiting packet instead of the arriving one (drop-head; default drop-tail)")
	fs.Func("path", "extra round trip and loss towards server N beyond the shared link, as `N=RTT[,LOSS%]` (e.g. 2=40ms,0.5); repeatable. Server 1 is $QUICBENCH_SERVER_ADDR", func(v string) error {
		n.paths = append(n.paths, v)
		return nil
	})
	return n
}

// network is a resolved network condition.
type network struct {
	// Preset is the preset's name, or "" for one made of flags.
	Preset string
	RTT    time.Duration
	Link   emulator.Config
	// maxPathServer is the highest server number a --path names.
	maxPathServer int
	// queue is the queue as given, for descriptions.
	queue string
}

// resolve turns the parsed flags into a network. With --net, the preset is
// the base and only the flags given on the command line change it; without
// it, every flag applies with its value or default.
func (n *networkFlags) resolve() (*network, error) {
	given := map[string]bool{}
	n.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	net := &network{}
	if name := *n.values["net"]; name != "" {
		p, err := presets.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("--net: %w", err)
		}
		net.Preset, net.RTT, net.Link = p.Name, p.RTT, p.Link()
		net.queue = "0"
		switch {
		case p.QueueTime > 0:
			net.queue = p.QueueTime.String()
		case p.QueuePackets > 0:
			net.queue = strconv.Itoa(p.QueuePackets) + "pkt"
		}
	}
	for _, name := range networkFlagOrder {
		value := *n.values[name]
		switch {
		case name == "queue" && (net.Preset == "" || given[name]):
			net.queue = value
		case name == "queue":
			value = net.queue // the preset's, recomputed at the final rates
		case net.Preset != "" && !given[name]:
			continue
		}
		if err := net.apply(name, value); err != nil {
			return nil, err
		}
	}
	if *n.dropHead {
		net.Link.Up.DropHead, net.Link.Down.DropHead = true, true
	}
	for _, v := range n.paths {
		server, p, err := parsePath(v)
		if err != nil {
			return nil, err
		}
		net.Link.Paths = append(net.Link.Paths, p)
		net.maxPathServer = max(net.maxPathServer, server)
	}
	if err := net.Link.Validate(); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	return net, nil
}

// startNetwork checks the privileges, seeds both directions' loss from seed
// (0: a random seed, which it returns for the record), and builds the
// network with servers addresses under a run name tagged with tag.
func startNetwork(net *network, seed uint64, tag string, servers int) (*testbed.Network, uint64, error) {
	if err := net.checkServers(servers); err != nil {
		return nil, 0, usageError{err}
	}
	if err := checkPrivileges(); err != nil {
		return nil, 0, usageError{err}
	}
	if seed == 0 {
		seed = rand.Uint64() | 1
	}
	seeds := rand.New(rand.NewPCG(seed, 0x5eed))
	net.Link.Up.Seed, net.Link.Down.Seed = seeds.Uint64(), seeds.Uint64()
	n, err := testbed.StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("%s%04x", tag, rand.Uint32()&0xffff)), net.Link, servers)
	return n, seed, err
}

// usageError marks an error as the user's to fix: exit status 2.
type usageError struct{ error }

// exitCodeOf is the exit status for an error of startNetwork.
func exitCodeOf(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailure
}

// checkServers returns an error if a --path names a server beyond the
// count the command has.
func (net *network) checkServers(count int) error {
	if net.maxPathServer > count {
		return fmt.Errorf("--path names server %d, but there are %d servers", net.maxPathServer, count)
	}
	return nil
}

// parsePath reads "N=RTT[,LOSS%]".
func parsePath(v string) (int, emulator.Path, error) {
	const usage = "give N=RTT[,LOSS%], such as 2=40ms,0.5"
	numText, rest, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(numText)
	if !ok || err != nil || n < 1 || n > netns.MaxServers {
		return 0, emulator.Path{}, fmt.Errorf("--path %q: %s, with N a server number from 1 to %d", v, usage, netns.MaxServers)
	}
	rttText, lossText, _ := strings.Cut(rest, ",")
	rtt, err := time.ParseDuration(rttText)
	if err != nil || rtt < 0 || rtt > time.Minute {
		return 0, emulator.Path{}, fmt.Errorf("--path %q: %q is not a duration from 0 to 1m: %s", v, rttText, usage)
	}
	p := emulator.Path{Server: netns.ServerAddr(n), RTT: rtt}
	if lossText != "" {
		if p.Loss, err = units.ParsePercent(lossText); err != nil {
			return 0, emulator.Path{}, fmt.Errorf("--path %q: %w", v, err)
		}
	}
	return n, p, nil
}

// apply sets one flag's value on the network.
func (net *network) apply(name, value string) error {
	l := &net.Link
	switch name {
	case "rtt":
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("--rtt %q is not a duration: use a value such as 100ms", value)
		}
		if d < 0 || d > time.Minute {
			return fmt.Errorf("--rtt %v is outside 0 to 1m", d)
		}
		net.RTT = d
		l.Up.Delay = d / 2
		l.Down.Delay = d - d/2
	case "jitter":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 || d > 10*time.Second {
			return fmt.Errorf("--jitter %q is not a duration from 0 to 10s, such as 5ms", value)
		}
		l.Up.Jitter, l.Down.Jitter = d, d
	case "loss", "loss-down", "loss-up":
		if value == "" {
			return nil
		}
		p, err := units.ParsePercent(value)
		if err != nil {
			return fmt.Errorf("--%s %w", name, err)
		}
		if name != "loss-up" {
			l.Down.Loss, l.Down.GilbertElliott = p, nil
		}
		if name != "loss-down" {
			l.Up.Loss, l.Up.GilbertElliott = p, nil
		}
	case "gilbert":
		if value == "" {
			return nil
		}
		g, err := parseGilbert(value)
		if err != nil {
			return err
		}
		l.Up.Loss, l.Down.Loss = 0, 0
		up, down := g, g
		l.Up.GilbertElliott, l.Down.GilbertElliott = &up, &down
	case "down", "up":
		rate, err := parseRateFlag(name, value)
		if err != nil {
			return err
		}
		dir := &l.Down
		if name == "up" {
			dir = &l.Up
		}
		dir.RateBitsPerSecond, dir.Trace = rate, nil
	case "down-trace", "up-trace":
		if value == "" {
			return nil
		}
		tr, err := link.ReadTraceFile(value)
		if err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
		dir := &l.Down
		if name == "up-trace" {
			dir = &l.Up
		}
		dir.RateBitsPerSecond, dir.Trace = 0, tr
	case "queue":
		for _, dir := range []*link.Config{&l.Up, &l.Down} {
			if err := setQueue(dir, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseGilbert reads netem's "p,r[,1-h[,1-k]]" in percent.
func parseGilbert(value string) (link.GilbertElliott, error) {
	parts := strings.Split(value, ",")
	if len(parts) < 2 || len(parts) > 4 {
		return link.GilbertElliott{}, fmt.Errorf("--gilbert %q: give p,r[,1-h[,1-k]] in percent, such as 1,30 or 1,30,100,0", value)
	}
	vals := []float64{0, 0, 1, 0} // 1-h defaults to 100 %, 1-k to 0 %
	for i, s := range parts {
		v, err := units.ParsePercent(s)
		if err != nil {
			return link.GilbertElliott{}, fmt.Errorf("--gilbert %q: value %d: %w", value, i+1, err)
		}
		vals[i] = v
	}
	g := link.GilbertElliott{P: vals[0], R: vals[1], LossBad: vals[2], LossGood: vals[3]}
	if err := g.Validate(); err != nil {
		return g, fmt.Errorf("--gilbert %q: %w", value, err)
	}
	return g, nil
}

// setQueue sets a direction's queue from a flag value: bytes ("64KB"),
// packets ("100pkt"), a time at the direction's mean rate ("200ms"), or 0.
func setQueue(dir *link.Config, value string) error {
	dir.QueueBytes, dir.QueuePackets = 0, 0
	lower := strings.ToLower(strings.TrimSpace(value))
	switch {
	case lower == "0":
		return nil
	case strings.HasSuffix(lower, "pkt"):
		n, err := strconv.Atoi(strings.TrimSuffix(lower, "pkt"))
		if err != nil || n < 1 {
			return fmt.Errorf("--queue %q: give a whole number of packets, such as 100pkt", value)
		}
		dir.QueuePackets = n
	case strings.HasSuffix(lower, "s") && !strings.HasSuffix(lower, "b"):
		d, err := time.ParseDuration(lower)
		if err != nil || d < 0 {
			return fmt.Errorf("--queue %q is neither bytes (64KB), packets (100pkt) nor a non-negative time (200ms)", value)
		}
		if rate := dir.MeanRate(); rate > 0 {
			dir.QueueBytes = int64(math.Ceil(d.Seconds() * rate / 8))
		}
	default:
		b, err := units.ParseBytes(value)
		if err != nil {
			return fmt.Errorf("--queue %q is neither bytes (64KB), packets (100pkt) nor a time (200ms): %v", value, err)
		}
		dir.QueueBytes = b
	}
	return nil
}

// describe is the network in one line.
func (net *network) describe() string {
	var b strings.Builder
	if net.Preset != "" {
		fmt.Fprintf(&b, "net %s: ", net.Preset)
	}
	l := net.Link
	fmt.Fprintf(&b, "RTT %v (%v up, %v down)", net.RTT, l.Up.Delay, l.Down.Delay)
	if l.Up.Jitter > 0 {
		fmt.Fprintf(&b, " ± %v jitter", l.Up.Jitter)
	}
	fmt.Fprintf(&b, ", loss %s down, %s up, down %s, up %s, queue %s",
		lossText(l.Down), lossText(l.Up), rateText(l.Down), rateText(l.Up), queueText(net.queue, l))
	for _, p := range l.Paths {
		fmt.Fprintf(&b, "; to %s +%v RTT, +%s loss", p.Server, p.RTT, pct(p.Loss))
	}
	return b.String()
}

func lossText(c link.Config) string {
	if g := c.GilbertElliott; g != nil {
		return fmt.Sprintf("Gilbert-Elliott(p %s, r %s, 1-h %s, 1-k %s; mean %s)", pct(g.P), pct(g.R), pct(g.LossBad), pct(g.LossGood), pct(g.StationaryLoss()))
	}
	return pct(c.Loss)
}

func rateText(c link.Config) string {
	if c.Trace != nil {
		return fmt.Sprintf("trace %s (mean %s)", c.Trace.Name, rate(int64(c.Trace.MeanRate())))
	}
	return rate(c.RateBitsPerSecond)
}

func queueText(given string, l emulator.Config) string {
	switch {
	case given == "0":
		return "unlimited"
	case l.Down.QueuePackets > 0:
		return fmt.Sprintf("%d packets%s", l.Down.QueuePackets, discipline(l))
	}
	return fmt.Sprintf("%s (%d B down, %d B up)%s", given, l.Down.QueueBytes, l.Up.QueueBytes, discipline(l))
}

func discipline(l emulator.Config) string {
	if l.Down.DropHead {
		return ", drop-head"
	}
	return ""
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + "%" }
