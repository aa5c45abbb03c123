package factor

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Protocol is an HTTP version under test.
type Protocol string

// The protocols quicbench compares.
const (
	H1 Protocol = "h1" // HTTP/1.1 over TLS 1.3 over TCP
	H2 Protocol = "h2" // HTTP/2 over TLS 1.3 over TCP
	H3 Protocol = "h3" // HTTP/3 over QUIC
)

// Protocols is the protocol factor.
func Protocols() Enum[Protocol] {
	return Enum[Protocol]{What: "protocol", Levels: []Level[Protocol]{
		{H1, "HTTP/1.1 over TLS 1.3 over TCP"},
		{H2, "HTTP/2 over TLS 1.3 over TCP"},
		{H3, "HTTP/3 over QUIC"},
	}}
}

// NextHop is the nextHopProtocol value that Resource Timing reports for p
// (its ALPN name), or "" for an unknown protocol.
func (p Protocol) NextHop() string {
	switch p {
	case H1:
		return "http/1.1"
	case H2:
		return "h2"
	case H3:
		return "h3"
	}
	return ""
}

// Visit says what a measured load follows: nothing (a first visit) or an
// earlier load of the same page in the same browser (a repeat visit).
type Visit string

// The visit kinds.
const (
	FirstVisit  Visit = "first"
	RepeatVisit Visit = "repeat"
)

// Visits is the visit factor.
func Visits() Enum[Visit] {
	return Enum[Visit]{What: "visit", Levels: []Level[Visit]{
		{FirstVisit, "a new browser profile: no cache, no session tickets, no known QUIC servers"},
		{RepeatVisit, "the page is loaded once, the servers close every connection, and a second load in the same browser is measured"},
	}}
}

// Loads is how many times a trial of this visit loads the page (the last
// load is measured).
func (v Visit) Loads() int {
	if v == RepeatVisit {
		return 2
	}
	return 1
}

// Discovery says how a browser learns that the servers speak HTTP/3.
type Discovery string

// The discovery rules.
const (
	// DiscoveryForced forces each load's protocol from its first packet
	// (Chromium's --origin-to-force-quic-on, Firefox's forced mapping).
	DiscoveryForced Discovery = "forced"
	// DiscoveryAltSvc: the servers' TCP responses carry Alt-Svc for h3,
	// and the browser discovers, races and switches as it does by
	// default.
	DiscoveryAltSvc Discovery = "alt-svc"
	// DiscoveryHTTPSRR: the testbed's DNS answers an HTTPS record with
	// alpn h3 for each host (no Alt-Svc), which a browser that honours it
	// reads before its first connection (needs DNSResolved).
	DiscoveryHTTPSRR Discovery = "https-rr"
)

// Discoveries is the discovery factor.
func Discoveries() Enum[Discovery] {
	return Enum[Discovery]{What: "discovery", Levels: []Level[Discovery]{
		{DiscoveryForced, "the load's protocol is forced from its first packet: h3 as for a browser that already knows the site speaks it and never tries TCP"},
		{DiscoveryAltSvc, "h3 means the servers offer it (Alt-Svc: h3 on every TCP response, max-age a day), h1 and h2 that they do not; the browser connects over TCP, learns, races QUIC against TCP and switches as it does by default"},
		{DiscoveryHTTPSRR, "h3 means the testbed's DNS answers an HTTPS record with alpn h3 for every host (no Alt-Svc; needs dns: resolved), which a browser that honours it reads before its first connection"},
	}}
}

// DNS says how the browser finds the hosts' addresses.
type DNS string

// The DNS levels.
const (
	// DNSPinned maps every host to its address in the browser itself
	// (Chromium's --host-resolver-rules, Firefox's own /etc/hosts): no
	// lookup is made.
	DNSPinned DNS = "pinned"
	// DNSResolved: the browser looks the hosts up at the testbed's DNS
	// server, behind the emulated link, as a browser on that network
	// would.
	DNSResolved DNS = "resolved"
)

// DNSLevels is the DNS factor.
func DNSLevels() Enum[DNS] {
	return Enum[DNS]{What: "dns", Levels: []Level[DNS]{
		{DNSPinned, "every host is mapped to its address in the browser: no lookup, no DNS time"},
		{DNSResolved, "the browser looks every host up at the testbed's DNS server in the servers namespace, behind the emulated link: each lookup pays a round trip"},
	}}
}

// Resolves reports whether the browser makes its own lookups.
func (d DNS) Resolves() bool { return d == DNSResolved }

// Discovers reports whether the browser is left to discover h3 rather
// than having it forced.
func (d Discovery) Discovers() bool { return d != "" && d != DiscoveryForced }

