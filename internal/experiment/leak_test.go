package experiment

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quicbench/quicbench/internal/chromium"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/firefox"
	"github.com/quicbench/quicbench/internal/pcap"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/testenv"
)

// chattyPage is a page that talks during its load and goes on after it,
// as real pages do: from its first script on, every 20 ms a fetch of
// /late?page=ID (ID chosen at random by each page instance), and a beacon
// to /bye?page=ID when it is left. Neither
// URL is in the recording, so every such request is unmatched and named
// in its load's unmatched requests, with the instance that sent it.
const chattyPage = `<!doctype html><title>chatty</title>
<script>
const id = Math.random().toString(36).slice(2, 10);
setInterval(() => fetch('/late?page=' + id, {cache: 'no-store', keepalive: true}).catch(() => {}), 20);
addEventListener('pagehide', () => navigator.sendBeacon('/bye?page=' + id, 'x'));
</script>
%s`

// writeChattyArchive saves chattyPage with 12 images on one origin as an
// archive and returns its directory.
func writeChattyArchive(t *testing.T) string {
	t.Helper()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	var imgs strings.Builder
	a := &site.Archive{Source: "test", Document: "https://chatty.test/"}
	for i := range 12 {
		fmt.Fprintf(&imgs, `<img src="/i%d.png" width=10 height=10>`, i)
		body := append(slices.Clone(png), make([]byte, 4000)...) // trailing bytes after IEND: ignored, but they take time
		a.Exchanges = append(a.Exchanges, &site.Exchange{Method: "GET", URL: fmt.Sprintf("https://chatty.test/i%d.png", i), Status: 200,
			Header: []site.Field{{Name: "Content-Type", Value: "image/png"}}, Body: body})
	}
	doc := &site.Exchange{Method: "GET", URL: "https://chatty.test/", Status: 200,
		Header: []site.Field{{Name: "Content-Type", Value: "text/html; charset=utf-8"}}, Body: fmt.Appendf(nil, chattyPage, imgs.String())}
	a.Exchanges = append([]*site.Exchange{doc}, a.Exchanges...)
	dir := filepath.Join(t.TempDir(), "chatty")
	if err := site.WriteArchive(context.Background(), dir, a); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageInstance finds the page instance in an unmatched request's URL.
var pageInstance = regexp.MustCompile(`[?&]page=([a-z0-9]+)`)

// TestALoadHoldsOnlyItsOwnBrowsersTraffic loads a page that goes on
// fetching after its load and sends a beacon when left, over h3 and h2 in
// turn, in a fresh browser per load: each load's servers saw only its
// own protocol and at most one page instance, and its capture holds no
// packet of the other protocol's transport (UDP/443 in an h1 or h2 load,
// TCP/443 in an h3 load), whatever the previous load's browser did.
func TestALoadHoldsOnlyItsOwnBrowsersTraffic(t *testing.T) {
	testenv.RequireRoot(t)
	for _, c := range []struct {
		client factor.Client
		binary string
	}{{factor.ClientChromium, chromium.DefaultChromiumPath}, {factor.ClientFirefox, firefox.DefaultPath}} {
		t.Run(string(c.client), func(t *testing.T) {
			testenv.RequireFile(t, c.binary, "make deps")
			checkLoadsHoldOnlyTheirOwnTraffic(t, c.client)
		})
	}
}

func checkLoadsHoldOnlyTheirOwnTraffic(t *testing.T, client factor.Client) {
	dir := writeChattyArchive(t)
	// Seed 3 orders the 4 loads h3 h2 h3 h2 (the order is the seed's
	// alone): h2 follows h3 twice, h3 follows h2 once.
	res, store, runDir := runSpec(t, fmt.Sprintf(`seed: 3
repetitions: 2
retries: 0
netcheck: false
artifacts: {pcap: true}
replay: {max_unmatched: 100%%}
factors:
  networks: [{name: n, rtt: 40ms, down: 20mbit, up: 5mbit}]
  pages: ["archive:%s"]
  protocols: [h3, h2]
  clients: [%s]
`, dir, client))
	trials := trialsOf(t, store)
	slices.SortFunc(trials, func(a, b trialRecord) int { return int(a.Seq - b.Seq) })
	var order []string
	for _, tr := range trials {
		order = append(order, string(tr.Protocol))
	}
	t.Logf("order %v; %d done, %d failed", order, res.Done, res.Failed)
	if !strings.Contains(strings.Join(order, " "), "h3 h2") {
		t.Fatalf("order %v has no h2 load after an h3 load; choose another seed", order)
	}
	for i, tr := range trials {
		if tr.Status != results.StatusOK {
			t.Errorf("load %d (%s): %s", i+1, tr.Protocol, tr.Error)
		}
		instances := map[string]bool{}
		for _, u := range tr.UnmatchedURLs {
			if m := pageInstance.FindStringSubmatch(u); m != nil {
				instances[m[1]] = true
			}
		}
		t.Logf("load %d (%s): %d requests served, %d unmatched of %d page instances", i+1, tr.Protocol, tr.ServerRequests, len(tr.UnmatchedURLs), len(instances))
		if len(instances) != 1 {
			t.Errorf("load %d (%s): requests of %d page instances reached the servers, want its own one: %v", i+1, tr.Protocol, len(instances), tr.UnmatchedURLs)
		}
		checkCaptureHoldsOnly(t, runDir, i+1, tr)
	}
}

// checkCaptureHoldsOnly fails if tr's capture holds a packet to or from
// port 443 over the transport its protocol does not use.
func checkCaptureHoldsOnly(t *testing.T, runDir string, n int, tr trialRecord) {
	t.Helper()
	name, _, _ := strings.Cut(tr.Artifacts, ",")
	f, err := os.Open(filepath.Join(runDir, name))
	if err != nil {
		t.Fatalf("load %d: capture: %v", n, err)
	}
	defer f.Close()
	pkts, err := pcap.Read(f)
	if err != nil {
		t.Fatalf("load %d: %v", n, err)
	}
	other := byte(17) // UDP
	if tr.Protocol == factor.H3 {
		other = 6 // TCP
	}
	var stray []string
	for _, p := range pkts {
		if proto, src, dst, ok := transportPorts(p.Data); ok && proto == other && (src == 443 || dst == 443) {
			stray = append(stray, fmt.Sprintf("%d→%d at %v (% x)", src, dst, p.Time.Sub(pkts[0].Time), p.Data[min(len(p.Data), 32):min(len(p.Data), 34)]))
		}
	}
	if len(stray) > 0 {
		t.Errorf("load %d (%s): its capture of %d packets over %v holds %d over the other transport (IP protocol %d): %s",
			n, tr.Protocol, len(pkts), pkts[len(pkts)-1].Time.Sub(pkts[0].Time), len(stray), other, strings.Join(stray, ", "))
	}
}

// transportPorts reads an IPv4 packet's protocol and ports.
func transportPorts(ip []byte) (proto byte, src, dst uint16, ok bool) {
	if len(ip) < 20 || ip[0]>>4 != 4 {
		return 0, 0, 0, false
	}
	hl := int(ip[0]&0x0f) * 4
	if len(ip) < hl+4 {
		return 0, 0, 0, false
	}
	return ip[9], binary.BigEndian.Uint16(ip[hl:]), binary.BigEndian.Uint16(ip[hl+2:]), true
}
