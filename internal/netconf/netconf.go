// Package netconf turns the description of an emulated network in text (a
// preset, the values of the network flags of compare, shell and netcheck,
// or a network of a spec file) into the emulator's configuration, and
// describes a network in one line. Keys and error messages use the flag
// names, so that one vocabulary serves the command line and spec files.
//
// It is the network part of quicbench's vocabulary (package factor holds
// the rest): pure, importing no runtime package. Paths name servers by
// number; the testbed maps numbers to addresses.
package netconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/presets"
	"github.com/quicbench/quicbench/internal/units"
)

// Keys are the settings of a network, in the order they apply (queue
// last: a queue in time depends on the rates).
var Keys = []string{"rtt", "jitter", "loss", "loss-down", "loss-up", "gilbert", "down", "up", "down-trace", "up-trace", "udp", "queue"}

// Description is a network in text.
type Description struct {
	// Name names the network; "": DefaultName.
	Name string
	// Preset names a preset (presets.Lookup) that is the base; "" for none.
	Preset string
	// Values maps keys of Keys to values, such as "rtt" → "100ms". With a
	// preset, only these change it; without one, a key that is missing
	// takes its value from Resolve's defaults.
	Values map[string]string
	// DropHead makes full queues drop their oldest packet.
	DropHead bool
	// Paths are per-server paths, each "N=RTT[,LOSS%]".
	Paths []string
}

// DefaultName names a network by its preset and the values given, such
// as "biswal2016-us-3g", "wolsing2019-lte-loss2" or "rtt100ms-loss1-down10mbit";
// empty values are left out, and a network of none is "unshaped".
func (d Description) DefaultName() string {
	var parts []string
	if d.Preset != "" {
		parts = append(parts, d.Preset)
	}
	for _, key := range Keys {
		if v := strings.ReplaceAll(d.Values[key], " ", ""); v != "" {
			parts = append(parts, strings.ReplaceAll(key, "-", "")+v)
		}
	}
	if d.DropHead {
		parts = append(parts, "drophead")
	}
	for _, p := range d.Paths {
		parts = append(parts, "path"+strings.NewReplacer("=", "-", ",", "-").Replace(p))
	}
	if len(parts) == 0 {
		return "unshaped"
	}
	return strings.Join(parts, "-")
}

// Network is a resolved network: one level of the network factor.
type Network struct {
	// Name identifies the network in results and reports (see Name).
	Name string
	// Preset is the preset's name, or "" for one made of values.
	Preset string
	// RTT is the round-trip delay the link adds.
	RTT time.Duration
	// Up is the direction client → servers, Down servers → client. Their
	// seeds are zero: a run derives them from its own seed.
	Up, Down link.Config
	// Paths add delay and loss towards some servers, beyond the shared
	// link, in the order given.
	Paths []Path
	// UDP is what the network does to UDP (QUIC): pass (the zero value),
	// block, or throttle.
	UDP link.UDPPolicy
	// Description is the network as given, so that it can be written back
	// to a spec file.
	Description Description
	// queue is the queue as given, for descriptions.
	queue string
}

// Path is the extra way between the shared link and one server: a server
// farther away, or behind a lossier network.
type Path struct {
	// Server is the server's number, from 1 (origin N is server N).
	Server int `json:"server"`
	// RTT is the extra round-trip delay, split evenly between directions.
	RTT time.Duration `json:"rtt_ns"`
	// Loss is the extra loss probability in each direction, 0 to 1.
	Loss float64 `json:"loss"`
}

