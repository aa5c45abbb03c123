package results

import (
	"math"
	"reflect"
	"time"

	"github.com/quicbench/quicbench/internal/factor"
)

// Trial statuses.
const (
	StatusOK     = "ok"     // verified load
	StatusFailed = "failed" // every attempt failed; Error says why the last one did
)

// Trial is one trial's row: its factor levels and their resolved values,
// its seeds, outcome, metrics and link counters. Times are milliseconds
// from navigation start; a failed trial's metrics are nil (SQL NULL, JSON
// null, an empty CSV field).
type Trial struct {
	ID  string `parquet:"trial_id"`
	Seq int64  `parquet:"seq"` // position in the plan's order, from 1
	Rep int64  `parquet:"rep"` // repetition, from 1
	Levels
	QUICValues
	NetworkValues
	PageValues
	Seeds
	Outcome
	ProtocolUse
	ReplayValues
	Metrics
	VisualMetrics
	Bound
	CPU
	Link
	Stalls
	Parts
	StartedAt  time.Time `parquet:"started_at,timestamp(microsecond)"`
	FinishedAt time.Time `parquet:"finished_at,timestamp(microsecond)"`
	// Artifacts are the pcap, qlog, HAR and net log paths in the run
	// directory, comma-separated.
	Artifacts string `parquet:"artifacts"`
}

// Levels are the trial's factor levels as the spec names them: one field
// per factor of factor.Table, named by its column (Factors and LevelsOf
// convert, a test keeps the two in step).
type Levels struct {
	Network string        `parquet:"network"` // the network's name
	Page    string        `parquet:"page"`    // such as "synthetic:32x10KB"
	Origins int64         `parquet:"origins"`
	Stack   factor.Stack  `parquet:"stack"`
	Server  factor.Server `parquet:"server"`
	// QUIC is the stack that served h3 in the trial's testbed, such as
	// "quinn+cubic"; a run made before the column existed reads as its
	// quic_server and quic_cc say (quic-go if they are empty).
	QUIC     factor.QUIC     `parquet:"quic"`
	Protocol factor.Protocol `parquet:"protocol"`
	// Discovery is how the browser learned of h3: "forced", or
	// "alt-svc" (h3 means the servers offered it); a run made before the
	// column existed reads as forced.
	Discovery factor.Discovery `parquet:"discovery"`
	// DNS is how the browser found the hosts: "pinned" (also "" in a run
	// made before the column existed) or "resolved".
	DNS    factor.DNS    `parquet:"dns"`
	Visit  factor.Visit  `parquet:"visit"`
	Cache  bool          `parquet:"cache"`
	Client factor.Client `parquet:"client"`
	// ClientCPU is the cores the client could use; null: unlimited.
	ClientCPU *float64       `parquet:"client_cpu,optional"`
	Browser   factor.Browser `parquet:"browser"`
	Visual    bool           `parquet:"visual"` // frames captured, visual metrics computed
}

// QUICValues are the parts of the trial's QUIC stack: its server (quic-go
// or quinn) and congestion control; empty in a run made before they were
// recorded, when quic-go served h3.
type QUICValues struct {
	QUICServer factor.QUICServer `parquet:"quic_server"`
	QUICCC     factor.CC         `parquet:"quic_cc"`
}

// NetworkValues are the network's resolved values, per direction where
// they differ: up is client → servers, down servers → client.
type NetworkValues struct {
	RTTMs    float64 `parquet:"rtt_ms"`    // round trip the link adds
	JitterMs float64 `parquet:"jitter_ms"` // ± per packet, one way
	DirectionValues
	DropHead bool  `parquet:"drop_head"` // full queues drop their oldest packet
	Paths    Paths `parquet:"paths,list"`
	// UDP is what the network did to UDP: "pass" (also "" in runs made
	// before it was recorded), "block", "block-after-N" or a policing rate
	// such as "1mbit".
	UDP string `parquet:"udp"`
}

// DirectionValues are both directions' loss, rate and queue.
type DirectionValues struct {
	// LossModelUp is "none", "bernoulli" or "gilbert-elliott"; LossUpPct its
	// mean loss in percent; the GE columns its parameters in percent
	// (netem's p, r, 1−h, 1−k), null for the other models.
	LossModelUp       string   `parquet:"loss_model_up"`
	LossUpPct         float64  `parquet:"loss_up_pct"`
	GEPUpPct          *float64 `parquet:"ge_p_up_pct,optional"`
	GERUpPct          *float64 `parquet:"ge_r_up_pct,optional"`
	GELossBadUpPct    *float64 `parquet:"ge_loss_bad_up_pct,optional"`
	GELossGoodUpPct   *float64 `parquet:"ge_loss_good_up_pct,optional"`
	LossModelDown     string   `parquet:"loss_model_down"`
	LossDownPct       float64  `parquet:"loss_down_pct"`
	GEPDownPct        *float64 `parquet:"ge_p_down_pct,optional"`
	GERDownPct        *float64 `parquet:"ge_r_down_pct,optional"`
	GELossBadDownPct  *float64 `parquet:"ge_loss_bad_down_pct,optional"`
	GELossGoodDownPct *float64 `parquet:"ge_loss_good_down_pct,optional"`
	// RateUpBps is the constant rate in bit/s, 0 for unlimited or a trace;
	// TraceUp the trace's file ("" for none) and TraceUpMeanBps its mean.
	RateUpBps        int64    `parquet:"rate_up_bps"`
	TraceUp          string   `parquet:"trace_up"`
	TraceUpMeanBps   *float64 `parquet:"trace_up_mean_bps,optional"`
	RateDownBps      int64    `parquet:"rate_down_bps"`
	TraceDown        string   `parquet:"trace_down"`
	TraceDownMeanBps *float64 `parquet:"trace_down_mean_bps,optional"`
	// Queue bounds in bytes and packets, 0 for none.
	QueueUpBytes     int64 `parquet:"queue_up_bytes"`
	QueueUpPackets   int64 `parquet:"queue_up_packets"`
	QueueDownBytes   int64 `parquet:"queue_down_bytes"`
	QueueDownPackets int64 `parquet:"queue_down_packets"`
}

