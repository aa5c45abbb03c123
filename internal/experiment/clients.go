package experiment

import (
	"fmt"
	"math/rand/v2"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/loader"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/plan"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/spec"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Clients are the clients quicbench can load pages with, one line each: a
// new browser is a package with a Kind and a line here.
func Clients() []client.Kind {
	return []client.Kind{
		chromium.Kind(),
		chromium.ShellKind(),
		firefox.Kind(),
		loader.Kind(),
	}
}

// clientKind is the kind that implements c.
func clientKind(c factor.Client) (client.Kind, error) {
	for _, k := range Clients() {
		if k.Client == c {
			return k, nil
		}
	}
	return client.Kind{}, fmt.Errorf("no client implements %q: use %s", c, factor.Clients().Names())
}

// CheckClient says what is missing on this machine to load pages with c
// from binary (empty: its default), with how to get it.
func CheckClient(c factor.Client, binary string) error {
	k, err := clientKind(c)
	if err != nil {
		return err
	}
	return k.CheckInstalled(binary)
}

// CheckServers says what this machine lacks to serve every server stack
// and QUIC stack s asks for; nil if nothing.
func CheckServers(s *spec.Spec) error {
	for _, server := range s.LevelsOf(factor.IDServer) {
		for _, quic := range s.LevelsOf(factor.IDQUIC) {
			if err := testbed.CheckServers(factor.Server(server), factor.QUIC(quic)); err != nil {
				return err
			}
		}
	}
	return nil
}

// UplinkTablePrefix starts the names RemoveStale gives the uplinks'
// nftables tables it removed, beside the namespaces.
const UplinkTablePrefix = netns.UplinkTablePrefix

// RemoveStale removes what runs that were killed left behind: the
// clients' leftovers (browsers' temporary directories), the runs' work
// directories (browser profiles), the CPU
// accounting's cgroups and the namespaces, and lists them.
func RemoveStale() (dirs, namespaces []string, err error) {
	for _, k := range Clients() {
		if k.RemoveStale != nil {
			dirs = append(dirs, k.RemoveStale()...)
		}
	}
	dirs = append(dirs, cpuuse.RemoveStale()...)
	dirs = append(dirs, safefs.RemoveStaleWorkDirs()...)
	namespaces, err = netns.RemoveStale()
	return dirs, namespaces, err
}

// QUICProfiles lists the QUIC stacks of every server kind, for the
// listing of stacks.
func QUICProfiles() []stacks.QUICProfile { return testbed.QUICProfiles() }

// SeededLink is the emulator configuration of net with its directions
// seeded from seed as a run would seed them (0: a random seed, which it
// returns for the record).
func SeededLink(net *netconf.Network, seed uint64) (emulator.Config, uint64) {
	if seed == 0 {
		seed = rand.Uint64()>>1 | 1
	}
	up, down := plan.LinkSeeds(seed, net)
	return testbed.LinkOf(net, up, down), seed
}