// AltSvcMaxAge is how long, in seconds, the servers' Alt-Svc lets a
// browser remember h3 (a day).
const AltSvcMaxAge = 86400

// Cache says whether the servers' responses may be cached.
type Cache string

// The cache levels.
const (
	CacheOff Cache = "off"
	CacheOn  Cache = "on"
)

// Caches is the cache factor.
func Caches() Enum[Cache] {
	return Enum[Cache]{What: "cache", Levels: []Level[Cache]{
		{CacheOff, "every response says Cache-Control: no-store"},
		{CacheOn, "max-age=86400, an ETag and a fixed Last-Modified, with 304 answers, so a repeat visit can use the browser's cache"},
	}}
}

// On reports whether responses are cacheable.
func (c Cache) On() bool { return c == CacheOn }

// CacheOf is the level of a boolean: CacheOn for true.
func CacheOf(on bool) Cache {
	if on {
		return CacheOn
	}
	return CacheOff
}

// Visual says whether a trial captures its frames for visual metrics.
type Visual string

// The visual levels.
const (
	VisualOff Visual = "off"
	VisualOn  Visual = "on"
)

// Visuals is the visual factor: capturing frames costs CPU during the
// load, so visual trials are trials of their own and timing trials stay
// unperturbed.
func Visuals() Enum[Visual] {
	return Enum[Visual]{What: "visual", Levels: []Level[Visual]{
		{VisualOff, "no frames: the load's timing is not perturbed"},
		{VisualOn, "Chromium's frames are captured for First and Last Visual Change, Speed Index and Visually Complete, at some CPU cost during the load"},
	}}
}

// On reports whether frames are captured.
func (v Visual) On() bool { return v == VisualOn }

// VisualOf is the level of a boolean: VisualOn for true.
func VisualOf(on bool) Visual {
	if on {
		return VisualOn
	}
	return VisualOff
}

// Server is the server stack that serves h1 and h2 (h3 is quic-go's).
type Server string

// The server stacks.
const (
	ServerGo    Server = "go"
	ServerNginx Server = "nginx"
	ServerCaddy Server = "caddy"
)

// ServerTraits are what a server stack of h1 and h2 can do besides
// serving: Replays, it replays recorded sites (their statuses, header
// fields and queries: archive pages).
type ServerTraits struct{ Replays bool }

// servers declares each server stack of h1 and h2 with its traits.
func servers() []Declared[Server, ServerTraits] {
	return []Declared[Server, ServerTraits]{
		{Level[Server]{ServerGo, "Go's net/http, the Go origin in a process of its own"}, ServerTraits{Replays: true}},
		{Level[Server]{ServerNginx, "Debian's nginx in the servers namespace, the same files and headers over TLS 1.3"}, ServerTraits{}},
		{Level[Server]{ServerCaddy, "Debian's Caddy in the servers namespace, the same responses and header fields over TLS 1.3 (archive pages as recorded); with quic: caddy, h3 from the same process"}, ServerTraits{Replays: true}},
	}
}

// Servers is the server-stack factor.
func Servers() Enum[Server] { return enumOf("server", servers()) }

// Replays reports whether s replays recorded sites (archive pages): their
// statuses, header fields and queries.
func (s Server) Replays() bool { return traitsOf(servers(), s).Replays }

// ServersThat lists the servers that ok accepts, such as "go".
func ServersThat(ok func(Server) bool) string {
	return namesThat(servers(), func(d Declared[Server, ServerTraits]) bool { return ok(d.Name) })
}

// Stack is the servers' TCP stack for h1 and h2; package stacks applies it.
type Stack string

// The TCP stacks (Wolsing et al. 2019, Table 1).
const (
	StackTCP        Stack = "tcp"
	StackTCPPlus    Stack = "tcp+"
	StackTCPPlusBBR Stack = "tcp+bbr"
)

// Stacks is the TCP-stack factor.
func Stacks() Enum[Stack] {
	return Enum[Stack]{What: "stack", Levels: []Level[Stack]{
		{StackTCP, "stock TCP: initial window 10, CUBIC, slow start after idle, default buffers, no pacing"},
		{StackTCPPlus, "tuned TCP: initial window 32, CUBIC with pacing, no slow start after idle, 32 MiB buffers"},
		{StackTCPPlusBBR, "tcp+ with BBR instead of CUBIC"},
	}}
}

// Client is what loads the pages.
type Client string