// PageValues describe the page's make-up.
type PageValues struct {
	PageKind        factor.PageKind `parquet:"page_kind"`
	PageObjects     int64           `parquet:"page_objects"`      // objects the document loads
	PageObjectBytes int64           `parquet:"page_object_bytes"` // bytes per object
	PageBytes       int64           `parquet:"page_bytes"`        // every file of the site, the document included
}

// Seeds are the trial's random streams (package plan derives them).
type Seeds struct {
	Seed     int64 `parquet:"seed"` // the spec's
	UpSeed   int64 `parquet:"up_seed"`
	DownSeed int64 `parquet:"down_seed"`
	PageSeed int64 `parquet:"page_seed"`
	// Paired says the load started from its repetition's link seeds
	// (up_seed, down_seed; spec pairing): the trials of one setting and
	// repetition with equal seeds met the same packet fates.
	Paired bool `parquet:"paired"`
}

// Outcome is how the trial went.
type Outcome struct {
	Status           string `parquet:"status"` // StatusOK or StatusFailed
	Attempts         int64  `parquet:"attempts"`
	Error            string `parquet:"error"`             // the last attempt's, for a failed trial
	DocumentProtocol string `parquet:"document_protocol"` // nextHopProtocol of the document
	// LandedURL is the document the tab ended on when it was not the page
	// asked for (a redirect, or the page's scripts navigated it; its
	// metrics are that document's); "" when it was the page.
	LandedURL      string `parquet:"landed_url"`
	ServerRequests int64  `parquet:"server_requests"` // requests the servers served during the measured load
	Connections    int64  `parquet:"connections"`     // client connections the servers accepted (table connections)
	// Handshakes counts the connections by handshake, such as "0rtt:1" or
	// "resumed:3,full:3".
	Handshakes    string `parquet:"handshakes"`
	TCPCongestion string `parquet:"tcp_congestion"` // of the first TCP connection that reports one
	// SkippedRequests counts the page's requests the client does not
	// make: those only its scripts make, for the built-in loader (0 for
	// Chromium, and for pages without scripts).
	SkippedRequests int64 `parquet:"skipped_requests"`
	// UnmatchedRequests counts the requests of the measured load the
	// site did not have: the servers answered 404, and the trial failed.
	UnmatchedRequests int64 `parquet:"unmatched_requests"`
	// LiveExcluded counts a live load's requests left out of its
	// verification: to hosts the run does not pin (never sent; listed in
	// unmatched_urls with cause "host not pinned"), and over another
	// protocol to pinned hosts that do not offer the one asked for (an h3
	// load's requests to a host without HTTP/3).
	LiveExcluded int64 `parquet:"live_excluded"`
	// DNSQueries counts the questions the testbed's resolver answered
	// during the measured visit: the browser's lookups under dns:
	// resolved (A, AAAA, HTTPS), its own background ones included; 0
	// with dns pinned, which asks none.
	DNSQueries int64 `parquet:"dns_queries"`
}

// ProtocolUse is what the measured load's requests used as its browser
// reported them (the document and its Resource Timing entries, none from
// the browser's cache): requests and transfer bytes over h3 and over TCP
// (h2, http/1.1); first_h3_ms when its first request over h3 started, in
// ms from navigation start (null: none did); tcp_after_offer the requests
// over TCP that started once their host had offered h3 (discovery: the
// browser kept its TCP connection, QUIC lost the race, or was marked
// broken). A load under a discovery rule is mixed by design; zeros in a
// run made before they were recorded.
type ProtocolUse struct {
	H3Requests    int64    `parquet:"h3_requests"`
	TCPRequests   int64    `parquet:"tcp_requests"`
	H3Bytes       int64    `parquet:"h3_bytes"`
	TCPBytes      int64    `parquet:"tcp_bytes"`
	FirstH3       *float64 `parquet:"first_h3_ms,optional"`
	TCPAfterOffer int64    `parquet:"tcp_after_offer"`
}

