package papers

import (
	"fmt"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
)

// biswal2016 is seed 004: synthetic pages over QUIC and HTTP/2 across
// bandwidth, RTT and loss, and four cellular networks.
func biswal2016() Paper {
	const (
		differs  = "h3 (IETF QUIC, quic-go) against HTTP/2 from Go's net/http, not SPDY 3.1 over Google's QUIC 23 against OpenLiteSpeed's HTTP/2 draft 17; today's Chromium; PLT is loadEventEnd, not the paper's extension's network time; a network's loss (1 or 2 %) is applied in each direction, as its presets give it, where the paper's netem set-up does not say whether it dropped in one direction or both: a round trip here loses about twice the figure; congestion control: QUIC here quic-go's NewReno (initial window 32 × 1,280 B, paced), TCP here Linux CUBIC (initial window 10, unpaced), both measured on the wire; the paper's QUIC ran CUBIC (Google QUIC's default)"
		fast     = "100mbit-rtt100-loss0"
		fastLos  = "100mbit-rtt100-loss2"
		slow     = "1mbit-rtt100-loss0"
		slowLos  = "1mbit-rtt100-loss1"
		twoG     = "biswal2016-india-2g"
		threeG   = "biswal2016-india-3g"
		usThreeG = "biswal2016-us-3g"
		lte      = "biswal2016-us-lte"
	)
	h2h3 := protocols("h2", "h3")
	dense := "synthetic:64x10KB"
	lossy, all := rateNetworks()
	p := Paper{
		ID:       "biswal2016",
		Authors:  "Prasenjeet Biswal, Omprakash Gnawali",
		Year:     2016,
		YearFrom: "its title page gives no year; Nepomuceno et al. 2018 and Wolsing et al. 2019 cite it as GLOBECOM 2016, their references 21 and 2",
		Title:    "Does QUIC make the Web faster?",
		Venue:    "IEEE Global Communications Conference (GLOBECOM)",
		Seed:     "004_75cf35c65e09abad.txt",
		Setup:    "Google's QUIC server (version 23, SPDY 3.1 over QUIC) and OpenLiteSpeed 1.3.9 (HTTP/2 draft 17); netem; Chromium 41; PLT from a Chromium extension (time in network activity); the median of 5 loads",
		Metric:   "plt",
		Specs: map[Scale][]string{Quick: {"biswal2016-quick.yaml", "biswal2016-cellular-quick.yaml", "biswal2016-sites-quick.yaml", "biswal2016-repeat-quick.yaml"},
			Full: {"biswal2016.yaml", "biswal2016-sites.yaml", "biswal2016-repeat.yaml"}},
		RealPages: map[Scale]string{Quick: "biswal2016-sites-quick.yaml", Full: "biswal2016-sites.yaml"},
		Claims: onFirstVisitsBut("C4", []Claim{{
			ID: "C1", Text: "At 100 Mbit/s without loss, HTTP/2 is faster than QUIC",
			Source: "§3.2, Fig. 4b", Figure: "> 1",
			Reported: "PLT(QUIC)/PLT(HTTP/2) above 1 without loss at 10, 100 and 200 ms (64 objects of 10 KB)",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {fast}, factor.IDPage: {dense}},
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Above(1), Differs: differs,
		}, {
			ID: "C2", Text: "At 100 Mbit/s with loss, QUIC is faster than HTTP/2",
			Source: "§3.2, Fig. 4b", Figure: "< 1",
			Reported: "PLT(QUIC)/PLT(HTTP/2) below 1 with 1 and 2 % loss (64 objects of 10 KB)",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {fastLos}, factor.IDPage: {dense}},
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Differs: differs,
		}, {
			ID: "C3", Text: "At 1 Mbit/s QUIC is faster even without loss",
			Source: "§3.2, Fig. 4a", Figure: "< 1",
			Reported: "\"in figure 4(a), even the first bar group representing no network loss is less than 1\" (64 objects of 10 KB)",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {slow}, factor.IDPage: {dense}},
			Stat: Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Differs: differs,
		}, {
			ID: "C4", Text: "QUIC is faster on pages of a few small objects",
			Source: "§3.2, Fig. 3", Figure: "0.22–0.83",
			Reported: "\"QUIC is faster (1.2-4.5X) when pages consist of few small-sized objects\"",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDNetwork: {fast, fastLos, slow, slowLos}, factor.IDPage: {"synthetic:2x100B", "synthetic:2x1KB", "synthetic:8x100B", "synthetic:8x1KB"}, factor.IDVisit: {"repeat"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 0.427, Region: Below(1),
			Differs:  differs + "; on repeat visits (biswal2016-repeat-quick, biswal2016-repeat), where h3 resumes with 0-RTT and HTTP/2 resumes TLS 1.3 over a new TCP connection: the paper's reason, 0-RTT, needs a browser that has met the server",
			Explains: &Explanation{Says: "§3.2: QUIC's 0-RTT connection establishment \"is prominent only on pages with a few small-sized objects\"", Part: results.PartHandshake},
		}, {
			ID: "C5", Text: "Without loss, QUIC is slower on pages of many small objects",
			Source: "§3.2, Fig. 3", Figure: "1.1–3.2",
			Reported: "\"Page load with QUIC is slower (1.1-3.2X) when page consists of many small-sized objects\", \"and there is minimal loss\"",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDNetwork: {fast, slow}, factor.IDPage: {"synthetic:64x100B", "synthetic:128x1KB"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, PaperValue: 1.876, Region: Above(1),
			Differs: differs + "; the paper blames the QUIC toy server's queuing in Chromium",
			Explains: &Explanation{Says: "§3.2, Fig. 5: over QUIC each resource loads quickly once requested but waits long before it is (its queuing time), \"possibly\" because the QUIC toy server is not optimized for Chromium", Part: results.PartClient,
				Caveat: "the client part is time when nothing was in flight and no server worked; a request the browser queued while other traffic was in flight, the paper's queuing time (a HAR's blocked), is in no part"},
		}, {
			ID: "C6", Text: "With loss, QUIC loads most pages faster",
			Source: "§3.2 (summary)", Figure: "82 %",
			Reported: "\"Overall QUIC is faster in 82% of cases when loss is introduced (80% for 100 Mbps and 85% for 1 Mbps connection)\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: lossy, factor.IDPage: {"synthetic:*"}},
			Stat: Stat{Kind: Share, Vary: h2h3}, PaperValue: 0.82, PaperN: 20, PaperUnit: "pages", Region: Above(0.55),
			Differs: differs + "; the paper's cells: every page at 1 and 100 Mbit/s, RTT 10, 100 and 200 ms, 1 and 2 % loss (the quick scale has four of its twelve networks); \"most\" read as over 55 %: the 240 cases of its design are its 20 pages in 12 lossy networks each, and 82 % counted as the 20 pages they are (16 of 20) has a 95 % interval of 56–94 %",
		}, {
			ID: "C7", Text: "On cellular networks QUIC gains more on a poor link (India's 2G) than on a fast one (US LTE)",
			Source: "§3.4, Fig. 6", Figure: "< 1",
			Reported: "more than 90 % of pages faster with QUIC from India against 60 % from the US; \"QUIC performs better in poor network conditions\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {twoG, lte}},
			Stat: Stat{Kind: Interaction, Vary: h2h3, By: networks(lte, twoG)}, Region: Below(1),
			Differs: differs + "; emulated links with the rates, delays and loss the paper measured, not the live networks",
		}, {
			ID: "C8", Text: "On India's 2G, QUIC loads most pages faster",
			Source: "§3.4, Fig. 6", Figure: "> 90 %",
			Reported: "\"more than 90% of pages have lower page load times with QUIC than with HTTP/2 when accessed from India\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {twoG}},
			Stat: Stat{Kind: Share, Vary: h2h3}, PaperValue: 0.9, PaperN: 20, PaperUnit: "pages", PaperScaleOnly: "its quick scale has 6 settings on India's 2G", Region: Above(0.61),
			Differs: differs + "; \"more than 90 %\" read as over 61 %: 18 of the 20 pages of its design has a 95 % interval of 68–99 %",
		}, {
			ID: "C9", Text: "QUIC loads pages of large objects faster in almost every case",
			Source: "§3.2", Figure: "96 %",
			Reported: "\"For pages consisting of large objects (10KB and 100KB), QUIC performs better in 96% cases (95% for 100Mbps connection and 97.7% for 1Mbps connection.)\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: all, factor.IDPage: largePages()},
			Stat: Stat{Kind: Share, Vary: h2h3}, PaperValue: 0.96, PaperN: 180, PaperUnit: "settings", PaperScaleOnly: "its quick scale has 12 settings of large objects, the paper 180", Region: Above(0.85),
			Differs: differs + "; every network of 1 and 100 Mbit/s with and without loss; \"almost every\" read as over 85 %: 96 % of the 180 cases of its design (10 pages × 18 networks) has a 95 % interval of 92–98 %",
		}, {
			ID: "C10", Text: "QUIC gains more over HTTP/2 at 1 Mbit/s than at 100 Mbit/s",
			Source: "§3.2, Fig. 4", Figure: "< 1",
			Reported: "\"QUIC is faster in 78% cases for 100Mbps link compared to 85% for 1Mbps\"; \"QUIC performs better than HTTP/2 in lower bandwidth conditions\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {fast, slow}},
			Stat: Stat{Kind: Interaction, Vary: h2h3, By: networks(fast, slow)}, Region: Below(1),
			Differs: differs + "; h3/h2 at 1 Mbit/s over h3/h2 at 100 Mbit/s, at 100 ms without loss, over every page",
		}, {
			ID: "C11", Text: "In India QUIC gains more on 2G than on 3G",
			Source: "§3.4, Fig. 6", Figure: "< 1",
			Reported: "\"QUIC performs better in poor network conditions (2G in India and 3G in US) compared to their higher-speed counterparts (3G in India and 4GLTE in the US)\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {twoG, threeG}},
			Stat: Stat{Kind: Interaction, Vary: h2h3, By: networks(threeG, twoG)}, Region: Below(1),
			Differs: differs + "; emulated links with the rates and delays the paper measured, not the live networks",
		}, {
			ID: "C12", Text: "In the US QUIC gains more on 3G than on LTE",
			Source: "§3.4, Fig. 6", Figure: "< 1",
			Reported: "\"QUIC performs better in poor network conditions (2G in India and 3G in US) compared to their higher-speed counterparts (3G in India and 4GLTE in the US)\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {usThreeG, lte}},
			Stat: Stat{Kind: Interaction, Vary: h2h3, By: networks(lte, usThreeG)}, Region: Below(1),
			Differs: differs + "; emulated links with the rates, delays and loss the paper measured, not the live networks",
		}, {
			ID: "C13", Text: "On complete web sites QUIC loads pages faster than HTTP/2, dense ones too",
			Source: "§3.5, Fig. 7", Figure: "< 1",
			Reported: "\"Also contrary to assumption, even dense pages (large number of objects) load faster over QUIC\"; PLT(QUIC)/PLT(HTTP/2) at most 1.6 (3.2 on synthetic pages), on 15 sites of at most 20 objects and 15 of 80–100, over configurations 1, 3, 7 and 9",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDNetwork: {"100mbit-rtt10-loss0", "100mbit-rtt200-loss0", "100mbit-rtt10-loss2", "100mbit-rtt200-loss2"}, factor.IDPage: {"web2024:*", "archive:*"}},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1), Pages: true,
			Differs: differs + "; generated web2024 pages of as few and as many requests (or recorded sites with --sites) for its 30 Alexa sites of 2015; at 100 Mbit/s, a bandwidth the paper does not give for these runs; the geometric mean of the sites' and configurations' ratios, where the paper plots each",
		}, {
			ID: "C14", Text: "A longer round trip favours QUIC: with loss, QUIC gains more over HTTP/2 at 200 ms than at 10 ms",
			Source: "abstract, §3.4", Figure: "< 1",
			Reported: "\"We find QUIC to perform better overall under poor network conditions (low bandwidth, high latency and high loss)\"; \"the earlier result of QUIC performing better in high RTT and lossy network\" (without loss, §3.2 finds QUIC not improving at 200 ms on pages of large objects)",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDNetwork: {"100mbit-rtt10-loss2", "100mbit-rtt200-loss2"}},
			Stat:  Stat{Kind: Interaction, Vary: h2h3, By: networks("100mbit-rtt10-loss2", "100mbit-rtt200-loss2")}, Region: Below(1),
			PaperScaleOnly: "its quick scale has 4 generated sites at 10 and 200 ms with 2 % loss, 3 loads a cell: at the spread measured with loss an interaction like 0.8 is not bounded below 1; the paper's design has its whole grid",
			Differs:        differs + "; h3/h2 at 200 ms over h3/h2 at 10 ms, both at 100 Mbit/s with 2 % loss, over every page of the scale (at quick scale the generated sites of C13), where the paper draws the trend from its whole grid",
		}, {
			ID: "C15", Text: "Without loss, more small objects turn the comparison towards HTTP/2",
			Source: "§3.2, Fig. 3", Figure: "> 1",
			Reported: "\"as the number of objects increase (especially if the object size is small), HTTP/2 starts to outperform QUIC in terms of speed\"",
			Metric:   "plt", Location: Median, Cells: Cells{factor.IDNetwork: {fast, slow}},
			Stat:    Stat{Kind: Interaction, Vary: h2h3, By: Contrast{Factor: factor.IDPage, From: "synthetic:2x100B", To: "synthetic:64x100B"}},
			Region:  Above(1),
			Differs: differs + "; h3/h2 on 64 objects of 100 B over h3/h2 on 2 of them, at 1 and 100 Mbit/s without loss",
		}, {
			ID: "C16", Text: "Dense complete web sites (80–100 objects) load faster over QUIC too",
			Source: "§3.5, Fig. 7", Figure: "< 1",
			Reported: "\"Also contrary to assumption, even dense pages (large number of objects) load faster over QUIC. The reason for this is that average page size is 2.5 MB and average object size is 25.39 KB\"",
			Metric:   "plt", Location: Median,
			Cells: Cells{factor.IDNetwork: {"100mbit-rtt10-loss0", "100mbit-rtt200-loss0", "100mbit-rtt10-loss2", "100mbit-rtt200-loss2"}, factor.IDPage: densePages},
			Stat:  Stat{Kind: Ratio, Vary: h2h3}, Region: Below(1),
			Differs: differs + "; the generated web2024 pages of 80 to 100 requests of C13's specs (2 at quick scale, 15 at paper scale) for its 15 dense Alexa sites of 2015, at 100 Mbit/s; the geometric mean of their ratios over the four configurations",
		}}),
		Gaps: []Gap{
			{"SPDY 3.1 over Google's QUIC version 23 against HTTP/2 draft 17", "neither exists in today's browsers or servers: h3 against HTTP/2 is the nearest pair"},
			{"live cellular networks in India and the US, and the campus LAN (§3.3–3.4)", "emulated from the rates, delays and loss the paper measured (presets biswal2016-*)"},
			{"the 30 Alexa sites of 2015 themselves (§3.5, Fig. 7)", "no recordings of them ship: C13 and C16 run on generated pages of as few and as many requests, and on recorded sites with --sites"},
			{"the highest PLT(QUIC)/PLT(HTTP/2) over the complete sites, 1.6 against 3.2 on synthetic pages (§3.5, Fig. 7)", "a maximum over settings grows with their number and no claim tests one: C13 and C16 read the sites' geometric mean"},
			{"PLT as a Chromium extension's time in network activity, scripts left out", "quicbench reads loadEventEnd (and onLoad), which include script execution"},
		},
	}
	return p
}

