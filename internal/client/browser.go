package client

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/quicbench/quicbench/internal/cpuuse"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/netns"
)

// Browser loads pages: a real browser or the built-in loader, each behind
// this interface. What one can do is its level's factor.Capabilities; the
// experiment asks for those, never for a name.
type Browser interface {
	// Load loads req.URL as req says (a first or repeat visit, its frames,
	// its HAR), reads the metrics and verifies them. A failed load is a
	// Result with Failure set; an error means ctx was canceled.
	Load(ctx context.Context, req Request) (Result, error)
	// Close stops what the client keeps running between loads (a warm
	// browser). Call it before the client namespace goes away.
	Close()
}

// NewGoClient returns a fresh HTTP client in the testbed's client
// namespace that speaks only proto to its origins, keeps TLS sessions in
// sessions and opens at most maxConns connections per origin (0: no
// limit); closeFn releases its connections.
type NewGoClient func(proto factor.Protocol, sessions tls.ClientSessionCache, maxConns int) (c *http.Client, closeFn func(), err error)

// Env is what a client is made with, once per testbed.
type Env struct {
	// Binary is the browser's executable; empty: its default.
	Binary string
	// Namespace is the client namespace it loads from.
	Namespace *netns.Namespace
	// ProfileDir holds temporary profiles, each removed after its load.
	ProfileDir string
	// Timeout bounds one load, browser start included.
	Timeout time.Duration
	// Warm keeps a browser running and gives each load a context of its
	// own (browser: warm), for a client whose capabilities say it can.
	Warm bool
	// NewGoClient makes HTTP clients for a client without a browser.
	NewGoClient NewGoClient
	// Version names quicbench in what the client writes (a HAR's creator).
	Version string
	// CPU is the CPU accounting group every process of the client starts
	// in; nil: none (a client in quicbench's own process has no process).
	CPU *cpuuse.Group
}

// Kind is a client quicbench can run: the level of the client factor it
// implements and how it is made.
type Kind struct {
	Client factor.Client
	// Executable is its own program and the flag that names it; nil for a
	// client that is part of quicbench.
	Executable *Executable
	// Check says what else is missing to run it from binary (empty: its
	// default), with how to get it; nil: nothing.
	Check func(binary string) error
	// New makes it for one testbed.
	New func(Env) Browser
	// OwnProcess: it runs in processes of its own (started in Env.CPU),
	// not in quicbench's.
	OwnProcess bool
	// RemoveStale removes what its runs that were killed left behind
	// (browsers' temporary directories) and lists it; nil: nothing.
	RemoveStale func() []string
}

// CheckInstalled says what is missing to run the client from binary
// (empty: its default): its executable, then what Check asks for; nil if
// nothing.
func (k Kind) CheckInstalled(binary string) error {
	if k.Executable != nil {
		if err := k.Executable.Check(binary); err != nil {
			return err
		}
	}
	if k.Check != nil {
		return k.Check(binary)
	}
	return nil
}

// Version is the version of the client at binary (empty: its default),
// recorded with every run as the fact "<client>_version"; "" for a client
// that is part of quicbench or says none.
func (k Kind) Version(binary string) string {
	if k.Executable == nil {
		return ""
	}
	return k.Executable.Version(binary)
}
