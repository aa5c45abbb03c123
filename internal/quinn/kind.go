// Package quinn declares quicbench-h3 (servers/h3: quinn with h3 and
// rustls), quicbench's second HTTP/3 server, independent of quic-go, as a
// testbed's server stack for h3, with a congestion controller chosen per
// testbed (CUBIC, NewReno or BBR) and an explicit initial window; package
// h3server runs it.
package quinn

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/h3server"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// DatagramSize is quinn's datagram size at a connection's start, in bytes;
// quicbench-h3's initial window is h3server.DefaultInitialWindow of them.
const DatagramSize = 1200

// Kind is quicbench-h3 as a testbed's server stack for h3 (QUIC server
// quinn): its own process, on copies of the UDP sockets the testbed binds.
func Kind() server.Kind {
	return server.Kind{Name: "quinn", QUIC: factor.QUICQuinn, Files: true, OwnProcess: true,
		Check: func() error { _, err := h3server.FindBinary(h3server.BinaryQuinn); return err },
		Start: h3server.Starter(h3server.BinaryQuinn, factor.QUICQuinn), Profiles: profiles}
}

// profiles describes quicbench-h3's QUIC stacks, one per controller.
// quinn's windows are what quicbench-h3 sets (32 packets of quinn's
// 1,200-byte starting datagram; it reports them when it starts, and
// testbeds record that report); its pacing is built into quinn and cannot
// be switched off; its CUBIC has no HyStart.
func profiles() []stacks.QUICProfile {
	var out []stacks.QUICProfile
	for _, cc := range factor.QUICQuinn.Controllers() {
		q, _ := factor.QUICOf(factor.QUICQuinn, cc)
		p := stacks.QUICProfile{Name: q, Server: "quinn 0.11 with h3 0.0.8 and rustls 0.23 (quicbench-h3, its own process)",
			Transport: stacks.QUICTransport{Congestion: string(cc), InitialWindowBytes: h3server.DefaultInitialWindow * DatagramSize, Pacing: true},
			Source:    "quicbench-h3 sets the controller and initial_window(32 × 1,200 B) in quinn 0.11 (servers/h3) and reports them at start; quinn always paces"}
		p.Limits = []string{"quinn paces 1.25 × the window per RTT in slow start too (quic-go and Linux TCP: 2×), so a window after an idle spell leaves over a whole RTT: 1.2 × h2 at 100 KB on an open connection (BENCHMARKS.md)"}
		if cc == factor.CCBBR {
			p.Limits = append(p.Limits, "quinn's BBR is a port of Google quiche's BBR (version 1) sender, the BBR of Wolsing et al. 2019's Google QUIC; it enters a 200 ms ProbeRTT at a connection's first ACK that is not app-limited")
		}
		out = append(out, p)
	}
	return out
}
