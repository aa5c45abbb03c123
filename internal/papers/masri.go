package papers

import (
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// masri is seed 001: synthetic pages over QUIC and HTTP/2 in a netem lab.
func masri() Paper {
	const transport = "; congestion control: QUIC here quic-go's NewReno (initial window 32 × 1,280 B, paced), TCP here Linux CUBIC (initial window 10, unpaced), both measured on the wire; the paper's QUIC ran CUBIC (Google QUIC's default)"
	const differs = "h3 from quic-go and HTTP/2 from Go's net/http, not Google's QUIC toy server and OpenLiteSpeed; today's Chromium; " +
		"the emulator shapes each direction once with the paper's halved numbers (it shaped twice per exchange): the RTT split over both directions, 2 % loss as 1 % each way, 2 % per round trip as its ping saw it" + transport
	h2h3 := protocols("h2", "h3")
	lossReason := &Explanation{
		Says: "§4.1 on Figure 10: as loss was introduced, \"because of QUIC's built in Forward Error Correction, it began to perform better than TCP immediately\"; on Figure 11, QUIC outperforms TCP \"as TCPs head of line blocking occurs\"", Part: results.PartLoss, HeadOfLine: true,
		Caveat: "IETF QUIC has no forward error correction, so that half of the reason has nothing to measure; loss recovery is read with two instruments, over TCP from the link's packets (a connection's bytes standing still for a lost segment), over QUIC from quic-go's own loss records (a stream waiting for lost data to be sent again)",
	}
	small := []string{"synthetic:2x100B", "synthetic:64x100B", "synthetic:128x100B"}
	larger := []string{"synthetic:64x1KB", "synthetic:64x10KB", "synthetic:2x300KB"}
	return Paper{
		ID:       "masri",
		Authors:  "Carl Masri, Kjalén Hansen, Jakob Roberts",
		YearFrom: "no year: its title page gives none, none of the other four papers cites it, and its own references run to 2017",
		Title:    "A Comparison of Network Protocols: TCP vs QUIC",
		Seed:     "001_cc7e49e556c9610b.txt",
		Setup:    "Google's QUIC toy server (proto-quic) and OpenLiteSpeed for HTTP/2 over TLS; Chrome with its cache disabled; netem on a separate shaping machine; PLT from HARs; the mean of 30 loads",
		Metric:   "onload",
		Specs:    map[Scale][]string{Quick: {"masri-quick.yaml"}, Full: {"masri.yaml"}},
		Claims: []Claim{{
			ID: "C1", Text: "Without loss at 5 ms, HTTP/2 loads pages of 100 B objects faster than QUIC",
			Source: "§4.1, Figure 10, Fig. 11", Figure: "2.05",
			Reported: "QUIC/TCP 2.71, 2.40 and 1.33 for 128, 64 and 2 objects of 100 B (geometric mean 2.05)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt5ms-loss0"}, factor.IDPage: small},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 2.05, Region: Above(1), Differs: differs,
		}, {
			ID: "C2", Text: "With 2 % loss at 100 ms, QUIC is faster for objects of 1 KB and more",
			Source: "§4.1, Figure 10, Fig. 12", Figure: "0.57",
			Reported: "QUIC/TCP 0.49–0.77 on all nine pages of 1 KB to 300 KB objects (geometric mean 0.57)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt100ms-loss2"}, factor.IDPage: larger},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 0.57, Region: Below(1), Differs: differs,
		}, {
			ID: "C3", Text: "With 2 % loss, QUIC loads pages of 300 KB objects almost twice as fast",
			Source: "§4.1, Figure 10, Fig. 12–13", Figure: "0.52",
			Reported: "QUIC/TCP 0.50, 0.54, 0.53 at 100 ms and 0.55, 0.47, 0.52 at 200 ms for 128, 64 and 2 objects of 300 KB",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt100ms-loss2", "rtt200ms-loss2"}, factor.IDPage: {"synthetic:2x300KB"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 0.52, Region: Within(0.4, 0.65),
			Differs: differs + "; \"almost twice\" read as 0.40–0.65; the pages of 64 and 128 such objects take minutes over TCP at 2 % loss here and are left out",
		}, {
			ID: "C4", Text: "With 2 % loss at 100 ms, TCP is still faster on most pages of 100 B objects",
			Source: "§4.1, Figure 10, Fig. 12", Figure: "1.26",
			Reported: "QUIC/TCP 1.82, 1.36 and 0.81 for 128, 64 and 2 objects of 100 B (geometric mean 1.26)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt100ms-loss2"}, factor.IDPage: small},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1.26, Region: Above(1), Differs: differs,
		}, {
			ID: "C5", Text: "Adding loss turns the comparison towards QUIC",
			Source: "§4, §5, Figure 10", Figure: "0.55",
			Reported: "QUIC/TCP geometric mean over its 12 pages 1.25 without loss at 5 ms and 0.70 with 2 % loss at 100 ms; \"QUIC ends up being faster in all scenarios where there is an induced packet loss\"",
			Metric:   "onload", Location: Mean,
			Stat:       Stat{Kind: Interaction, Vary: h2h3, By: networks("rtt100ms-loss0", "rtt100ms-loss2")},
			PaperValue: 0.55, Region: Below(1),
			Differs: differs + "; the paper's contrast changes the RTT with the loss (it shows no row without loss at 100 ms), ours holds the RTT at 100 ms",
		}, {
			ID: "C6", Text: "With 2 % loss at 200 ms, QUIC is much faster for objects of 1 KB and more",
			Source: "§4.1, Figure 10, Fig. 13", Figure: "0.57",
			Reported: "QUIC/TCP 0.47–0.89 on all nine pages of 1 KB to 300 KB objects (geometric mean 0.57)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt200ms-loss2"}, factor.IDPage: larger},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 0.57, Region: Below(1), Differs: differs,
			Explains: lossReason,
		}, {
			ID: "C7", Text: "With 2 % loss at 200 ms, TCP is still faster on most pages of 100 B objects",
			Source: "§4.1, Figure 10, Fig. 13", Figure: "1.49",
			Reported: "QUIC/TCP 2.49, 2.03 and 0.65 for 128, 64 and 2 objects of 100 B (geometric mean 1.49)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt200ms-loss2"}, factor.IDPage: small},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1.49, Region: Above(1), Differs: differs,
		}, {
			ID: "C8", Text: "QUIC is faster wherever there is induced loss",
			Source: "§5, Figure 10", Figure: "20 of 24 (83 %)",
			Reported: "\"QUIC ends up being faster in all scenarios where there is an induced packet loss during transmission\"; its Figure 10 shows QUIC faster on 10 of 12 pages at 100 ms and at 200 ms with 2 % loss (all but 128 and 64 objects of 100 B)",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt5ms-loss2", "rtt100ms-loss2", "rtt200ms-loss2"}},
			Stat:  Stat{Kind: Share, Vary: h2h3}, PaperValue: 0.83, PaperN: 12, PaperUnit: "pages", Region: Above(0.5),
			PaperScaleOnly: "its quick scale's 6 pages hold three of 100 B objects, and the paper's own Figure 10 has QUIC losing on two of them at 100 and at 200 ms: 8 of its 12 lossy settings won, a share that cannot leave half; the paper's 12 pages can",
			Differs:        differs + "; the share of pages and lossy networks where QUIC's mean is lower; \"all scenarios\" read as over half: the paper's own Figure 10 has four exceptions, and its 20 of 24 settings are 12 pages in two networks each, so that counted as the 12 pages they are (10 of 12) its 95 % interval is 52–98 %",
			Explains:       lossReason,
		}, {
			ID: "C9", Text: "QUIC does reasonably well on small pages of a few small objects",
			Source: "§5, Figure 10", Figure: "≤ 1 (0.81 with 2 % loss at 100 ms)",
			Reported: "\"It manages to perform reasonably well when the pages to load are small and consist of a few small objects, but fails when there are a large quantity of small objects\"",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDPage: {"synthetic:2x100B"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1.1),
			Differs: differs + "; \"reasonably well\" read as at most 10 % slower than TCP, over every network of the scale",
		}, {
			ID: "C10", Text: "Without loss at 5 ms, TCP is faster over the grid's pages",
			Source: "§4.1, Figure 10, Fig. 11", Figure: "1.25",
			Reported: "Figure 10's row without loss at 5 ms: QUIC/TCP geometric mean 1.25 over its 12 pages, TCP faster on 7 of them; \"In the 100bytes category QUIC fails to be faster than all of the TCP attempts, but starts to catch up in the 1kb testing\"",
			Metric:   "onload", Location: Mean,
			Cells: Cells{factor.IDNetwork: {"rtt5ms-loss0"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1.25, Region: Above(1),
			Differs: differs + "; the geometric mean over every page of the scale (6 at quick scale, the paper's 12 at paper scale), where the paper's count of pages (7 of 12 for TCP) cannot tell \"most\" from chance",
		}},
		Gaps: []Gap{
			{"the uncontrolled experiment: pages on Google Sites loaded over home WiFi (§3.2, Figure 14, Fig. 15–20)", "Google's production servers over the Internet are neither ours to run nor an emulated network"},
			{"Google QUIC's forward error correction, to which the paper credits QUIC's robustness to loss", "IETF QUIC has no FEC; quicbench's h3 servers recover by retransmission"},
		},
	}
}