// Causes of an unmatched request (ReplayValues.UnmatchedCauses).
const (
	CauseBrowserOwn = "browser's own" // favicon, icons, manifest: excused
	// CauseNavigation is the tab's navigation away from the page to a URL
	// the recording lacks, which the browser held so that the tab stays on
	// the page as recorded (client.Request.Documents): excused.
	CauseNavigation = "held navigation"
	CauseSteady     = "steady"     // unmatched in an earlier load of the testbed, no sibling recorded: excused
	CauseSibling    = "sibling"    // the recording holds the same file at other sizes: counted
	CauseUnrecorded = "unrecorded" // first unmatched in this load, no sibling: counted
	// CauseUnpinned is a live page's request to a host the run does not
	// pin (the page's own and --resolve's): the browser did not send it.
	// Excused, and counted in live_excluded.
	CauseUnpinned = "host not pinned"
)

// Causes of a broken image (ReplayValues.BrokenImageCauses): an image the
// browser could not show.
const (
	// BrokenNoImage: the recording holds a response for it that is no
	// image (an error page, an empty body): excused.
	BrokenNoImage = "no image recorded"
	// BrokenUnrecorded: the recording lacks it, or its host: excused.
	BrokenUnrecorded = "unrecorded"
	// BrokenHeld: the recording holds an image for it that the load
	// did not show: the load fails.
	BrokenHeld = "recorded image"
)

// ReplayValues are how the servers matched the measured load's requests
// against the site (all exact for a generated page): answered from the
// exact recorded request, from the nearest recorded query of the same
// host, method and path (fuzzy), from the nearest recorded size of an
// image or media file the recording holds only at other sizes (variant:
// same host, method and file name, at most two other path segments
// differing), or with 404 (unmatched_requests, whose
// first 200 are listed as "METHOD URL"); a recording's requests to hosts
// it lacks fail to resolve in the browser and never reach a server: the
// browser lists them and they are unmatched too. Of the unmatched, the browser's
// own (favicon, icons, manifest), the tab's navigations away from the page
// to URLs the recording lacks (held_navigations: the browser held them,
// and the tab stayed; a page's scripts may leave a page outside the
// browser it was recorded in) and the steady ones (unmatched in an
// earlier load of the testbed, with no sibling in the recording) do not
// count against a recording's tolerance; sibling_unmatched are those the
// recording holds a sibling of (the same file name beside other sizes),
// which always count. ServedBytes counts the response bodies the servers sent;
// page_bytes is what the site holds. LoadRequests and LoadBytes are the
// page's work up to its load event as the browser saw it: the Resource
// Timing entries started by loadEventStart and their bytes (a recorded
// page's: the bodies the servers send for them, the same in every
// browser, made 2026-11-29 on, before which the browser's transfer sizes,
// 0 for a cross-origin resource without Timing-Allow-Origin; a generated
// or live page's: the transfer sizes), neither the
// document nor the browser's own requests (a manifest) included; what the servers count also has requests after the load
// (beacons, late frames), whose number varies from load to load.
// variant_urls lists the first 200 requests answered with a variant as
// "METHOD URL TARGET", TARGET the recorded request target whose response
// answered. unmatched_causes gives each listed unmatched request's cause, in
// order: CauseBrowserOwn, CauseNavigation, CauseSteady (all three
// excused), CauseSibling or CauseUnrecorded (both counted).
// Broken images are those the browser
// could not show that the recording holds no image for (recorded) or
// lacks (unserved); a broken image the recording holds fails the load.
// broken_image_urls lists the first 200 broken images' URLs and
// broken_image_causes each one's cause, in order (BrokenNoImage,
// BrokenUnrecorded or BrokenHeld).
type ReplayValues struct {
	ReplayExact          int64   `parquet:"replay_exact"`
	ReplayFuzzy          int64   `parquet:"replay_fuzzy"`
	ReplayVariant        int64   `parquet:"replay_variant"`
	UnmatchedURLs        Strings `parquet:"unmatched_urls,list"`
	UnmatchedCauses      Strings `parquet:"unmatched_causes,list"`
	VariantURLs          Strings `parquet:"variant_urls,list"`
	BrowserOwnUnmatched  int64   `parquet:"browser_own_unmatched"`
	HeldNavigations      int64   `parquet:"held_navigations"`
	SteadyUnmatched      int64   `parquet:"steady_unmatched"`
	SiblingUnmatched     int64   `parquet:"sibling_unmatched"`
	ServedBytes          int64   `parquet:"served_bytes"`
	LoadRequests         int64   `parquet:"load_requests"`
	LoadBytes            int64   `parquet:"load_bytes"`
	BrokenImagesRecorded int64   `parquet:"broken_images_recorded"`
	BrokenImagesUnserved int64   `parquet:"broken_images_unserved"`
	BrokenImageURLs      Strings `parquet:"broken_image_urls,list"`
	BrokenImageCauses    Strings `parquet:"broken_image_causes,list"`
}