// Resolve builds the network of d; without a preset, keys missing from
// d.Values take defaults[key] (a key in neither is left at zero).
func Resolve(d Description, defaults map[string]string) (*Network, error) {
	if d.Name == "" {
		d.Name = d.DefaultName()
	}
	if len(d.Values) == 0 {
		d.Values = nil
	}
	net := &Network{Description: d, Name: d.Name}
	if d.Preset != "" {
		p, err := presets.Lookup(d.Preset)
		if err != nil {
			return nil, fmt.Errorf("--net: %w", err)
		}
		net.Preset, net.RTT = p.Name, p.RTT
		net.Up, net.Down = p.Directions()
		net.queue = "0"
		switch {
		case p.QueueTime > 0:
			net.queue = p.QueueTime.String()
		case p.QueuePackets > 0:
			net.queue = strconv.Itoa(p.QueuePackets) + "pkt"
		}
	}
	for key := range d.Values {
		if !validKey(key) {
			return nil, fmt.Errorf("network setting %q is unknown: use %s", key, strings.Join(Keys, ", "))
		}
	}
	for _, name := range Keys {
		value, given := d.Values[name]
		if !given && d.Preset == "" {
			value, given = defaults[name]
		}
		switch {
		case name == "queue" && given:
			net.queue = value
		case name == "queue" && d.Preset != "":
			value = net.queue // the preset's, recomputed at the final rates
		case !given:
			continue
		}
		if err := net.apply(name, value); err != nil {
			return nil, err
		}
	}
	if d.DropHead {
		net.Up.DropHead, net.Down.DropHead = true, true
	}
	var err error
	if net.Paths, err = parsePaths(d.Paths); err != nil {
		return nil, err
	}
	if err := errors.Join(net.Up.Validate(), net.Down.Validate()); err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	return net, nil
}

// parsePaths reads the --path values, at most one per server.
func parsePaths(values []string) ([]Path, error) {
	var out []Path
	for _, v := range values {
		p, err := parsePath(v)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(q Path) bool { return q.Server == p.Server }) {
			return nil, fmt.Errorf("--path %q: server %d has a path already", v, p.Server)
		}
		out = append(out, p)
	}
	return out, nil
}

// Key is the network's content as text, its name left out: the same
// values give the same key, so a run derives the same loss decisions for
// them whatever the network is called.
func (net *Network) Key() string {
	b, err := json.Marshal(struct {
		RTT      time.Duration
		Up, Down link.Config
		Paths    []Path
		UDP      link.UDPPolicy `json:",omitzero"` // left out when it passes: earlier keys stay
	}{net.RTT, net.Up, net.Down, net.Paths, net.UDP})
	if err != nil { // only plain values: cannot fail
		panic(fmt.Sprintf("netconf: key: %v", err))
	}
	return string(b)
}

func validKey(k string) bool {
	for _, key := range Keys {
		if k == key {
			return true
		}
	}
	return false
}

// CheckServers returns an error if a path names a server beyond count.
func (net *Network) CheckServers(count int) error {
	for _, p := range net.Paths {
		if p.Server > count {
			return fmt.Errorf("--path names server %d, but there are %d servers", p.Server, count)
		}
	}
	return nil
}

// parsePath reads "N=RTT[,LOSS%]".
func parsePath(v string) (Path, error) {
	const usage = "give N=RTT[,LOSS%], such as 2=40ms,0.5"
	numText, rest, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(numText)
	if !ok || err != nil || n < 1 || n > factor.MaxServers {
		return Path{}, fmt.Errorf("--path %q: %s, with N a server number from 1 to %d", v, usage, factor.MaxServers)
	}
	rttText, lossText, _ := strings.Cut(rest, ",")
	rtt, err := time.ParseDuration(rttText)
	if err != nil || rtt < 0 || rtt > time.Minute {
		return Path{}, fmt.Errorf("--path %q: %q is not a duration from 0 to 1m: %s", v, rttText, usage)
	}
	p := Path{Server: n, RTT: rtt}
	if lossText != "" {
		if p.Loss, err = lossOf(lossText); err != nil {
			return Path{}, fmt.Errorf("--path %q: %w", v, err)
		}
	}
	return p, nil
}

// lossOf parses a random loss rate in percent: from 0 up to, not
// including, 100 (a link that loses every packet carries no page).
func lossOf(text string) (float64, error) {
	p, err := units.ParsePercent(text)
	if err == nil && p >= 1 {
		err = fmt.Errorf("%s: loss 100%% lets no packet through: give less than 100", text)
	}
	return p, err
}