// The clients.
const (
	ClientChromium Client = "chromium"
	// ClientChromiumShell is Chromium's headless shell: the same network
	// stack, Blink and V8 without the browser's own layer (its windows,
	// profiles' services, predictors), which starts and opens a context
	// in a third of the time.
	ClientChromiumShell Client = "chromium-shell"
	ClientFirefox       Client = "firefox"
	ClientLoader        Client = "loader"
)

// Capabilities are what a client can do. The experiment and the spec's
// checks ask for these, never for a client's name.
type Capabilities struct {
	// Renders: the client runs the page's scripts and draws it, as a
	// browser does, so it loads what scripts request and reports paint
	// timings (FCP, LCP); its start costs about half a second.
	Renders bool
	// Frames: it captures a load's frames for visual metrics.
	Frames bool
	// HAR: it writes a HAR 1.2 file of the measured visit.
	HAR bool
	// NetLog: it writes its own log of the network (a browser's net log)
	// of a load, from the browser's start to its end.
	NetLog bool
	// RepeatVisits: it loads a page a second time with the first load's
	// TLS sessions, QUIC state and cache.
	RepeatVisits bool
	// Warm: it can keep a browser running and give each load a context of
	// its own (browser: warm).
	Warm bool
	// CPUCap: it runs in processes of its own, whose CPU a cgroup can cap
	// (client_cpu).
	CPUCap bool
	// Discovers: it learns of h3 from the servers' Alt-Svc and races QUIC
	// against TCP on its own (a discovery rule other than forced).
	Discovers bool
	// Resolves: it can look the hosts up at the testbed's DNS server (dns
	// resolved).
	Resolves bool
}

// clients declares each client with what it can do, built once: a plan's
// duration model asks for every trial of a paper-scale design. Read only.
var clients = sync.OnceValue(func() []Declared[Client, Capabilities] {
	return []Declared[Client, Capabilities]{
		{Level[Client]{ClientChromium, "real headless Chromium"},
			Capabilities{Renders: true, Frames: true, HAR: true, NetLog: true, RepeatVisits: true, Warm: true, CPUCap: true, Discovers: true, Resolves: true}},
		{Level[Client]{ClientChromiumShell, "Chromium's headless shell (chromium-headless-shell): Chromium's network stack, Blink and V8 without the browser's own layer; a context opens in about a third of Chromium's time"},
			Capabilities{Renders: true, Frames: true, HAR: true, NetLog: true, RepeatVisits: true, Warm: true, CPUCap: true, Discovers: true, Resolves: true}},
		{Level[Client]{ClientFirefox, "real headless Firefox (ESR): its own HTTP/3 stack, neqo"},
			Capabilities{Renders: true, Frames: true, HAR: true, NetLog: true, RepeatVisits: true, Warm: true, CPUCap: true, Discovers: true, Resolves: true}},
		{Level[Client]{ClientLoader, "the built-in Go loader: no JavaScript, no rendering"},
			Capabilities{HAR: true, RepeatVisits: true}},
	}
})

// Clients is the client factor.
func Clients() Enum[Client] { return enumOf("client", clients()) }

// Capabilities is what c can do; none for a client that is not a level.
func (c Client) Capabilities() Capabilities { return traitsOf(clients(), c) }

// ClientsThat lists the clients that have what ok asks for, such as
// "chromium" for frames.
func ClientsThat(ok func(Capabilities) bool) string {
	return namesThat(clients(), func(d Declared[Client, Capabilities]) bool { return ok(d.Traits) })
}

// Browser is how the Chromium client starts its browsers.
type Browser string

// The browser modes.
const (
	BrowserFresh Browser = "fresh"
	BrowserWarm  Browser = "warm"
)

// Browsers is the browser-mode factor.
func Browsers() Enum[Browser] {
	return Enum[Browser]{What: "browser", Levels: []Level[Browser]{
		{BrowserFresh, "a new browser and profile per load"},
		{BrowserWarm, "a browser per protocol and a new browser context per load: less overhead"},
	}}
}

// MaxOrigins is the most origins a page can be spread over.
const MaxOrigins = 64

// MaxServers is the most server addresses a testbed can hold (origins,
// or `quicbench shell --servers`).
const MaxServers = 200

// ParseOrigins parses a number of origins, 1 to MaxOrigins.
func ParseOrigins(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("origins %q is not a whole number from 1 to %d", s, MaxOrigins)
	}
	return n, CheckOrigins(n)
}

// CheckOrigins reports a number of origins outside 1 to MaxOrigins.
func CheckOrigins(n int) error {
	if n < 1 || n > MaxOrigins {
		return fmt.Errorf("origins %d is outside 1 to %d", n, MaxOrigins)
	}
	return nil
}

// QUICServer is the server that serves h3.
type QUICServer string

