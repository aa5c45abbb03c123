// Package presets names network conditions: the networks of the seed papers
// and the throttling profiles of WebPageTest, Browsertime and Chrome
// DevTools, each with its exact numbers and its source. Every preset states
// how its source's numbers were read, whether a delay is a round-trip time
// or one-way, and whether a loss rate is per direction or per round trip,
// because that ambiguity is how published comparisons went wrong.
package presets

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/link"
)

// Preset is a named network condition. Rates are the bottleneck rates of the
// emulator, delay is split evenly between the directions, and losses apply
// to each direction independently.
type Preset struct {
	Name string
	// Group is where the preset comes from: "Wolsing et al. 2019", "WebPageTest", ….
	Group string
	// RTT is the round-trip propagation delay the link adds.
	RTT time.Duration
	// DownBitsPerSecond and UpBitsPerSecond are the bottleneck rates in
	// bit/s; 0 means unlimited.
	DownBitsPerSecond, UpBitsPerSecond int64
	// LossDown and LossUp are per-direction loss probabilities (0 to 1).
	LossDown, LossUp float64
	// Queue bounds each direction's queue: QueueTime at that direction's
	// rate when set, else QueuePackets; both zero: unlimited.
	QueueTime    time.Duration
	QueuePackets int
	// Source cites the numbers: the paper's table or the tool's file and
	// version.
	Source string
	// Reading says how the source's numbers became these: what its delay
	// and loss mean.
	Reading string
}

// Directions returns the link configuration of p's uplink and downlink.
func (p Preset) Directions() (up, down link.Config) {
	upDelay := p.RTT / 2
	return direction(upDelay, p.LossUp, p.UpBitsPerSecond, p.QueueTime, p.QueuePackets),
		direction(p.RTT-upDelay, p.LossDown, p.DownBitsPerSecond, p.QueueTime, p.QueuePackets)
}

func direction(delay time.Duration, loss float64, rate int64, queueTime time.Duration, queuePackets int) link.Config {
	c := link.Config{Delay: delay, Loss: loss, RateBitsPerSecond: rate, QueuePackets: queuePackets}
	if queueTime > 0 && rate > 0 {
		c.QueueBytes = int64(math.Ceil(queueTime.Seconds() * float64(rate) / 8))
		c.QueuePackets = 0
	}
	return c
}

// QueueText describes the queue in words, such as "200ms" or "1000 packets".
func (p Preset) QueueText() string {
	switch {
	case p.QueueTime > 0:
		return p.QueueTime.String()
	case p.QueuePackets > 0:
		return fmt.Sprintf("%d packets", p.QueuePackets)
	}
	return "unlimited"
}

// perDirection is the per-direction loss q for a round-trip loss p, such
// that a request and its response both arrive with probability 1 − p:
// (1 − q)² = 1 − p.
func perDirection(roundTrip float64) float64 { return 1 - math.Sqrt(1-roundTrip) }

// netemDefaultQueue is netem's default limit in packets, used where a
// source sets a rate but no queue.
const netemDefaultQueue = 1000

const (
	noQueueNote  = " The source sets no queue; quicbench uses 1000 packets, netem's default limit."
	wolsingRead  = "Delay is the RTT (the paper splits it over both directions: 'both adding up to the desired minimum latency'). Loss is per round trip: each direction drops q with (1−q)² = 1 − p."
	wptRead      = "latency is the RTT (the label says 'ms RTT'); bwIn is down, bwOut is up; plr 0."
	devtoolsRead = "DevTools throttles requests, not packets: it adds latency × %v per request and scales throughput × %v. These are its packet-level targets (targetLatency as RTT, the commented rates), the values to use in a packet emulator."
	btRead       = "Browsertime's default ('new') profile; sitespeed.io/throttle applies rtt/2 each way, so the RTT is the profile's rtt, half of WebPageTest's for the same name."
)

