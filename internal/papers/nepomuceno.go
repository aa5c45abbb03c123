package papers

import "github.com/quicbench/quicbench/internal/factor"

// nepomuceno2018 is seed 000: QUIC against TCP on 100 Alexa pages.
func nepomuceno2018() Paper {
	const differs = "h3 (IETF QUIC) offered through Alt-Svc beside HTTP/1.1 and discovered by the browser, as the paper's Chrome discovered it, against HTTP/1.1 alone, both from Caddy (one process, as the paper's), in today's Chromium; cache disabled read on first visits, cache enabled on repeat visits; generated web2024 pages for 2016's Alexa top 100; congestion control: QUIC here Caddy's quic-go NewReno (initial window 32 × 1,252 B, paced), TCP here Linux CUBIC under Caddy (initial window 10, unpaced: Caddy cannot switch pacing on), both measured on the wire; the paper's QUIC ran CUBIC (Google QUIC's default)"
	h1h3 := protocols("h1", "h3")
	const pagesNeeded = "its quick scale has 9 pages (in 3 networks), the paper 87 to 96 in each of 12: a share of pages needs pages, a page in another network counting little more than once"
	return Paper{
		ID:       "nepomuceno2018",
		Authors:  "Késsia Nepomuceno, Igor Nogueira de Oliveira, Rafael Roque Aschoff, Daniel Bezerra, Maria Silvia Ito, Wesley Melo, Djamel Sadok, Géza Szabó",
		Year:     2018,
		YearFrom: "its title page gives no year; Wolsing et al. 2019 cite it as ISCC 2018, their reference 20",
		Title:    "QUIC and TCP: A Performance Evaluation",
		Venue:    "IEEE Symposium on Computers and Communications (ISCC)",
		Seed:     "000_e7bbfcb3f9c0d721.txt",
		Setup:    "100 Alexa pages recorded and replayed with Mahimahi; Caddy serving TCP with HTTP/1.1 and Google's QUIC with HTTP/2; Chrome 54; onLoad and onContentLoaded from HARs; the mean of 30 loads per page",
		Metric:   "onload",
		Specs:    map[Scale][]string{Quick: {"nepomuceno2018-quick.yaml"}, Full: {"nepomuceno2018.yaml"}},
		// recorded sites replace these specs' pages (reproduce --sites)
		RealPages: map[Scale]string{Quick: "nepomuceno2018-pages-quick.yaml", Full: "nepomuceno2018.yaml"},
		Claims: []Claim{{
			ID: "C1", Text: "With the cache disabled, TCP loads most pages faster: QUIC wins on about a third of the pages",
			Source: "§V, Fig. 3c, Table III", Figure: "33.8 % (28.6–39.6 % per configuration)",
			Reported: "QUIC faster than TCP on 28.57–39.56 % of the pages per configuration (onLoad, cache disabled)",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDCache: {"off"}, factor.IDVisit: {"first"}},
			Stat: Stat{Kind: Share, Vary: h1h3}, PaperValue: 0.338, PaperN: 91, PaperUnit: "pages", PaperScaleOnly: pagesNeeded, Region: Below(0.45), Pages: true,
			Differs: differs + "; the paper's share is of 91 pages in each configuration (35.16 % is 32 of 91), the same pages in all 12: 33.8 %, the mean of its column, is 31 of 91, whose 95 % interval is 24.5–44.8 %, so the claim holds under 45 %",
		}, {
			ID: "C2", Text: "With the cache enabled, QUIC wins on fewer pages still: about a quarter",
			Source: "Table III", Figure: "23.7 % (16.1–32.2 % per configuration)",
			Reported: "QUIC faster than TCP on 16.09–32.18 % of the pages per configuration (onLoad, cache enabled)",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDCache: {"on"}, factor.IDVisit: {"repeat"}},
			Stat: Stat{Kind: Share, Vary: h1h3}, PaperValue: 0.2365, PaperN: 87, PaperUnit: "pages", PaperScaleOnly: pagesNeeded, FewSites: "the shared recordings give 7 sites on Caddy, whose share cannot be bounded near the paper's", Region: Below(0.35), Pages: true,
			Differs: differs + "; the paper's share is of 87 pages in each configuration (17.24 % is 15 of 87): 23.7 %, the mean of its column, is 21 of 87, whose 95 % interval is 15.6–34.5 %, so the claim holds under 35 %",
		}, {
			ID: "C3", Text: "By onContentLoaded with the cache enabled, QUIC wins on about one page in eleven",
			Source: "Table III", Figure: "9.1 % (4.3–12.9 % per configuration)",
			Reported: "QUIC faster than TCP on 4.30–12.90 % of the pages per configuration (onContentLoaded, cache enabled)",
			Metric:   "dcl", Location: Mean, Cells: Cells{factor.IDCache: {"on"}, factor.IDVisit: {"repeat"}},
			Stat: Stat{Kind: Share, Vary: h1h3}, PaperValue: 0.09135, PaperN: 93, PaperUnit: "pages", PaperScaleOnly: pagesNeeded, FewSites: "the shared recordings give 7 sites on Caddy, whose share cannot be bounded near the paper's", Region: Below(0.17), Pages: true,
			Differs: differs + "; the paper's share is of 93 pages in each configuration (4.30 % is 4 of 93): 9.1 %, the mean of its column, is 8 of 93, whose 95 % interval is 3.8–16.3 %, so the claim holds under 17 %",
		}, {
			ID: "C4", Text: "Enabling the cache speeds TCP up more than QUIC",
			Source: "§VI, Table III", Figure: "> 1",
			Reported: "\"enabling cache while using TCP produces a much higher performance improvement than when using QUIC\"; QUIC's share of wins fell from 28.6–39.6 % to 16.1–32.2 % (onLoad)",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDVisit: {"repeat"}},
			Stat:   Stat{Kind: Interaction, Vary: h1h3, By: Contrast{Factor: factor.IDCache, From: "off", To: "on"}},
			Region: Above(1),
			Pages:  true, Differs: differs + "; here the statistic is QUIC/TCP with the cache over QUIC/TCP without it, both on repeat visits (alternative services known)",
		}, {
			ID: "C5", Text: "The RTT has a large effect on the load time: pages load much more slowly at 200 ms than at 20 ms",
			Source: "§VI, Fig. 4", Figure: "> 1 (no numbers)",
			Reported: "\"by fixing the packet loss ratio and varying the RTT in 20 ms, 100 ms, and 200 ms, we can easily see the increase in the page load time\" (no numbers in the text)",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDCache: {"off"}, factor.IDVisit: {"first"}},
			Stat: Stat{Kind: Ratio, Vary: networks("nepomuceno2018-rtt20-loss0", "nepomuceno2018-rtt200-loss0")}, Region: Above(2),
			Differs: differs + "; a slower load at 200 ms is certain, so \"large\" is read as at least twice as long: it fails if the 180 ms added to every round trip adds less than the page's time at 20 ms",
		}, {
			ID: "C6", Text: "Packet loss of up to 2 % hardly changes the load time",
			Source: "§VI, §VII, Fig. 4", Figure: "≈ 1",
			Reported: "\"when we fix the RTT and vary the packet loss to 0%, 0.5%, 1%, and 2%, however, this hardly influences the results\"",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDCache: {"off"}, factor.IDVisit: {"first"}},
			Stat: Stat{Kind: Ratio, Vary: networks("nepomuceno2018-rtt20-loss0", "nepomuceno2018-rtt20-loss2")}, PaperValue: 1, Region: Within(0.9, 1.1),
			Differs: differs + "; \"hardly\" read as within 10 %; the loss applies in each direction",
		}, {
			ID: "C7", Text: "By onContentLoaded with the cache disabled, TCP still loads most pages faster: QUIC wins on about a third of the pages",
			Source: "§V, Fig. 3d, Table III", Figure: "35.9 % (28.1–40.6 % per configuration)",
			Reported: "QUIC faster than TCP on 28.12–40.62 % of the pages per configuration (onContentLoaded, cache disabled)",
			Metric:   "dcl", Location: Mean, Cells: Cells{factor.IDCache: {"off"}, factor.IDVisit: {"first"}},
			Stat: Stat{Kind: Share, Vary: h1h3}, PaperValue: 0.3593, PaperN: 96, PaperUnit: "pages", PaperScaleOnly: pagesNeeded, FewSites: "the shared recordings give 7 sites on Caddy, whose share cannot be bounded near the paper's", Region: Below(0.46),
			Pages: true, Differs: differs + "; the paper's share is of 96 pages in each configuration (40.62 % is 39 of 96): 35.9 %, the mean of its column, is 34 of 96, whose 95 % interval is 25.9–45.8 %, so the claim holds under 46 %",
		}, {
			ID: "C8", Text: "With the cache disabled, QUIC wins on a minority of the pages in every configuration",
			Source: "§VI, Table III", Figure: "under 40 % in each of 12 (39.6 % at most)",
			Reported: "\"regardless of the configuration, the results show QUIC providing a better page load time in less than 40% of the web pages considered only\" (onLoad, cache disabled; at most 39.56 %, configuration 12)",
			Metric:   "onload", Location: Mean, Cells: Cells{factor.IDCache: {"off"}, factor.IDVisit: {"first"}},
			Stat: Stat{Kind: Share, Vary: h1h3, InEachNetwork: true}, PaperValue: 0.3956, PaperN: 91, PaperNetworks: 12, PaperUnit: "pages", PaperScaleOnly: pagesNeeded, FewSites: "the shared recordings give 7 sites on Caddy, too few in any one network to bound a share near the paper's", Region: Below(0.56), Pages: true,
			Differs: differs + "; the share of pages QUIC wins in each network, and the highest of them: the paper's highest, 36 of 91 pages, has an interval of 25.4–55.1 % at 95 % over its 12 configurations at once (Bonferroni), so \"less than 40 %\" in every one is read as under 56 % in every one",
		}},
		Gaps: []Gap{
			{"Google's QUIC carrying HTTP/2 against TCP carrying HTTP/1.1", "Google's QUIC is gone from browsers and servers: h3 over IETF QUIC against HTTP/1.1, both from Caddy in one process as in the paper, is the nearest pair"},
			{"the HAR's phases (Connect, Receive) per page", "the report draws waterfalls from the HARs, but no claim counts phases"},
		},
	}
}