// The QUIC servers.
const (
	QUICGo     QUICServer = "quic-go"
	QUICQuinn  QUICServer = "quinn"
	QUICQuiche QUICServer = "quiche"
	QUICCaddy  QUICServer = "caddy"
)

// CC is a QUIC congestion controller.
type CC string

// The QUIC congestion controllers.
const (
	CCNewReno CC = "newreno"
	CCCubic   CC = "cubic"
	CCBBR     CC = "bbr"
	CCReno    CC = "reno"
	CCBBR2    CC = "bbr2"
)

// Controllers is the QUIC congestion-control factor.
func Controllers() Enum[CC] {
	return Enum[CC]{What: "QUIC congestion control", Levels: []Level[CC]{
		{CCNewReno, "NewReno (RFC 9002)"},
		{CCCubic, "CUBIC (RFC 9438)"},
		{CCBBR, "BBR (version 1 in quinn)"},
		{CCReno, "Reno as quiche names it (RFC 9002's NewReno sender)"},
		{CCBBR2, "BBRv2 (quiche's gcongestion, a port of Google QUICHE's)"},
	}}
}

// Backoff is the share of its window a congestion control keeps when it
// learns of a loss: 0.7 for CUBIC (RFC 9438's β; Linux's 717/1024), 0.5
// for Reno and NewReno (RFC 5681, RFC 9002), 1 for BBR (versions 1 and 2
// do not shrink their window on a single loss); false for a name it does
// not know. cc is a QUIC controller's name or a Linux TCP congestion
// control's (cubic, reno, bbr).
func Backoff(cc string) (float64, bool) {
	switch CC(cc) {
	case CCCubic:
		return 0.7, true
	case CCNewReno, CCReno:
		return 0.5, true
	case CCBBR, CCBBR2:
		return 1, true
	}
	return 0, false
}

// Backoff is the share of its window the server's controller cc keeps
// when it learns of a loss, as the server's code sets it: quic-go's
// NewReno (and Caddy's quic-go 0.29's) is its CUBIC sender in Reno mode,
// which keeps 0.7 (renoBeta), not NewReno's 0.5; the others' as Backoff
// names them.
func (s QUICServer) Backoff(cc CC) (float64, bool) {
	if s == QUICGo || s == QUICCaddy {
		return 0.7, true
	}
	return Backoff(string(cc))
}

// quicServers declares each QUIC server with its congestion controllers,
// its default first. Its stacks (the QUIC factor) are "SERVER+CC", or the
// server's name alone for a server with one controller.
func quicServers() []Declared[QUICServer, []CC] {
	return []Declared[QUICServer, []CC]{
		{Level[QUICServer]{QUICGo, "quic-go's http3, the Go origin in a process of its own"}, []CC{CCNewReno}},
		{Level[QUICServer]{QUICQuinn, "quicbench-h3 (quinn, h3, rustls) in its own process, the same responses and header fields"}, []CC{CCCubic, CCNewReno, CCBBR}},
		{Level[QUICServer]{QUICQuiche, "quicbench-quiche (Cloudflare's quiche with BoringSSL) in its own process, the same responses and header fields"}, []CC{CCCubic, CCReno, CCBBR2}},
		{Level[QUICServer]{QUICCaddy, "Debian's Caddy 2.6 (quic-go 0.29 inside) in the servers namespace, the same responses and header fields"}, []CC{CCNewReno}},
	}
}

// QUICServers is the QUIC-server factor.
func QUICServers() Enum[QUICServer] { return enumOf("QUIC server", quicServers()) }

// Controllers lists the server's congestion controllers, its default
// first; none for a server that is not a level.
func (q QUICServer) Controllers() []CC { return traitsOf(quicServers(), q) }

// QUIC is the stack that serves h3: a QUIC server with one of its
// congestion controllers, written "SERVER+CC" ("quic-go" alone: it has
// only NewReno). Package stacks says what each level runs.
type QUIC string

// The QUIC stacks the code names.
const (
	QUICGoNewReno    QUIC = "quic-go"
	QUICQuinnCubic   QUIC = "quinn+cubic"
	QUICQuinnNewReno QUIC = "quinn+newreno"
	QUICQuinnBBR     QUIC = "quinn+bbr"
	QUICQuicheCubic  QUIC = "quiche+cubic"
	QUICQuicheReno   QUIC = "quiche+reno"
	QUICQuicheBBR2   QUIC = "quiche+bbr2"
	QUICCaddyNewReno QUIC = "caddy"
)