// Metrics are the measured load's times in ms from navigation start:
// PLT is loadEventEnd (the papers' PLT), OnLoad loadEventStart (onLoad in
// HAR), DCL DOMContentLoaded, TTFB the document's first byte. Overhead is
// what the harness added: the time from the previous trial's record on the
// same testbed (or from the testbed's netcheck) to this one's, less PLT and
// FirstVisitPLT: the client's part and the runner's (runs before
// 2026-11-25: Wall − PLT − FirstVisitPLT, the client's part alone).
type Metrics struct {
	PLT           *float64 `parquet:"plt_ms,optional"`
	OnLoad        *float64 `parquet:"onload_ms,optional"`
	DCL           *float64 `parquet:"dcl_ms,optional"`
	TTFB          *float64 `parquet:"ttfb_ms,optional"`
	FirstVisitPLT *float64 `parquet:"first_visit_plt_ms,optional"`
	Wall          *float64 `parquet:"wall_ms,optional"`
	Overhead      *float64 `parquet:"overhead_ms,optional"`
	BrowserStart  *float64 `parquet:"browser_start_ms,optional"`
	// FCP is First Contentful Paint and LCP the latest Largest Contentful
	// Paint candidate when the metrics were read (after 2 s more for a
	// visual trial); nil if the browser reported none.
	FCP *float64 `parquet:"fcp_ms,optional"`
	LCP *float64 `parquet:"lcp_ms,optional"`
}

// Bound is the load's physical lower bound on its network (site.Bound):
// the dependency chain's round trips with the protocol's handshakes, and
// the page's bytes at the bottleneck rate; Excess is PLT − bound, what the
// transport, browser and servers added. Nil for a repeat visit with the
// cache on (what the cache serves costs nothing) and for a failed trial's
// excess.
type Bound struct {
	BoundMs         *float64 `parquet:"bound_ms,optional"`
	BoundChainMs    *float64 `parquet:"bound_chain_ms,optional"`
	BoundChainRTTs  *float64 `parquet:"bound_chain_rtts,optional"`
	BoundTransferMs *float64 `parquet:"bound_transfer_ms,optional"`
	// BoundHandshakeRTTs is the round trips a connection takes before
	// its first request: 2 over TCP + TLS 1.3, 1 over QUIC, 0 with 0-RTT.
	BoundHandshakeRTTs int64    `parquet:"bound_handshake_rtts"`
	ExcessMs           *float64 `parquet:"excess_ms,optional"`
}

// CPU is the CPU time the load's parties used over its measured visit,
// from just before its navigation to just after its load event as the
// harness saw them (cpu_window_ms), in ms of CPU (a whole core for the
// window uses cpu_window_ms): the client's processes (the browser's whole
// tree; null for the built-in loader, which runs in quicbench's process),
// the process of the server stack that served the trial's protocol
// (server_process: go, nginx, quinn or quiche; null in runs made before
// the Go origin had a process of its own, when it ran in quicbench's),
// and quicbench's own process (the emulator and the harness, and the
// loader when it takes part). emulator_busy_ms
// is the time the emulator's loops worked, by their own clocks: an upper
// bound of their CPU. idle_pct is the share of the machine's CPU time
// left idle. cpu_method says how the client and server were counted:
// "cgroup2" (a cgroup per party: every process, µs) or "proc" (their
// process trees in /proc: 10 ms ticks, exited processes counted once
// waited for); "" in a run made before CPU was measured, whose CPU columns
// are null. cpu_bound names the party that waited for a CPU for at least
// 10 % of the window (CPUWaits; the client beyond its cap's throttling):
// "client", "server" or "quicbench", or "machine" when only the machine's
// pressure was measured; "" for a load that was not CPU-bound (a client
// on CPUs of its own is judged by client_cpus_others_ms). Where no
// wait was measured, and in runs made before waits were, it names the
// party that used at least 0.8 of a core over the window, or "machine"
// when less than 10 % of it was idle.
type CPU struct {
	CPUMethod            string   `parquet:"cpu_method"`
	CPUWindowMs          *float64 `parquet:"cpu_window_ms,optional"`
	ClientCPUUserMs      *float64 `parquet:"client_cpu_user_ms,optional"`
	ClientCPUSystemMs    *float64 `parquet:"client_cpu_system_ms,optional"`
	ServerProcess        string   `parquet:"server_process"`
	ServerCPUUserMs      *float64 `parquet:"server_cpu_user_ms,optional"`
	ServerCPUSystemMs    *float64 `parquet:"server_cpu_system_ms,optional"`
	QuicbenchCPUUserMs   *float64 `parquet:"quicbench_cpu_user_ms,optional"`
	QuicbenchCPUSystemMs *float64 `parquet:"quicbench_cpu_system_ms,optional"`
	EmulatorBusyMs       *float64 `parquet:"emulator_busy_ms,optional"`
	IdlePct              *float64 `parquet:"idle_pct,optional"`
	CPUBound             string   `parquet:"cpu_bound"`
	CPUWaits
}

