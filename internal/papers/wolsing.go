package papers

import "github.com/quicbench/quicbench/internal/factor"

// wolsing2019 is seed 003: tuned TCP stacks against QUIC on four networks,
// by visual metrics.
func wolsing2019() Paper {
	const (
		differs = "Go's net/http for NGINX (TCP, TCP+, TCP+BBR as the paper tunes them) and Cloudflare's quiche for Google's QUIC server (gQUIC 43); today's Chromium; generated web2024 pages for the 38 recorded sites"
		dsl     = "wolsing2019-dsl"
		lte     = "wolsing2019-lte"
		mss     = "wolsing2019-mss"
	)
	h2h3 := protocols("h2", "h3")
	tcpPlus := Cells{factor.IDStack: {"tcp+"}, factor.IDQUIC: {"quiche+cubic"}}
	withNetworks := func(c Cells, nets ...string) Cells {
		out := Cells{factor.IDNetwork: nets}
		for id, l := range c {
			out[id] = l
		}
		return out
	}
	return Paper{
		ID:       "wolsing2019",
		Authors:  "Konrad Wolsing, Jan Rüth, Klaus Wehrle, Oliver Hohlfeld",
		Year:     2019,
		YearFrom: "its title page",
		Title:    "A Performance Perspective on Web Optimized Protocol Stacks: TCP+TLS+HTTP/2 vs. QUIC",
		Venue:    "ANRW '19: Applied Networking Research Workshop",
		Seed:     "003_71c8ef9baaf64d54.txt",
		Setup:    "38 websites recorded with mitmproxy and replayed in Mahimahi; Google's QUIC server (QUIC 43) and NGINX (TLS 1.3, HTTP/2); Chromium 70 under Browsertime, a fresh browser and a video per run; 31 runs; ANOVA at p < 0.01",
		Metric:   "si",
		Specs:    map[Scale][]string{Quick: {"wolsing2019-quick.yaml", "wolsing2019-mss-quick.yaml"}, Full: {"wolsing2019.yaml"}},
		Claims: []Claim{{
			ID: "C1", Text: "On DSL, QUIC is faster than tuned TCP (TCP+) by Speed Index",
			Source: "§4, Fig. 3", Figure: "0.91",
			Reported: "performance gain of QUIC against TCP+ −0.09 (mean Speed Index, averaged over 38 sites); −87.1 ms",
			Metric:   "si", Location: Mean, Cells: withNetworks(tcpPlus, dsl),
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Alpha: 0.01, Differs: differs,
		}, {
			ID: "C2", Text: "On LTE, QUIC is faster than TCP+ by Speed Index",
			Source: "§4, Fig. 3", Figure: "0.86",
			Reported: "performance gain of QUIC against TCP+ −0.14; −215.9 ms",
			Metric:   "si", Location: Mean, Cells: withNetworks(tcpPlus, lte),
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Alpha: 0.01, Differs: differs,
		}, {
			ID: "C3", Text: "Tuning TCP (IW32, pacing, no slow start after idle, buffers) makes it faster than stock TCP on DSL and LTE",
			Source: "§4, Fig. 3", Figure: "0.93",
			Reported: "performance gain of TCP+ against TCP −0.05 (DSL) and −0.08 (LTE); for PLT on DSL 25 of 38 sites significantly faster, 1 slower",
			Metric:   "si", Location: Mean,
			Cells: Cells{factor.IDNetwork: {dsl, lte}, factor.IDProtocol: {"h2"}, factor.IDQUIC: {"quiche+cubic"}},
			Stat:  Stat{Kind: Ratio, Vary: stacks("tcp", "tcp+")}, Region: Below(1), Alpha: 0.01, Differs: differs,
		}, {
			ID: "C4", Text: "On DSL and LTE the congestion control makes no difference to TCP+",
			Source: "§4, Fig. 3", Figure: "≈ 1",
			Reported: "against stock TCP: TCP+ −0.05 and −0.08, TCP+BBR −0.05 and −0.09 (DSL, LTE); for most sites no significant difference",
			Metric:   "si", Location: Mean,
			Cells: Cells{factor.IDNetwork: {dsl, lte}, factor.IDProtocol: {"h2"}, factor.IDQUIC: {"quiche+cubic"}},
			Stat:  Stat{Kind: Ratio, Vary: stacks("tcp+", "tcp+bbr")}, Region: Within(0.95, 1.05), Alpha: 0.01,
			Differs: differs + "; \"no difference\" read as within 5 %",
		}, {
			ID: "C5", Text: "On the in-flight MSS link, QUIC is 36 % faster than TCP+",
			Source: "§4, Fig. 3", Figure: "0.64",
			Reported: "performance gain of QUIC against TCP+ −0.36; −8,364.8 ms of Speed Index",
			Metric:   "si", Location: Mean, Cells: withNetworks(tcpPlus, mss),
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Within(0.54, 0.74), Alpha: 0.01,
			Differs: differs + "; the paper's gain ± 0.10; quiche's CUBIC does not pace, Google's did",
		}, {
			ID: "C6", Text: "On MSS, BBR makes TCP+ much faster: congestion control matters more than the protocol",
			Source: "§4, Fig. 3", Figure: "0.74",
			Reported: "performance gain of TCP+BBR against TCP+ −0.26; at PLT TCP+BBR keeps pace with QUIC",
			Metric:   "si", Location: Mean,
			Cells: Cells{factor.IDNetwork: {mss}, factor.IDProtocol: {"h2"}},
			Stat:  Stat{Kind: Ratio, Vary: stacks("tcp+", "tcp+bbr")}, Region: Within(0.64, 0.84), Alpha: 0.01,
			Differs: differs + "; the paper's gain ± 0.10",
		}, {
			ID: "C7", Text: "On MSS, QUIC with BBR is faster than TCP+ with BBR",
			Source: "§4, Fig. 3", Figure: "0.82",
			Reported: "performance gain of QUIC+BBR against TCP+BBR −0.18; −2,091.5 ms of Speed Index",
			Metric:   "si", Location: Mean,
			Cells: Cells{factor.IDNetwork: {mss}, factor.IDStack: {"tcp+bbr"}, factor.IDQUIC: {"quiche+bbr2"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Alpha: 0.01,
			Differs: differs + "; quiche's BBR is BBRv2, Google's QUIC 43 had BBR version 1",
		}, {
			ID: "C8", Text: "On DSL and LTE, what QUIC gains over TCP+ on a single-server site is about the one round trip its handshake saves",
			Source: "§4, Table 3", Figure: "0.46–1.54 RTT",
			Reported: "after subtracting one RTT, QUIC's lead in FVC and PLT on gnu.org and wikipedia.org was −0.54 to +0.07 RTT on DSL and LTE (below one RTT)",
			Metric:   "fvc", Location: Mean,
			Cells: withNetworks(Cells{factor.IDStack: {"tcp+"}, factor.IDQUIC: {"quiche+cubic"}, factor.IDPage: {"synthetic:16x10KB"}}, dsl, lte),
			Stat:  Stat{Kind: RTTsSaved, Vary: h2h3}, Region: Within(0, 2), Alpha: 0.01,
			Differs: differs + "; a synthetic page on one server stands in for gnu.org and wikipedia.org; \"below one RTT\" of the one RTT saved read as 0–2 RTT",
		}},
		Gaps: []Gap{
			{"Google's QUIC server: gQUIC 43 with paced CUBIC and BBR version 1", "Google's QUIC is gone from servers; quiche's CUBIC does not pace and its BBR is BBRv2 (quinn's BBR is experimental)"},
			{"NGINX serving TCP", "on this kernel nginx cannot pace (no sch_fq), which TCP+ needs; Go's net/http paces through SO_MAX_PACING_RATE"},
			{"the DA2GC in-flight network's claims (no significant difference among TCP stacks, QUIC ahead)", "left out of the quick scale for time (loads of minutes); its network, wolsing2019-da2gc, is in the paper-scale spec"},
			{"one-way ANOVA per website at p < 0.01", "the claims pool the pages; the verdict reads a 99 % bootstrap interval instead"},
		},
	}
}