// QUICs is the QUIC-stack factor: every server with each of its
// controllers, in declaration order.
func QUICs() Enum[QUIC] {
	e := Enum[QUIC]{What: "QUIC stack"}
	for _, d := range quicServers() {
		for _, cc := range d.Traits {
			meaning := fmt.Sprintf("%s with %s", d.Name, Controllers().Meaning(cc))
			if len(d.Traits) == 1 {
				meaning += ", its only controller"
			}
			e.Levels = append(e.Levels, Level[QUIC]{stackOf(d.Name, cc), meaning})
		}
	}
	return e
}

// stackOf names server's stack with controller cc.
func stackOf(server QUICServer, cc CC) QUIC {
	if len(server.Controllers()) == 1 {
		return QUIC(server)
	}
	return QUIC(string(server) + "+" + string(cc))
}

// Experimental says why q's controller is experimental, "" when it is not:
// a result of an experimental stack measures that implementation, not the
// algorithm.
func (q QUIC) Experimental() string {
	if q == QUICQuinnBBR {
		return "quinn marks its BBR experimental; on an open connection it holds 1 MB at 26 Mbit/s of 100 (BENCHMARKS.md)"
	}
	return ""
}

// Server is q's QUIC server.
func (q QUIC) Server() QUICServer {
	server, _, _ := strings.Cut(string(q), "+")
	return QUICServer(server)
}

// CC is q's congestion controller: its server's only one when q names
// none.
func (q QUIC) CC() CC {
	if _, cc, ok := strings.Cut(string(q), "+"); ok {
		return CC(cc)
	}
	if ccs := q.Server().Controllers(); len(ccs) > 0 {
		return ccs[0]
	}
	return ""
}

// ControllersUsage says each QUIC server's controllers, its default first,
// such as "quic-go: newreno; quinn: cubic, newreno or bbr".
func ControllersUsage() string {
	var parts []string
	for _, d := range quicServers() {
		names := make([]string, len(d.Traits))
		for i, c := range d.Traits {
			names[i] = string(c)
		}
		parts = append(parts, string(d.Name)+": "+orList(names))
	}
	return strings.Join(parts, "; ")
}

// QUICOf is the stack of server with controller cc ("" for the server's
// default, its first), or an error that says which controllers the server
// has.
func QUICOf(server QUICServer, cc CC) (QUIC, error) {
	ccs := server.Controllers()
	if len(ccs) == 0 {
		return "", fmt.Errorf("QUIC server %q is unknown: use %s", server, QUICServers().Names())
	}
	if cc == "" {
		cc = ccs[0]
	}
	if !slices.Contains(ccs, cc) {
		have := make([]string, len(ccs))
		for i, c := range ccs {
			have[i] = string(c)
		}
		return "", fmt.Errorf("QUIC server %s has no congestion control %q: use %s", server, cc, orList(have))
	}
	return stackOf(server, cc), nil
}

// ClientCPU is how much CPU the client may use: "unlimited", or a number
// of cores (CPU time per wall time, so "0.5" is half of one core spread
// over the load) — the device class a load stands for.
type ClientCPU string

// ClientCPUUnlimited is a client with the machine's CPU.
const ClientCPUUnlimited ClientCPU = "unlimited"

// The bounds of a client CPU level, in cores: the least a kernel cap
// holds (1 ms in its 10 ms period), and a ceiling far above any host.
const (
	MinClientCPU float64 = 0.1
	MaxClientCPU float64 = 1024
)

// ParseClientCPU reads a client CPU level, "unlimited" or cores from
// MinClientCPU to MaxClientCPU, as its canonical text ("1", "0.5").
func ParseClientCPU(s string) (ClientCPU, error) {
	if strings.TrimSpace(s) == string(ClientCPUUnlimited) {
		return ClientCPUUnlimited, nil
	}
	cores, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(cores) || cores < MinClientCPU || cores > MaxClientCPU {
		return "", fmt.Errorf("client CPU %q is neither %q nor a number of cores from %g to %g (such as 1 or 0.5)", s, ClientCPUUnlimited, MinClientCPU, MaxClientCPU)
	}
	return ClientCPU(strconv.FormatFloat(cores, 'g', -1, 64)), nil
}

// Cores is the level's cores, 0 for unlimited (or no level).
func (c ClientCPU) Cores() float64 {
	cores, err := strconv.ParseFloat(string(c), 64)
	if err != nil {
		return 0
	}
	return cores
}

// clientCPUWords is a level as a label reads: "1 client core", "0.5
// client cores", "unlimited client CPU".
func clientCPUWords(level string) string {
	switch level {
	case string(ClientCPUUnlimited), "":
		return "unlimited client CPU"
	case "1":
		return "1 client core"
	}
	return level + " client cores"
}
