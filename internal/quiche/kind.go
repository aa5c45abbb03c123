// Package quiche declares quicbench-quiche (servers/quiche: Cloudflare's
// quiche with BoringSSL), the HTTP/3 server library behind much of the
// web's HTTP/3, as a testbed's server stack for h3, with its CUBIC, Reno
// or BBRv2 chosen per testbed and the initial window, pacing and HyStart++
// set explicitly; package h3server runs it.
package quiche

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/h3server"
	"github.com/quicbench/quicbench/internal/server"
	"github.com/quicbench/quicbench/internal/stacks"
)

// DatagramSize is the largest UDP payload quicbench-quiche sends, in
// bytes (quiche's examples' 1,350); its initial window is
// h3server.DefaultInitialWindow of them.
const DatagramSize = 1350

// Kind is quicbench-quiche as a testbed's server stack for h3 (QUIC server
// quiche): its own process, on copies of the UDP sockets the testbed binds.
func Kind() server.Kind {
	return server.Kind{Name: "quiche", QUIC: factor.QUICQuiche, Files: true, OwnProcess: true,
		Check: func() error { _, err := h3server.FindBinary(h3server.BinaryQuiche); return err },
		Start: h3server.Starter(h3server.BinaryQuiche, factor.QUICQuiche), Profiles: profiles}
}

// profiles describes quicbench-quiche's QUIC stacks, one per controller:
// what the server sets (it reports the same at start, and testbeds record
// that report).
func profiles() []stacks.QUICProfile {
	var out []stacks.QUICProfile
	for _, cc := range factor.QUICQuiche.Controllers() {
		q, _ := factor.QUICOf(factor.QUICQuiche, cc)
		p := stacks.QUICProfile{Name: q, Server: "quiche 0.30 with BoringSSL (quicbench-quiche, its own process)",
			Transport: stacks.QUICTransport{Congestion: string(cc), InitialWindowBytes: h3server.DefaultInitialWindow * DatagramSize, Pacing: cc == factor.CCBBR2, HyStart: cc != factor.CCBBR2},
			Source: "quicbench-quiche sets set_cc_algorithm_name, set_initial_congestion_window_packets(32) of 1,350 B, enable_pacing(true) and enable_hystart(true) in quiche 0.30 (servers/quiche) and reports them at start; " +
				"it sends each packet at quiche's pacing time to within 1 ms"}
		if cc == factor.CCBBR2 {
			p.Limits = []string{"quiche's bbr2 is its gcongestion sender, a port of Google QUICHE's BBRv2, which has its own startup (HyStart++ is CUBIC's and Reno's)"}
		} else {
			p.Limits = []string{"quiche 0.30 paces only its BBRv2: with CUBIC and Reno every packet's send time is now (its legacy recovery has no pacer), so the congestion window leaves in bursts"}
		}
		out = append(out, p)
	}
	return out
}