// CPUWaits are how long the load's parties waited for a CPU over the
// same window, in ms: the client's and the server's cgroup CPU pressure
// (the wall time at least one of their tasks was ready to run but not
// running; null without cgroups or PSI), quicbench's own cgroup's CPU
// pressure where it ran in one (else its threads' time on a run queue,
// summed over its threads), and the machine's CPU pressure
// (/proc/pressure/cpu; null without PSI). client_cpu_throttled_ms is the
// part of the client's waiting its client_cpu cap imposed (the cap's
// throttled time, summed over the CPUs it held the client back on; null
// when the client had no cgroup for a cap). client_cpus_others_ms is, in
// a run that gives the client CPUs of its own (its cpu_split), the CPU
// time other tasks used on them (10 ms ticks): the client's waiting
// behind others, where its pressure counts its own threads queueing on
// its cores too; null otherwise. cores_others_ms is, in a run on cores
// of its own (run --cores, --parallel), the CPU time other tasks (another
// run's, the system's) used on those cores over the window (10 ms ticks;
// interrupt work on them counts too); null otherwise.
type CPUWaits struct {
	ClientCPUWaitMs      *float64 `parquet:"client_cpu_wait_ms,optional"`
	ClientCPUThrottledMs *float64 `parquet:"client_cpu_throttled_ms,optional"`
	ClientCPUsOthersMs   *float64 `parquet:"client_cpus_others_ms,optional"`
	ServerCPUWaitMs      *float64 `parquet:"server_cpu_wait_ms,optional"`
	QuicbenchCPUWaitMs   *float64 `parquet:"quicbench_cpu_wait_ms,optional"`
	MachineCPUWaitMs     *float64 `parquet:"machine_cpu_wait_ms,optional"`
	CoresOthersMs        *float64 `parquet:"cores_others_ms,optional"`
}

// VisualMetrics are a visual trial's metrics from its frames, in ms from
// navigation start (Speed Index in ms too), computed as Browsertime's
// visualmetrics does; nil for other trials, and a VC level the page never
// reached is nil. Frames counts the frames captured (0 for other trials),
// the viewport is in CSS pixels at its scale of device pixels, a mobile
// browser's or not (zeros for the built-in loader), and
// VisualCompute is the time decoding frames and computing took.
type VisualMetrics struct {
	FVC            *float64 `parquet:"fvc_ms,optional"`
	LVC            *float64 `parquet:"lvc_ms,optional"`
	SpeedIndex     *float64 `parquet:"speed_index,optional"`
	VC85           *float64 `parquet:"vc85_ms,optional"`
	VC95           *float64 `parquet:"vc95_ms,optional"`
	VC99           *float64 `parquet:"vc99_ms,optional"`
	Frames         int64    `parquet:"frames"`
	ViewportWidth  int64    `parquet:"viewport_width"`
	ViewportHeight int64    `parquet:"viewport_height"`
	ViewportScale  float64  `parquet:"viewport_scale"`
	ViewportMobile bool     `parquet:"viewport_mobile"`
	VisualCompute  *float64 `parquet:"visual_compute_ms,optional"`
}

// Link is what the emulator did during the trial's last attempt, per
// direction: packets offered, lost at random, dropped by the full queue,
// lost on per-origin paths, and the queue's peak.
type Link struct {
	UpPackets          int64 `parquet:"up_packets"`
	UpLost             int64 `parquet:"up_lost"`
	UpQueueDrops       int64 `parquet:"up_queue_drops"`
	UpPathLost         int64 `parquet:"up_path_lost"`
	UpPeakQueueBytes   int64 `parquet:"up_peak_queue_bytes"`
	DownPackets        int64 `parquet:"down_packets"`
	DownLost           int64 `parquet:"down_lost"`
	DownQueueDrops     int64 `parquet:"down_queue_drops"`
	DownPathLost       int64 `parquet:"down_path_lost"`
	DownPeakQueueBytes int64 `parquet:"down_peak_queue_bytes"`
	// UpUDPDropped and DownUDPDropped count the UDP packets the network's
	// UDP policy dropped (NetworkValues.UDP).
	UpUDPDropped   int64 `parquet:"up_udp_dropped"`
	DownUDPDropped int64 `parquet:"down_udp_dropped"`
}

// Stalls are what loss cost the measured visit's TCP connections, read
// after the load from the headers of the packets the emulated link
// carried and dropped (breakdown.Stalls): tcp_losses data segments the
// link dropped downstream, tcp_repaired of them whose bytes arrived again;
// loss_wait_ms the time some connection's byte stream stood still for a
// lost segment (from when it was due, its drop plus the link's one-way
// delay, to when its bytes arrived; connections together, overlaps
// counted once); held_bytes the bytes that arrived behind a missing
// segment and waited for it, held_ms the time any did (over h2, bytes of
// other streams may wait: head-of-line blocking). Over h3 (QUIC's packets
// are encrypted) loss_wait_ms comes from the QUIC server's own loss
// records instead: the time its streams waited for lost data to be sent
// again, from the lost packet's sending to the resending (both reach the
// client a trip later), from quic-go only (null from the other QUIC
// servers); held_* are null, since QUIC holds no other stream's bytes.
// Null in runs made before 2026-11-27.
type Stalls struct {
	TCPLosses   int64    `parquet:"tcp_losses"`
	TCPRepaired int64    `parquet:"tcp_repaired"`
	LossWaitMs  *float64 `parquet:"loss_wait_ms,optional"`
	HeldBytes   int64    `parquet:"held_bytes"`
	HeldMs      *float64 `parquet:"held_ms,optional"`
}