// densePages are the generated pages of 80 to 100 requests that stand in
// for the paper's 15 dense sites (biswal2016-sites-quick.yaml's two and
// biswal2016-sites.yaml's fifteen).
var densePages = []string{"web2024:55", "web2024:97", "web2024:13", "web2024:21", "web2024:34", "web2024:42", "web2024:47",
	"web2024:68", "web2024:76", "web2024:81", "web2024:89", "web2024:102", "web2024:110", "web2024:123", "web2024:131"}

// onFirstVisitsBut restricts every claim but the one named to first
// visits: the repeat-visit specs are that claim's alone.
func onFirstVisitsBut(id string, claims []Claim) []Claim {
	for i := range claims {
		if claims[i].ID != id {
			claims[i].Cells[factor.IDVisit] = []string{"first"}
		}
	}
	return claims
}

// rateNetworks names the networks of biswal2016.yaml at 1 and 100 Mbit/s:
// those with loss, and all of them.
func rateNetworks() (lossy, all []string) {
	for _, rate := range []string{"1mbit", "100mbit"} {
		for _, rtt := range []int{10, 100, 200} {
			for _, loss := range []int{0, 1, 2} {
				name := fmt.Sprintf("%s-rtt%d-loss%d", rate, rtt, loss)
				all = append(all, name)
				if loss > 0 {
					lossy = append(lossy, name)
				}
			}
		}
	}
	return lossy, all
}

// largePages are the pages of biswal2016.yaml of 10 KB and 100 KB objects.
func largePages() []string {
	var pages []string
	for _, n := range []int{2, 8, 16, 64, 128} {
		for _, size := range []string{"10KB", "100KB"} {
			pages = append(pages, fmt.Sprintf("synthetic:%dx%s", n, size))
		}
	}
	return pages
}
