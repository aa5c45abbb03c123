package testbed

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/netconf"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/safefs"
)

// Network is the client and servers namespaces with the emulator running
// between them: a testbed without servers, for `quicbench shell` and checks.
type Network struct {
	Topo     *netns.Topology
	Emulator *emulator.Emulator
	// Link is the emulated link as configured (before the emulator's own
	// latency is taken off its delays).
	Link emulator.Config
}

// StartNetwork builds the namespaces "<stem>-client" and "<stem>-servers"
// with servers origin addresses, and runs the emulator with link between
// them. On error it removes what it created.
func StartNetwork(stem string, link emulator.Config, servers int) (*Network, error) {
	topo, err := netns.Build(stem, servers)
	if err != nil {
		return nil, err
	}
	emu, err := emulator.Start(topo.ClientTUN, topo.ServersTUN, link, emulator.DefaultOptions())
	if err != nil {
		return nil, errors.Join(err, topo.Close())
	}
	return &Network{Topo: topo, Emulator: emu, Link: link}, nil
}

// LinkOf is the emulator configuration of network n with the directions'
// seeds: a path towards server N leads to netns.ServerAddr(N).
func LinkOf(n *netconf.Network, upSeed, downSeed uint64) emulator.Config {
	c := emulator.Config{Up: n.Up, Down: n.Down, UDP: n.UDP}
	c.Up.Seed, c.Down.Seed = upSeed, downSeed
	for _, p := range n.Paths {
		c.Paths = append(c.Paths, emulator.Path{Server: netns.ServerAddr(p.Server), RTT: p.RTT, Loss: p.Loss})
	}
	return c
}

// StartCapture records the client side's packets to a new pcap file at
// path (never through a link) until stop is called.
func (n *Network) StartCapture(path string) (stop func() error, err error) {
	f, err := safefs.Create(filepath.Dir(path), filepath.Base(path), 0o644)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	w, err := pcap.NewWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	n.Emulator.SetCapture(w)
	return func() error {
		n.Emulator.SetCapture(nil)
		if err := errors.Join(w.Flush(), f.Close()); err != nil {
			return fmt.Errorf("capture %s: %w", path, err)
		}
		return nil
	}, nil
}

// Close stops the emulator, removes the devices and namespaces, and waits
// until forwarding has stopped. It is safe on a nil or partial Network.
func (n *Network) Close() error {
	if n == nil {
		return nil
	}
	if n.Emulator != nil {
		n.Emulator.Stop() // before the devices close: it polls their descriptors
	}
	var err error
	if n.Topo != nil {
		err = n.Topo.Close()
	}
	if n.Emulator != nil {
		n.Emulator.Wait()
	}
	return err
}