// Parts are the measured load's time from navigation start to its load
// event (plt_ms) taken apart into what it waited on (breakdown.Apart), in
// ms, read after the load from the headers of the packets the emulated
// link carried, the stalls above and the server's records. Each instant
// counts once, for the first of these that held at it, so they add up to
// plt_ms: part_link_ms a packet waited at the bottleneck or was sent at
// its rate; part_loss_ms some connection's data stood still for lost data
// (over QUIC from quic-go's loss records, and for the other QUIC servers,
// which keep none, estimated from the link's packets:
// breakdown.QUICLossWaits); part_handshake_ms a connection was in its TCP and
// TLS or QUIC handshake; part_round_trips_ms packets were in flight but
// none at the bottleneck (requests' and responses' trips, where a
// congestion window or pacing keeps the link from filling);
// part_server_ms nothing was in flight and the server worked on a request
// (from the records of the Go origin, quic-go, quinn and quiche; null from
// nginx and Caddy, whose logs hold a request's whole time with its
// sending, and whose time then counts as the client's); part_client_ms nothing was in flight and no
// server worked (the browser working). The packets' clock starts when the
// harness opened the load's window, just before navigation. Null for a
// failed load and in runs made before 2026-11-27.
type Parts struct {
	PartLossMs       *float64 `parquet:"part_loss_ms,optional"`
	PartLinkMs       *float64 `parquet:"part_link_ms,optional"`
	PartHandshakeMs  *float64 `parquet:"part_handshake_ms,optional"`
	PartRoundTripsMs *float64 `parquet:"part_round_trips_ms,optional"`
	PartServerMs     *float64 `parquet:"part_server_ms,optional"`
	PartClientMs     *float64 `parquet:"part_client_ms,optional"`
}

// PartNames name the parts of a load's time (Parts) in words, in the
// order a load's time is taken apart.
func PartNames() []string {
	return []string{"the link", "loss recovery", "handshakes", "round trips", "the servers", "the client"}
}

// Indexes of PartNames and Parts.Values.
const (
	PartLink = iota
	PartLoss
	PartHandshake
	PartRoundTrips
	PartServer
	PartClient
)

// Values are p's parts in PartNames' order, ms, with NaN for a part the
// load did not record (the loss of an h3 load from a QUIC server other
// than quic-go, the server time of a server other than Go's); nil for a
// load without parts.
func (p Parts) Values() []float64 {
	if p.PartLinkMs == nil || p.PartHandshakeMs == nil || p.PartRoundTripsMs == nil || p.PartClientMs == nil {
		return nil
	}
	out := make([]float64, 0, 6)
	for _, v := range []*float64{p.PartLinkMs, p.PartLossMs, p.PartHandshakeMs, p.PartRoundTripsMs, p.PartServerMs, p.PartClientMs} {
		if v == nil {
			out = append(out, math.NaN())
		} else {
			out = append(out, *v)
		}
	}
	return out
}

// F returns a pointer to v, for metrics.
func F(v float64) *float64 { return &v }

// MarshalJSON writes the trial with its columns' names, in order.
func (t Trial) MarshalJSON() ([]byte, error) {
	return newTable("", reflect.TypeOf(t)).marshal(reflect.ValueOf(t))
}

// Resource is one Resource Timing entry of a trial's load, or its
// document's Navigation Timing entry (Navigation; runs before 2026-11-27
// have none). Times are in ms since navigation start; the phases' starts
// (DNS, connect and its end, TLS, request, response: the first byte) are
// null where the browser did not expose them (a cross-origin response
// without Timing-Allow-Origin, the built-in loader, runs before
// 2026-11-27).
type Resource struct {
	TrialID         string   `parquet:"trial_id"`
	URL             string   `parquet:"url"`
	Protocol        string   `parquet:"protocol"` // nextHopProtocol
	Navigation      bool     `parquet:"navigation"`
	StartMs         float64  `parquet:"start_ms"`
	DNSStartMs      *float64 `parquet:"dns_start_ms,optional"`
	ConnectStartMs  *float64 `parquet:"connect_start_ms,optional"`
	ConnectEndMs    *float64 `parquet:"connect_end_ms,optional"`
	TLSStartMs      *float64 `parquet:"tls_start_ms,optional"`
	RequestStartMs  *float64 `parquet:"request_start_ms,optional"`
	ResponseStartMs *float64 `parquet:"response_start_ms,optional"`
	ResponseEndMs   float64  `parquet:"response_end_ms"`
	TransferBytes   int64    `parquet:"transfer_bytes"` // 0 if from the cache
	Status          int64    `parquet:"status"`
}

// MarshalJSON writes the resource with its columns' names, in order.
func (r Resource) MarshalJSON() ([]byte, error) {
	return newTable("", reflect.TypeOf(r)).marshal(reflect.ValueOf(r))
}

