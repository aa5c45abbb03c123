// Package parity checks that the servers treat the protocols alike: it
// downloads files of several sizes over h1, h2 and h3 from the same origin,
// through an unshaped link and a constrained one, many times in interleaved
// rounds, and compares the medians (Wolsing et al. 2019, Figure 2). Each download uses
// a fresh Go client, so it includes its connection's handshake. With more
// than one QUIC stack, each gets its own testbed per network, in which
// every protocol is downloaded again, so that each stack's h3 is compared
// with an h2 of its own interleaved rounds.
package parity

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/safefs"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/site/gen"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/stats"
	"github.com/quicbench/quicbench/internal/testbed"
)

// Network is one link the downloads go through.
type Network struct {
	Name string          `json:"name"`
	Link emulator.Config `json:"link"`
}

// DefaultNetworks are Wolsing et al. 2019's (Figure 2): no shaping, and 100 Mbit/s
// with 10 ms RTT and a 20 ms queue.
func DefaultNetworks() []Network {
	shaped := link.Config{Delay: 5 * time.Millisecond, RateBitsPerSecond: 100_000_000, QueueBytes: 250_000}
	return []Network{
		{Name: "unshaped", Link: emulator.Config{}},
		{Name: "100mbit-10ms", Link: emulator.Config{Up: shaped, Down: shaped}},
	}
}

// Config is a parity check.
type Config struct {
	Networks  []Network
	Sizes     []int64 // file sizes in bytes
	Protocols []string
	// Reps is the number of downloads per network, size and protocol.
	Reps  int
	Seed  uint64
	Stack stacks.Profile // the TCP stack of the servers
	// Server is the server stack of h1 and h2: factor.ServerGo (zero
	// value) or factor.ServerNginx.
	Server factor.Server
	// QUIC is the stacks that serve h3, each in its own testbeds; empty:
	// quic-go only.
	QUIC []factor.QUIC
	// Warm times each download on a connection that a first request has
	// already opened, so that handshakes are left out; else each download
	// opens its own connection and its time includes the handshakes.
	Warm bool
	// Qlog makes each testbed's h3 server write a qlog of every
	// connection into RunDir/qlog/<network>-<QUIC stack>/.
	Qlog bool
	// RunDir receives the certificates (and the qlogs).
	RunDir string
	Log    *slog.Logger
}

// Cell is the downloads of one network, size and protocol.
type Cell struct {
	Network  string `json:"network"`
	Size     int64  `json:"size_bytes"`
	Protocol string `json:"protocol"`
	// QUIC is the QUIC stack of the cell's testbed (it served h3).
	QUIC    factor.QUIC   `json:"quic"`
	Times   []float64     `json:"times_ms"` // time to the last byte, handshake included
	Summary stats.Summary `json:"summary_ms"`
	Failed  int           `json:"failed"`
	// RatioToH2 is this cell's median over h2's median for the same
	// network and size; 0 when unknown.
	RatioToH2 float64 `json:"median_ratio_to_h2"`
}

const host = "files.quicbench.test"

// Run runs the check and returns one Cell per network, size and protocol.
func Run(ctx context.Context, cfg Config) ([]*Cell, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	files, err := gen.Files(host, cfg.Sizes, cfg.Seed)
	if err != nil {
		return nil, err
	}
	order := rand.New(rand.NewPCG(cfg.Seed, 0x9a41))
	quics := cfg.QUIC
	if len(quics) == 0 {
		quics = []factor.QUIC{factor.QUICGoNewReno}
	}
	var cells []*Cell
	for _, nw := range cfg.Networks {
		for _, quic := range quics {
			var err error
			if cells, err = runTestbed(ctx, cfg, nw, quic, files, order, cells); err != nil {
				return cells, err
			}
		}
	}
	for _, c := range cells {
		c.Summary = stats.Summarize(c.Times)
	}
	for _, c := range cells {
		for _, h2 := range cells {
			if h2.Protocol == "h2" && h2.Network == c.Network && h2.QUIC == c.QUIC && h2.Size == c.Size && h2.Summary.N > 0 && c.Summary.N > 0 {
				c.RatioToH2 = c.Summary.Median / h2.Summary.Median
			}
		}
	}
	return cells, nil
}