// apply sets one flag's value on the network.
func (net *Network) apply(name, value string) error {
	switch name {
	case "rtt":
		return net.setRTT(value)
	case "jitter":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 || d > 10*time.Second {
			return fmt.Errorf("--jitter %q is not a duration from 0 to 10s, such as 5ms", value)
		}
		net.Up.Jitter, net.Down.Jitter = d, d
	case "loss", "loss-down", "loss-up":
		return net.setLoss(name, value)
	case "gilbert":
		return net.setGilbert(value)
	case "down", "up":
		rate, err := parseRate(name, value)
		if err != nil {
			return err
		}
		dir := net.direction(name == "up")
		dir.RateBitsPerSecond, dir.Trace = rate, nil
	case "down-trace", "up-trace":
		return net.setTrace(name, value)
	case "udp":
		p, err := link.ParseUDPPolicy(value)
		if err != nil {
			return err
		}
		net.UDP = p
	case "queue":
		for _, dir := range []*link.Config{&net.Up, &net.Down} {
			if err := setQueue(dir, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// direction is the link's uplink if up, else its downlink.
func (net *Network) direction(up bool) *link.Config {
	if up {
		return &net.Up
	}
	return &net.Down
}

// setRTT sets --rtt: the round trip's delay, half each way.
func (net *Network) setRTT(value string) error {
	d, err := time.ParseDuration(value)
	if err != nil {
		return fmt.Errorf("--rtt %q is not a duration: use a value such as 100ms", value)
	}
	if d < 0 || d > time.Minute {
		return fmt.Errorf("--rtt %v is outside 0 to 1m", d)
	}
	net.RTT = d
	net.Up.Delay = d / 2
	net.Down.Delay = d - d/2
	return nil
}

// setLoss sets --loss (both ways), --loss-down or --loss-up: a random
// loss rate in percent, in place of a Gilbert-Elliott model; "" keeps it.
func (net *Network) setLoss(name, value string) error {
	if value == "" {
		return nil
	}
	p, err := lossOf(value)
	if err != nil {
		return fmt.Errorf("--%s %w", name, err)
	}
	if name != "loss-up" {
		net.Down.Loss, net.Down.GilbertElliott = p, nil
	}
	if name != "loss-down" {
		net.Up.Loss, net.Up.GilbertElliott = p, nil
	}
	return nil
}

// setGilbert sets --gilbert: a Gilbert-Elliott loss model both ways, in
// place of random loss; "" keeps the loss as it is.
func (net *Network) setGilbert(value string) error {
	if value == "" {
		return nil
	}
	g, err := parseGilbert(value)
	if err != nil {
		return err
	}
	net.Up.Loss, net.Down.Loss = 0, 0
	up, down := g, g
	net.Up.GilbertElliott, net.Down.GilbertElliott = &up, &down
	return nil
}

// setTrace sets --down-trace or --up-trace: a Mahimahi trace file's
// delivery opportunities in place of a fixed rate; "" keeps the rate.
func (net *Network) setTrace(name, value string) error {
	if value == "" {
		return nil
	}
	tr, err := link.ReadTraceFile(value)
	if err != nil {
		return fmt.Errorf("--%s: %w", name, err)
	}
	dir := net.direction(name == "up-trace")
	dir.RateBitsPerSecond, dir.Trace = 0, tr
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
	case strings.Trim(lower, "0123456789.") == "":
		return fmt.Errorf("--queue %q has no unit: give bytes (64KB), packets (100pkt) or a time (200ms)", value)
	default:
		b, err := units.ParseBytes(value)
		if err != nil {
			return fmt.Errorf("--queue %q is neither bytes (64KB), packets (100pkt) nor a time (200ms): %v", value, err)
		}
		dir.QueueBytes = b
	}
	return nil
}

// Describe is the network in one line.
func (net *Network) Describe() string {
	var b strings.Builder
	if net.Preset != "" {
		fmt.Fprintf(&b, "net %s: ", net.Preset)
	}
	l := net
	fmt.Fprintf(&b, "RTT %v (%v up, %v down)", net.RTT, l.Up.Delay, l.Down.Delay)
	if l.Up.Jitter > 0 {
		fmt.Fprintf(&b, " ± %v jitter", l.Up.Jitter)
	}
	fmt.Fprintf(&b, ", loss %s down, %s up, down %s, up %s, queue %s",
		lossText(l.Down), lossText(l.Up), rateText(l.Down), rateText(l.Up), queueText(net.queue, l))
	for _, p := range l.Paths {
		fmt.Fprintf(&b, "; to server %d +%v RTT, +%s loss", p.Server, p.RTT, Percent(p.Loss))
	}
	if !net.UDP.Passes() {
		fmt.Fprintf(&b, "; UDP %s", udpWords(net.UDP))
	}
	return b.String()
}

// udpWords says what policy p does to UDP: "blocked", "blocked after
// the first 20 packets of each flow", "policed to 1 Mbit/s".
func udpWords(p link.UDPPolicy) string {
	switch {
	case p.Block && p.After > 0:
		return fmt.Sprintf("blocked after the first %d packets of each flow", p.After)
	case p.Block:
		return "blocked"
	}
	return "policed to " + Rate(p.RateBitsPerSecond)
}

func lossText(c link.Config) string {
	if g := c.GilbertElliott; g != nil {
		return fmt.Sprintf("Gilbert-Elliott(p %s, r %s, 1-h %s, 1-k %s; mean %s)", Percent(g.P), Percent(g.R), Percent(g.LossBad), Percent(g.LossGood), Percent(g.StationaryLoss()))
	}
	return Percent(c.Loss)
}

func rateText(c link.Config) string {
	if c.Trace != nil {
		return fmt.Sprintf("trace %s (mean %s)", c.Trace.Name, Rate(int64(c.Trace.MeanRate())))
	}
	return Rate(c.RateBitsPerSecond)
}

func queueText(given string, l *Network) string {
	switch {
	case given == "0":
		return "unlimited"
	case l.Down.QueuePackets > 0:
		return fmt.Sprintf("%d packets%s", l.Down.QueuePackets, discipline(l))
	}
	return fmt.Sprintf("%s (%d B down, %d B up)%s", given, l.Down.QueueBytes, l.Up.QueueBytes, discipline(l))
}

func discipline(l *Network) string {
	if l.Down.DropHead {
		return ", drop-head"
	}
	return ""
}

// Percent formats a fraction as a percentage with 4 significant digits.
func Percent(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + "%" }

func parseRate(name, value string) (int64, error) {
	if strings.EqualFold(value, "unlimited") || strings.TrimSpace(value) == "0" {
		return 0, nil
	}
	r, err := units.ParseRate(value)
	if err != nil {
		return 0, fmt.Errorf("--%s %w", name, err)
	}
	if r < MinRate {
		return 0, fmt.Errorf("--%s %s is below %s: a 1500-byte packet would take more than 1.5 s; use a rate of at least 8kbit, or unlimited", name, value, Rate(MinRate))
	}
	return r, nil
}

// MinRate is the lowest rate a link may have, in bit/s.
const MinRate = 8000

// Rate formats a rate in bit/s, such as "10 Mbit/s"; 0 is "unlimited".
func Rate(bps int64) string {
	switch {
	case bps == 0:
		return "unlimited"
	case bps%1_000_000_000 == 0:
		return fmt.Sprintf("%d Gbit/s", bps/1e9)
	case bps >= 1_000_000:
		return strconv.FormatFloat(float64(bps)/1e6, 'g', -1, 64) + " Mbit/s"
	case bps >= 1000:
		return strconv.FormatFloat(float64(bps)/1e3, 'g', -1, 64) + " kbit/s"
	}
	return fmt.Sprintf("%d bit/s", bps)
}