// Connection is one client connection a server accepted during a trial's
// measured load, as the server saw it.
type Connection struct {
	TrialID    string `parquet:"trial_id"`
	Conn       int64  `parquet:"conn"`      // its number within the trial, from 1
	Transport  string `parquet:"transport"` // "tcp" or "quic"
	ALPN       string `parquet:"alpn"`
	ServerName string `parquet:"server_name"`
	Remote     string `parquet:"remote"`
	// Handshake is how its TLS handshake went: HandshakeFull, …
	Handshake string    `parquet:"handshake"`
	Requests  int64     `parquet:"requests"`
	OpenedAt  time.Time `parquet:"opened_at,timestamp(microsecond)"`
	Closed    bool      `parquet:"closed"` // closed before it was read
	// BytesSent and BytesReceived are the transport's payload bytes.
	BytesSent     int64   `parquet:"bytes_sent"`
	BytesReceived int64   `parquet:"bytes_received"`
	Congestion    string  `parquet:"congestion"` // the congestion control: the TCP socket's or the QUIC server's
	SRTTMs        float64 `parquet:"srtt_ms"`
	CwndBytes     int64   `parquet:"cwnd_bytes"`
	// Retransmits counts TCP segments retransmitted or QUIC packets lost.
	Retransmits int64 `parquet:"retransmits"`
}

// Loss is a packet the emulated link dropped during a trial's measured
// load, or a time one of its connections' data stood still for lost data,
// in ms on the load's packet clock (from when the harness opened its
// window, just before navigation). Kind is LossDrop (from_ms = to_ms, the
// drop; bytes its payload) or LossWait (from when the lost data was due,
// or over QUIC first sent, to when it arrived or was sent again). Client is
// the connection's client address and port as the server saw it, Server
// the server's address and port ("" for a wait the QUIC server reported,
// whose record names the client only); transport "tcp" or "udp"; down:
// servers → client.
type Loss struct {
	TrialID   string  `parquet:"trial_id"`
	Kind      string  `parquet:"kind"`
	Client    string  `parquet:"client"`
	Server    string  `parquet:"server"`
	Transport string  `parquet:"transport"`
	Down      bool    `parquet:"down"`
	Bytes     int64   `parquet:"bytes"`
	FromMs    float64 `parquet:"from_ms"`
	ToMs      float64 `parquet:"to_ms"`
}

// Kinds of Loss rows.
const (
	LossDrop = "drop"
	LossWait = "wait"
)

// MarshalJSON writes the loss with its columns' names, in order.
func (l Loss) MarshalJSON() ([]byte, error) {
	return newTable("", reflect.TypeOf(l)).marshal(reflect.ValueOf(l))
}

// Sample is what a trial's measured load had used at one moment since
// its navigation started, counted from then: the parties' CPU time and the
// bytes each direction of the emulated link delivered. A load is sampled
// every 100 ms (250 ms where /proc counts CPU) for the lanes under its
// waterfall.
type Sample struct {
	TrialID string `parquet:"trial_id"`
	// AtMs is when it was read, in ms since quicbench let the browser
	// navigate.
	AtMs float64 `parquet:"at_ms"`
	// ClientCPUMs and ServerCPUMs are the CPU time (user and system, ms)
	// of the client's and the serving stack's processes; nil for a party
	// that runs in quicbench's own process, counted in QuicbenchCPUMs.
	ClientCPUMs *float64 `parquet:"client_cpu_ms"`
	ServerCPUMs *float64 `parquet:"server_cpu_ms"`
	// QuicbenchCPUMs is quicbench's own process's: the emulator, and an
	// in-process server or client.
	QuicbenchCPUMs float64 `parquet:"quicbench_cpu_ms"`
	// UpBytes and DownBytes are the bytes of the packets the link's
	// uplink (client to servers) and downlink delivered.
	UpBytes   int64 `parquet:"up_bytes"`
	DownBytes int64 `parquet:"down_bytes"`
}

// Handshake kinds of a connection (Connection.Handshake), as its server
// saw them.
const (
	HandshakeFull       = "full"       // a full TLS 1.3 handshake
	HandshakeResumed    = "resumed"    // resumed from a session ticket (PSK), no early data
	Handshake0RTT       = "0rtt"       // resumed, and the client's 0-RTT data was accepted
	HandshakeIncomplete = "incomplete" // the handshake had not completed
	HandshakeUnknown    = "unknown"    // a connection of an external server that served no request yet
)

// MarshalJSON writes the connection with its columns' names, in order.
func (c Connection) MarshalJSON() ([]byte, error) {
	return newTable("", reflect.TypeOf(c)).marshal(reflect.ValueOf(c))
}

