package papers

import "github.com/quicbench/quicbench/internal/factor"

// cook2017 is seed 002: delay, loss, first and repeat connections, content
// on 1 to 8 servers.
func cook2017() Paper {
	const differs = "h3 (IETF QUIC, quic-go) against HTTP/2 from Go's net/http, not HTTP/2 over Google's QUIC (go-quic); today's Chromium; one synthetic page of 40 × 20 KB for replicas of YouTube, Orange and a project's site; congestion control: QUIC here quic-go's NewReno (initial window 32 × 1,280 B, paced), TCP here Linux CUBIC (initial window 10, unpaced), both measured on the wire; the paper's QUIC ran CUBIC (Google QUIC's default)"
	const transport = "; congestion control: QUIC here quic-go's NewReno (initial window 32 × 1,280 B, paced), TCP here Linux CUBIC (initial window 10, unpaced), both measured on the wire; the paper's QUIC ran CUBIC (Google QUIC's default)"
	h2h3 := protocols("h2", "h3")
	// nearOne is why a ratio of about 1 is told at paper scale only.
	const nearOne = "its quick scale loads a cell 5 times, too few to bound a ratio near 1 within 10 % at the spread measured here; the paper's 100 can"
	still, delayed, lossy := "delay0-loss0", "delay200-loss0", "delay0-loss20"
	// bothWays is how the lossy network's loss is applied, said in every
	// claim that reads it.
	const bothWays = "; the 20 % loss applies in each direction (the paper does not say which way its loss went): a round trip loses a packet about 36 % of the time"
	oneServer := []string{"1"}
	// adsl and fourG stand in for the paper's public access networks
	// (cook2017-access-quick.yaml, cook2017-access.yaml).
	adsl, fourG := "wolsing2019-dsl", "wolsing2019-lte"
	access := func(network string) Cells {
		return Cells{factor.IDNetwork: {network}, factor.IDPage: {"web2024:9"}, factor.IDVisit: {"repeat"}}
	}
	const accessDiffers = "repeat visits to a generated page of 34 requests over 7 origins (web2024:9) for the paper's YouTube over the public Internet; Wolsing et al.'s measured DSL (25/5 Mbit/s, 24 ms) and LTE (10.5/2.8 Mbit/s, 74 ms) presets for its public ADSL and 4G links, which it gives no numbers for; h1, h2 and h3 from Go (net/http and quic-go), the paper's go-quic and Go's HTTP library" + transport
	forced := []string{string(factor.DiscoveryForced)} // the cells of Fig. 12 (C14) discover h3 instead
	return Paper{
		ID:       "cook2017",
		Authors:  "Sarah Cook, Bertrand Mathieu, Patrick Truong, Isabelle Hamchaoui",
		Year:     2017,
		YearFrom: "its title page",
		Title:    "QUIC: Better For What And For Whom?",
		Venue:    "IEEE International Conference on Communications (ICC 2017)",
		Seed:     "002_3a75445d685f5f50.txt",
		Setup:    "go-quic servers for HTTP/2 over QUIC and Go's HTTP library for HTTP/1.1 and HTTP/2, each in a Docker container; netem; Chromium 53 under Selenium; Navigation Timing PLT; 100 loads per protocol",
		Metric:   "plt",
		Specs:    map[Scale][]string{Quick: {"cook2017-quick.yaml", "cook2017-servers-quick.yaml", "cook2017-altsvc-quick.yaml", "cook2017-access-quick.yaml"}, Full: {"cook2017.yaml", "cook2017-altsvc.yaml", "cook2017-access.yaml"}},
		Claims: []Claim{{
			ID: "C1", Text: "Repeat connections over QUIC are much less sensitive to delay than over HTTP/2",
			Source: "§IV-A1, Fig. 3–4", Figure: "≈ 0.24",
			Reported: "from 0 to 200 ms of delay QUIC's repeat PLT grew by about 400 ms (≈ ×1.2 of ≈ 1,900 ms), HTTP/2's was multiplied by 5",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDDiscovery: forced, factor.IDVisit: {"repeat"}, factor.IDOrigins: oneServer},
			Stat: Stat{Kind: Interaction, Vary: networks(still, delayed), By: h2h3}, PaperValue: 0.24, Region: Below(1), Differs: differs,
		}, {
			ID: "C2", Text: "Repeat connections over QUIC are much less sensitive to loss than over HTTP/2",
			Source: "§IV-A2, Fig. 5–6", Figure: "≈ 0.14",
			Reported: "from 0 to 20 % loss QUIC's repeat PLT went from about 1,900 to 2,200 ms (×1.16), HTTP/2's from about 800 to 6,500 ms (×8.1)",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDDiscovery: forced, factor.IDVisit: {"repeat"}, factor.IDOrigins: oneServer},
			Stat: Stat{Kind: Interaction, Vary: networks(still, lossy), By: h2h3}, PaperValue: 0.14, Region: Below(1),
			Differs: differs + bothWays,
		}, {
			ID: "C3", Text: "QUIC's first connections are far more sensitive to loss than its repeat connections",
			Source: "§IV-A2", Figure: "≈ 6.9",
			Reported: "QUIC's first connections went from an average of 2,000 ms to 16,000 ms (×8) from 0 to 20 % loss, its repeat connections ×1.16",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDDiscovery: forced, factor.IDProtocol: {"h3"}, factor.IDOrigins: oneServer},
			Stat: Stat{Kind: Interaction, Vary: networks(still, lossy),
				By: Contrast{Factor: factor.IDVisit, From: "repeat", To: "first"}},
			PaperValue: 6.9, Region: Above(1), Differs: differs + bothWays,
		}, {
			ID: "C4", Text: "On very lossy links QUIC outperforms HTTP/2",
			Source: "§IV-A2, §IV-A3, §V, Fig. 5–6", Figure: "≈ 0.34",
			Reported: "repeat connections at 20 % loss: QUIC about 2,200 ms, HTTP/2 about 6,500 ms (the paper warns that its HTTP/2 server's absolute times are better than its QUIC server's)",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {lossy}, factor.IDVisit: {"repeat"}, factor.IDOrigins: oneServer},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 0.34, Region: Below(1), Differs: differs + bothWays,
		}, {
			ID: "C5", Text: "A first QUIC connection is more sensitive to delay than a repeat one: its PLT almost doubles from 0 to 200 ms, a repeat one's grows by 400 ms",
			Source: "§IV-A1, Fig. 3", Figure: "≈ 1.6",
			Reported: "\"The PLT almost doubles for QUIC first connections but Fig. 3 shows that the impact is not as consequent for QUIC repeat connections as it only increases by 400ms\" (of about 1,900 ms: ×1.2; ≈ 2 ÷ 1.2)",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDProtocol: {"h3"}, factor.IDOrigins: oneServer},
			Stat: Stat{Kind: Interaction, Vary: networks(still, delayed),
				By: Contrast{Factor: factor.IDVisit, From: "repeat", To: "first"}},
			PaperValue: 1.6, Region: Above(1),
			Differs: differs + "; the paper's first-connection ratio alone (≈ 2) depends on how long the page takes without delay (about 2 s there, 0.2–0.4 s here), so it is tested against the repeat connections' ratio, as the paper set them side by side",
		}, {
			ID: "C6", Text: "Content on 1 or 4 servers loads about equally fast over QUIC",
			Source: "§IV-B2, Fig. 11", Figure: "≈ 1",
			Reported: "\"the PLT performances are relatively similar for 1, 2 and 4 servers\" (QUIC, repeat connections)",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {still}, factor.IDProtocol: {"h3"}, factor.IDVisit: {"repeat"}},
			Stat:  Stat{Kind: Ratio, Vary: Contrast{Factor: factor.IDOrigins, From: "1", To: "4"}}, PaperValue: 1, Region: Within(0.9, 1.1), PaperScaleOnly: nearOne,
			Differs: differs + "; \"relatively similar\" read as within 10 %; the network of Fig. 11 is not given (no delay, no loss here)",
		}, {
			ID: "C7", Text: "Content on 8 servers loads more slowly over QUIC than on one",
			Source: "§IV-B2, Fig. 11", Figure: "> 1",
			Reported: "the PLT performances \"decrease for 8 servers\" (QUIC, repeat connections)",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {still}, factor.IDProtocol: {"h3"}, factor.IDVisit: {"repeat"}},
			Stat:  Stat{Kind: Ratio, Vary: Contrast{Factor: factor.IDOrigins, From: "1", To: "8"}}, Region: Above(1),
			Differs: differs + "; the network of Fig. 11 is not given (no delay, no loss here)",
		}, {
			ID: "C8", Text: "On a first connection QUIC saves round trips before the first request: 1 RTT against TCP+TLS's 3",
			Source: "§I, §III-C1", Figure: "2 RTT (TLS 1.2)",
			Reported:      "TCP+TLS needs 3 RTT before the first request, QUIC 1 (\"2 or 1 RTT\" on a first connection)",
			NotReproduced: "quicbench's servers speak TLS 1.3 alone, which completes in 1 RTT where the paper's TLS 1.2 took 2: the most a first h3 connection can save here is 1 RTT, so the paper's 2 could only disagree; C12 tests the saving TLS 1.3 leaves",
			Differs:       "TLS 1.3 on both sides, no TLS 1.2" + transport,
		}, {
			ID: "C9", Text: "On a repeat connection QUIC saves two or three round trips: 0 RTT against 2 or 3",
			Source: "§II, §III-C2, §IV-A", Figure: "2–3 RTT (TLS 1.2)",
			Reported: "\"0 or 1 RTT vs 2 or 3 RTTs in case of TCP/TLS handshake\"; a repeat connection \"requires 1 or 0 RTT\"",
			Metric:   "ttfb", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {delayed}, factor.IDVisit: {"repeat"}, factor.IDOrigins: oneServer},
			Stat:  Stat{Kind: RTTsSaved, Vary: h2h3}, Region: Within(1.5, 2.5),
			Arithmetic: "the paper counts handshakes: TCP's 1 RTT and TLS 1.2's 1 or 2 on resumption against QUIC's 0; with TLS 1.3 a resumed TCP+TLS connection without early data needs 2 RTT (TCP, then TLS) against QUIC's 0-RTT, so QUIC saves 2 RTT, which the region tests (1.5–2.5 RTT)",
			Differs:    "0-RTT for h3 against TLS 1.3 resumption (no early data, which browsers do not send over TCP) over a new TCP connection" + transport,
		}, {
			ID: "C10", Text: "First QUIC connections load content on 1 or 4 servers about equally fast, as repeat ones do",
			Source: "§IV-B2, Fig. 13", Figure: "≈ 1",
			Reported: "\"We observe the same performance result for the first ever connection to the website, as shown in Fig. 12 and Fig. 13\" (Fig. 13: with --origin-to-force-quic-on): similar for 1, 2 and 4 servers",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {still}, factor.IDProtocol: {"h3"}, factor.IDVisit: {"first"}},
			Stat:  Stat{Kind: Ratio, Vary: Contrast{Factor: factor.IDOrigins, From: "1", To: "4"}}, PaperValue: 1, Region: Within(0.9, 1.1), PaperScaleOnly: nearOne,
			Differs: differs + "; \"the same performance result\" read as C6's: within 10 %; h3 is forced from the first request, as the paper's Fig. 13 forced it",
		}, {
			ID: "C11", Text: "First QUIC connections load content on 8 servers more slowly than on one",
			Source: "§IV-B2, Fig. 13", Figure: "> 1",
			Reported: "\"the same performance result for the first ever connection\" as Fig. 11's, where the PLT performances \"decrease for 8 servers\"",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {still}, factor.IDProtocol: {"h3"}, factor.IDVisit: {"first"}},
			Stat:  Stat{Kind: Ratio, Vary: Contrast{Factor: factor.IDOrigins, From: "1", To: "8"}}, Region: Above(1),
			Differs: differs + "; the network of Fig. 13 is not given (no delay, no loss here)",
		}, {
			ID: "C12", Text: "With TLS 1.3 on both sides, a first QUIC connection saves one round trip before the first request: 1 RTT against TCP+TLS 1.3's 2",
			Source: "§I, §III-C1 (C8's count with TLS 1.3)", Figure: "1 RTT (TLS 1.3, by the paper's arithmetic)",
			Reported: "the paper counts TCP's 1 RTT and TLS 1.2's 2 against QUIC's 1 (C8); it does not measure TLS 1.3",
			Metric:   "ttfb", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {delayed}, factor.IDVisit: {"first"}, factor.IDOrigins: oneServer},
			Stat:  Stat{Kind: RTTsSaved, Vary: h2h3}, Region: Within(0.5, 1.5),
			Arithmetic: "a design claim, not the paper's: with TLS 1.3, which completes in 1 RTT, TCP+TLS needs 2 before the first request against QUIC's 1, so QUIC saves 1 RTT, which the region tests (0.5–1.5 RTT)",
			Differs:    "TLS 1.3 on both sides; the document's first byte (TTFB) measures it" + transport,
		}, {
			ID: "C13", Text: "In a stable network the benefits of QUIC are not obvious: without delay or loss h3 and HTTP/2 load the page about equally fast",
			Source: "§IV-A3, §V", Figure: "≈ 1",
			Reported: "\"in case of stable and reliable networks, the benefits of QUIC are not so obvious\"; \"the PLT performances of QUIC and HTTP/2 are very similar\"",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: forced, factor.IDNetwork: {still}, factor.IDOrigins: oneServer},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1, Region: Within(0.9, 1.1), PaperScaleOnly: nearOne,
			Differs: differs + "; \"not so obvious\" read as within 10 %, first and repeat connections together; the paper's stable networks were live ADSL and 4G, here no delay and no loss",
		}, {
			ID: "C14", Text: "First connections that find QUIC through Alt-Svc load content on 1 or 4 servers about equally fast",
			Source: "§IV-B2, Fig. 12", Figure: "≈ 1",
			Reported: "\"We observe the same performance result for the first ever connection to the website, as shown in Fig. 12\" (Fig. 12: first connections without --origin-to-force-quic-on, QUIC found through Alt-Svc): similar for 1, 2 and 4 servers",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDDiscovery: {string(factor.DiscoveryAltSvc)}, factor.IDNetwork: {still}, factor.IDProtocol: {"h3"}, factor.IDVisit: {"first"}},
			Stat:  Stat{Kind: Ratio, Vary: Contrast{Factor: factor.IDOrigins, From: "1", To: "4"}}, PaperValue: 1, Region: Within(0.9, 1.1),
			Differs: differs + "; h3 offered through Alt-Svc beside HTTP/2 and discovered by the browser, which connects over TCP first; \"the same performance result\" read as C10's: within 10 %",
		}, {
			ID: "C15", Text: "On ADSL, HTTP/2 loads a complex site faster than HTTP/1.1",
			Source: "§IV-A3, Fig. 7", Figure: "< 1",
			Reported: "\"For ADSL links, the performances of HTTP/2 and QUIC were similar and better than HTTP/1.1\" (repeat connections to YouTube)",
			Metric:   "plt", Location: Median, Cells: access(adsl),
			Stat: Stat{Kind: Ratio, Vary: protocols("h1", "h2")}, Region: Below(1),
			Differs: accessDiffers + "; HTTP/2 against HTTP/1.1",
		}, {
			ID: "C16", Text: "On ADSL, QUIC loads a complex site faster than HTTP/1.1",
			Source: "§IV-A3, Fig. 7", Figure: "< 1",
			Reported: "\"For ADSL links, the performances of HTTP/2 and QUIC were similar and better than HTTP/1.1\" (repeat connections to YouTube)",
			Metric:   "plt", Location: Median, Cells: access(adsl),
			Stat: Stat{Kind: Ratio, Vary: protocols("h1", "h3")}, Region: Below(1),
			Differs: accessDiffers + "; h3 against HTTP/1.1",
		}, {
			ID: "C17", Text: "On ADSL, HTTP/2 and QUIC load a complex site about equally fast",
			Source: "§IV-A3–4, Fig. 7", Figure: "≈ 1",
			Reported: "\"For ADSL links, the performances of HTTP/2 and QUIC were similar\"; \"the PLT performances of QUIC and HTTP/2 are very similar\"",
			Metric:   "plt", Location: Median, Cells: access(adsl),
			Stat: Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1, Region: Within(0.9, 1.1), PaperScaleOnly: nearOne,
			Differs: accessDiffers + "; \"similar\" read as within 10 %, as C13",
		}, {
			ID: "C18", Text: "On 4G, QUIC loads a complex site faster than HTTP/2",
			Source: "§IV-A3, Fig. 8", Figure: "400–500 ms faster at low load",
			Reported: "\"for 4G links, the performances of HTTP/2 and HTTP/1.1 were similar and this time QUIC performed better. The most noticeable difference was in low load hours where QUIC PLTs were about 400-500ms better than HTTP/2 & HTTP/1.1 PLTs\"",
			Metric:   "plt", Location: Median, Cells: access(fourG),
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1),
			Differs: accessDiffers + "; the live 4G network's variation, loss and load, which the paper saw QUIC gain from, are not emulated: a fixed-rate link without loss",
		}, {
			ID: "C19", Text: "On 4G, HTTP/2 and HTTP/1.1 load a complex site about equally fast",
			Source: "§IV-A3, Fig. 8", Figure: "≈ 1",
			Reported: "\"for 4G links, the performances of HTTP/2 and HTTP/1.1 were similar\"",
			Metric:   "plt", Location: Median, Cells: access(fourG),
			Stat: Stat{Kind: Ratio, Vary: protocols("h1", "h2")}, PaperValue: 1, Region: Within(0.9, 1.1), PaperScaleOnly: nearOne,
			Differs: accessDiffers + "; HTTP/2 against HTTP/1.1; \"similar\" read as within 10 %",
		}},
		Gaps: []Gap{
			{"4G and ADSL on the public Internet to YouTube's servers, and the load of the network through the day (§IV-A3–4, Fig. 7–8)", "emulated with Wolsing et al.'s measured DSL and LTE presets and a generated page of 7 origins (cook2017-access-quick, cook2017-access); the day's load is not"},
			{"replicas of YouTube, Orange and the Doctor project's site (§IV-B1, Fig. 9–10: a simple site loads faster, delay acts on both alike)", "no recordings of them ship; one synthetic page stands in for the delay and loss series, so no claim compares a simple site with a complex one"},
		},
	}
}