// All lists every preset, grouped, in a stable order.
func All() []Preset {
	ms := time.Millisecond
	var all []Preset
	// Wolsing et al. 2019 (Table 2): Mahimahi, queue 200 ms except DSL 12 ms.
	for _, n := range []struct {
		name     string
		down, up int64
		rtt      time.Duration
		loss     float64
		queue    time.Duration
	}{
		{"dsl", 25_000_000, 5_000_000, 24 * ms, 0, 12 * ms},
		{"lte", 10_500_000, 2_800_000, 74 * ms, 0, 200 * ms},
		{"da2gc", 468_000, 468_000, 262 * ms, 0.033, 200 * ms},
		{"mss", 1_890_000, 1_890_000, 760 * ms, 0.06, 200 * ms},
	} {
		q := perDirection(n.loss)
		all = append(all, Preset{Name: "wolsing2019-" + n.name, Group: "Wolsing et al. 2019", RTT: n.rtt,
			DownBitsPerSecond: n.down, UpBitsPerSecond: n.up, LossDown: q, LossUp: q, QueueTime: n.queue,
			Source: "Wolsing et al. 2019, Table 2", Reading: wolsingRead})
	}
	// Biswal and Gnawali 2016 (§3.4): live cellular measurements.
	for _, n := range []struct {
		name string
		rate int64
		rtt  time.Duration
		loss float64
	}{
		{"india-2g", 170_000, 334 * ms, 0},
		{"india-3g", 7_780_000, 153 * ms, 0},
		{"us-3g", 3_540_000, 94 * ms, 0.00048},
		{"us-lte", 19_160_000, 32 * ms, 0},
	} {
		q := perDirection(n.loss)
		all = append(all, Preset{Name: "biswal2016-" + n.name, Group: "Biswal and Gnawali 2016", RTT: n.rtt,
			DownBitsPerSecond: n.rate, UpBitsPerSecond: n.rate, LossDown: q, LossUp: q, QueuePackets: netemDefaultQueue,
			Source:  "Biswal and Gnawali 2016, §3.4 (measured on live networks)",
			Reading: "The paper gives one 'data rate' and 'a delay' measured on a live network: quicbench reads the delay as a ping RTT, uses the rate in both directions, and reads the loss as per round trip." + noQueueNote})
	}
	// Nepomuceno et al. 2018 (Table II): RTT × loss, no rate limit.
	for _, rtt := range []int{20, 100, 200} {
		for _, loss := range []float64{0, 0.5, 1, 2} {
			all = append(all, Preset{Name: fmt.Sprintf("nepomuceno2018-rtt%d-loss%g", rtt, loss), Group: "Nepomuceno et al. 2018",
				RTT: time.Duration(rtt) * ms, LossDown: loss / 100, LossUp: loss / 100,
				Source:  "Nepomuceno et al. 2018, Table II",
				Reading: "RTT as given; the 'packet loss ratio' is applied to each direction, as Mahimahi's mm-loss does per direction. No rate limit, so no queue."})
		}
	}
	// WebPageTest, www/settings/connectivity.ini.sample.
	for _, n := range []struct {
		name     string
		down, up int64
		rtt      time.Duration
	}{
		{"cable", 5_000_000, 1_000_000, 28 * ms}, {"dsl", 1_500_000, 384_000, 50 * ms},
		{"fios", 20_000_000, 5_000_000, 4 * ms}, {"dial", 49_000, 30_000, 120 * ms},
		{"3g", 1_600_000, 768_000, 300 * ms}, {"3gfast", 1_600_000, 768_000, 150 * ms},
		{"3gslow", 780_000, 330_000, 200 * ms}, {"edge", 240_000, 200_000, 840 * ms},
		{"2g", 35_000, 32_000, 1300 * ms},
	} {
		all = append(all, Preset{Name: "wpt-" + n.name, Group: "WebPageTest", RTT: n.rtt,
			DownBitsPerSecond: n.down, UpBitsPerSecond: n.up, QueuePackets: netemDefaultQueue,
			Source:  "WebPageTest www/settings/connectivity.ini.sample (catchpoint/WebPageTest, commit 0c6c27a0)",
			Reading: wptRead + noQueueNote})
	}
	// Browsertime, lib/connectivity/trafficShapeParser.js (default profiles).
	for _, n := range []struct {
		name     string
		down, up int64
		rtt      time.Duration
	}{
		{"3g", 1_600_000, 768_000, 150 * ms}, {"3gfast", 1_600_000, 768_000, 75 * ms},
		{"3gslow", 400_000, 400_000, 200 * ms}, {"2g", 280_000, 256_000, 400 * ms},
		{"cable", 5_000_000, 1_000_000, 14 * ms}, {"dsl", 1_500_000, 384_000, 25 * ms},
		{"3gem", 400_000, 400_000, 200 * ms}, {"4g", 9_000_000, 9_000_000, 85 * ms},
		{"lte", 12_000_000, 12_000_000, 35 * ms}, {"edge", 240_000, 200_000, 420 * ms},
		{"dial", 49_000, 30_000, 60 * ms}, {"fois", 20_000_000, 5_000_000, 2 * ms},
	} {
		all = append(all, Preset{Name: "browsertime-" + n.name, Group: "Browsertime", RTT: n.rtt,
			DownBitsPerSecond: n.down, UpBitsPerSecond: n.up, QueuePackets: netemDefaultQueue,
			Source:  "Browsertime lib/connectivity/trafficShapeParser.js (sitespeedio/browsertime, commit 039141c3); throttle lib/tc.js (commit 0037ae72)",
			Reading: btRead + noQueueNote})
	}
	// Chrome DevTools, front_end/core/sdk/NetworkManager.ts.
	for _, n := range []struct {
		name, title     string
		down, up        int64
		rtt             time.Duration
		latencyX, rateX float64
	}{
		{"3g", "3G (was 'Slow 3G')", 500_000, 500_000, 400 * ms, 5, 0.8},
		{"slow-4g", "Slow 4G (was 'Fast 3G')", 1_600_000, 750_000, 150 * ms, 3.75, 0.9},
		{"fast-4g", "Fast 4G", 9_000_000, 1_500_000, 60 * ms, 2.75, 0.9},
	} {
		all = append(all, Preset{Name: "devtools-" + n.name, Group: "Chrome DevTools", RTT: n.rtt,
			DownBitsPerSecond: n.down, UpBitsPerSecond: n.up, QueuePackets: netemDefaultQueue,
			Source:  "Chrome DevTools front_end/core/sdk/NetworkManager.ts preset " + n.title + " (ChromeDevTools/devtools-frontend, commit 00d120bf)",
			Reading: fmt.Sprintf(devtoolsRead, n.latencyX, n.rateX) + noQueueNote})
	}
	return all
}

// Lookup returns the preset called name, or an error that lists the names.
func Lookup(name string) (Preset, error) {
	all := All()
	if i := slices.IndexFunc(all, func(p Preset) bool { return p.Name == name }); i >= 0 {
		return all[i], nil
	}
	// The papers' presets were named after their seed files until
	// 2026-11-24, and after the papers since.
	renamed := map[string]string{"seed000-": "nepomuceno2018-", "seed003-": "wolsing2019-", "seed004-": "biswal2016-"}
	for old, now := range renamed {
		if rest, ok := strings.CutPrefix(name, old); ok {
			return Preset{}, fmt.Errorf("network preset %q is now named %q, after its paper: use that name", name, now+rest)
		}
	}
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("unknown network preset %q: 'quicbench presets' lists them (%s, …)", name, strings.Join(names[:6], ", "))
}