// runTestbed downloads every size over every protocol in cfg.Reps
// interleaved rounds in one testbed of network nw whose h3 is quic, and
// returns cells with this testbed's cells appended.
func runTestbed(ctx context.Context, cfg Config, nw Network, quic factor.QUIC, files *site.Site, order *rand.Rand, cells []*Cell) ([]*Cell, error) {
	byKey := map[string]*Cell{}
	for _, size := range cfg.Sizes {
		for _, p := range cfg.Protocols {
			c := &Cell{Network: nw.Name, Size: size, Protocol: p, QUIC: quic}
			byKey[fmt.Sprint(size, p)] = c
			cells = append(cells, c)
		}
	}
	tb, err := testbed.Start(testbed.Config{
		Stem: netns.NewRunName("pa"),
		Link: nw.Link, Site: files, RunDir: cfg.RunDir, Log: cfg.Log, Stack: cfg.Stack, Server: cfg.Server, QUIC: quic,
	})
	if err != nil {
		return cells, err
	}
	if cfg.Qlog {
		if err := startQlog(tb, cfg.RunDir, nw, quic); err != nil {
			tb.Close()
			return cells, err
		}
	}
	err = func() error {
		for range cfg.Reps {
			// Every size and protocol once per round, in a shuffled order.
			type job struct {
				size  int64
				proto string
			}
			var jobs []job
			for _, size := range cfg.Sizes {
				for _, p := range cfg.Protocols {
					jobs = append(jobs, job{size, p})
				}
			}
			order.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
			for _, j := range jobs {
				if err := ctx.Err(); err != nil {
					return err
				}
				ms, err := download(ctx, tb, j.proto, j.size, cfg.Warm)
				c := byKey[fmt.Sprint(j.size, j.proto)]
				if err != nil {
					cfg.Log.Warn("parity download failed", "network", nw.Name, "quic", quic, "size", j.size, "protocol", j.proto, "err", err)
					c.Failed++
					continue
				}
				c.Times = append(c.Times, ms)
			}
		}
		return nil
	}()
	if closeErr := tb.Close(); err == nil {
		err = closeErr
	}
	return cells, err
}

// startQlog makes tb's h3 server write its qlogs into the run directory's
// qlog/<network>-<quic>/.
func startQlog(tb *testbed.Testbed, runDir string, nw Network, quic factor.QUIC) error {
	name := filepath.Join("qlog", nw.Name+"-"+string(quic))
	if err := safefs.MkdirAll(runDir, name, 0o755); err != nil {
		return fmt.Errorf("qlog: %w", err)
	}
	return tb.SetQlogDir(filepath.Join(runDir, name))
}

// download fetches the file of size over proto with a fresh client and
// returns the time from the request to the last byte, in ms. With warm, a
// request for the index opens the connection first and is not timed.
func download(ctx context.Context, tb *testbed.Testbed, proto string, size int64, warm bool) (float64, error) {
	client, err := tb.NewGoClient(proto)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if warm {
		if _, err := fetch(ctx, client.Client, "https://"+host+"/"); err != nil {
			return 0, fmt.Errorf("warm-up: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+gen.FilePath(size), nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if n != size || resp.StatusCode != 200 {
		return 0, fmt.Errorf("got %d of %d bytes, status %d", n, size, resp.StatusCode)
	}
	if want := map[string]int{"h1": 1, "h2": 2, "h3": 3}[proto]; resp.ProtoMajor != want {
		return 0, fmt.Errorf("served over %s, requested %s", resp.Proto, proto)
	}
	return float64(elapsed) / float64(time.Millisecond), nil
}

// fetch reads a whole response and returns its length.
func fetch(ctx context.Context, c *http.Client, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return io.Copy(io.Discard, resp.Body)
}

// Sorted returns the cells ordered by network, size, QUIC stack and
// protocol (in the order run).
func Sorted(cells []*Cell, networks []Network) []*Cell {
	out := slices.Clone(cells)
	rank := map[string]int{}
	for i, n := range networks {
		rank[n.Name] = i
	}
	slices.SortStableFunc(out, func(a, b *Cell) int {
		if d := rank[a.Network] - rank[b.Network]; d != 0 {
			return d
		}
		if a.Size != b.Size {
			return int(a.Size - b.Size)
		}
		return strings.Compare(string(a.QUIC), string(b.QUIC))
	})
	return out
}