// Testbed is one testbed of a run: its setup and the servers' TCP stack as
// read back from the kernel after it was applied.
type Testbed struct {
	Key     string `parquet:"setup"` // network, page, origins, stack, server and QUIC stack
	Network string `parquet:"network"`
	Page    string `parquet:"page"`
	Origins int64  `parquet:"origins"`
	Stack   string `parquet:"stack"`
	Server  string `parquet:"server"`
	// QUICServer and QUICCC serve h3; QUICInitialWindowBytes is its
	// initial congestion window, as the server reported it (quinn, quiche)
	// or as its code sets it (quic-go), QUICPacing whether it paces and
	// QUICHyStart whether it leaves slow start by a HyStart.
	QUICServer             string `parquet:"quic_server"`
	QUICCC                 string `parquet:"quic_cc"`
	QUICInitialWindowBytes int64  `parquet:"quic_initial_window_bytes"`
	QUICPacing             bool   `parquet:"quic_pacing"`
	QUICHyStart            bool   `parquet:"quic_hystart"`
	// Congestion is from a server socket (TCP_CONGESTION), "" until a
	// connection was accepted; RouteCongestion is the route's congctl.
	Congestion         string `parquet:"congestion"`
	RouteCongestion    string `parquet:"route_congestion"`
	InitCwnd           int64  `parquet:"initcwnd"` // 0: the kernel's default (10)
	InitRwnd           int64  `parquet:"initrwnd"`
	SlowStartAfterIdle string `parquet:"tcp_slow_start_after_idle"`
	TCPRmem            string `parquet:"tcp_rmem"`
	TCPWmem            string `parquet:"tcp_wmem"`
	Pacing             bool   `parquet:"pacing"`
	// The measured columns are what the servers' stacks did on the wire,
	// read from the loads' packets (breakdown.FirstFlights), TCP's (h1,
	// h2) and QUIC's (h3) apart: the median first response flight, in
	// packets and payload bytes, of the connections whose window ended
	// it (nil where none did), its median spread from first departure
	// to last (ms), how most of them left ("paced", "burst" or "partly
	// paced"; "" where it cannot be told), and how many connections were
	// measured.
	MeasuredTCPFlight       *float64 `parquet:"measured_tcp_first_flight,optional"`
	MeasuredTCPFlightBytes  *float64 `parquet:"measured_tcp_first_flight_bytes,optional"`
	MeasuredTCPSpreadMs     *float64 `parquet:"measured_tcp_flight_spread_ms,optional"`
	MeasuredTCPPacing       string   `parquet:"measured_tcp_pacing"`
	MeasuredTCPConnections  int64    `parquet:"measured_tcp_connections"`
	MeasuredQUICFlight      *float64 `parquet:"measured_quic_first_flight,optional"`
	MeasuredQUICFlightBytes *float64 `parquet:"measured_quic_first_flight_bytes,optional"`
	MeasuredQUICSpreadMs    *float64 `parquet:"measured_quic_flight_spread_ms,optional"`
	MeasuredQUICPacing      string   `parquet:"measured_quic_pacing"`
	MeasuredQUICConnections int64    `parquet:"measured_quic_connections"`
	// The measured backoffs are how the stacks answered a loss in the
	// testbed's calibrations (the link drops one packet of each:
	// breakdown.Backoff): the median share of its sending a sender kept in
	// the round trip after it learned of the loss, against the round trip
	// before (CUBIC's window shrinks to 0.7, Reno's to 0.5; BBR keeps
	// sending), nil where none could be read, and over how many
	// connections.
	MeasuredTCPBackoff   *float64 `parquet:"measured_tcp_backoff,optional"`
	MeasuredTCPBackoffs  int64    `parquet:"measured_tcp_backoffs"`
	MeasuredQUICBackoff  *float64 `parquet:"measured_quic_backoff,optional"`
	MeasuredQUICBackoffs int64    `parquet:"measured_quic_backoffs"`
	// PathLatencyMs is the emulator's own forwarding latency per round
	// trip, measured when the testbed started (netcheck.Calibrate), and
	// CompensationMs what of it was taken off the configured delays (up
	// plus down, each at most its direction's delay); both 0 when it was
	// not measured (a trace link).
	PathLatencyMs  float64   `parquet:"path_latency_ms"`
	CompensationMs float64   `parquet:"compensation_ms"`
	StartedAt      time.Time `parquet:"started_at,timestamp(microsecond)"`
	// BaseRTTMs is a live page's own round trip beyond the emulator: the
	// median of TCP handshakes from the servers namespace to its origin's
	// port 443, before the setup's first load; BaseRTTAfterMs the same
	// after its last. Nil for pages the testbed serves.
	BaseRTTMs      *float64 `parquet:"base_rtt_ms,optional"`
	BaseRTTAfterMs *float64 `parquet:"base_rtt_after_ms,optional"`
	// BasePingMs and BaseLossPct are what ICMP echoes from the servers
	// namespace to the live origin measured before the first load: the
	// median round trip and the share not answered; nil where no echo was
	// answered (many sites drop them: the path's loss is then unknown).
	BasePingMs  *float64 `parquet:"base_ping_ms,optional"`
	BaseLossPct *float64 `parquet:"base_loss_pct,optional"`
	// LiveOrigins are the hosts a live page's loads may reach with what
	// each offered before the first load, "host addr: h3 h2 http/1.1",
	// joined by "; ": h3 where it advertised HTTP/3 (Alt-Svc), h2 where
	// its TLS handshake chose it. "" for pages the testbed serves.
	LiveOrigins string `parquet:"live_origins"`
}

// Attempt is a failed attempt of a trial.
type Attempt struct {
	TrialID   string    `parquet:"trial_id"`
	Attempt   int64     `parquet:"attempt"`
	Error     string    `parquet:"error"`
	StartedAt time.Time `parquet:"started_at,timestamp(microsecond)"`
}
