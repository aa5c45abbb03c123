package testbed

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/site"
)

// LiveConfig describes a cell whose page is a deployed site's: no
// servers, the emulated link and an uplink to the host's network.
type LiveConfig struct {
	// Stem names the namespaces, as Config.Stem.
	Stem string
	// Link is the emulated link.
	Link emulator.Config
	// Site is the live page's site (site.LiveSite): the hosts a load may
	// reach.
	Site *site.Site
	// Addrs are the addresses each of Site's hosts is pinned to, beyond
	// the host's namespace.
	Addrs map[string]netip.Addr
	// SPKIHash lists the keys, base64 SHA-256 and comma-separated, the
	// browser accepts whatever their chain (a staging server's leaf); CAFile
	// is the PEM file of a CA Firefox trusts. Both "" for public sites.
	SPKIHash, CAFile string
}

// StartLive builds a cell for a live page: the namespaces and the
// emulator as Start builds them, with no servers, and an uplink that
// carries what the client sends to the pinned addresses (Addrs) beyond
// the servers namespace to the host's network, and refuses the rest. On error it removes whatever it had created.
func StartLive(cfg LiveConfig) (_ *Testbed, err error) {
	if !cfg.Site.Live {
		return nil, errors.New("testbed: StartLive needs a live site")
	}
	for _, h := range cfg.Site.Hosts() {
		if !cfg.Addrs[h].IsValid() {
			return nil, fmt.Errorf("testbed: live host %s has no address", h)
		}
	}
	tb := &Testbed{Site: cfg.Site, Addrs: cfg.Addrs, Certs: &origin.Certs{SPKIHash: cfg.SPKIHash, CAFile: cfg.CAFile}}
	defer func() {
		if err != nil {
			err = errors.Join(err, tb.Close())
		}
	}()
	// one address in the servers namespace: netcheck's and calibration's
	if tb.Network, err = StartNetwork(cfg.Stem, cfg.Link, 1); err != nil {
		return nil, err
	}
	var pinned []netip.Addr
	for _, a := range cfg.Addrs {
		pinned = append(pinned, a)
	}
	if tb.uplink, err = tb.Topo.AddUplink(pinned); err != nil {
		return nil, fmt.Errorf("live testbed: %w", err)
	}
	return tb, nil
}
