package client

import (
	"context"
	"errors"
	"testing"
)

// process is a browser process that counts its Close.
type process struct{ closed int }

func (p *process) Close() { p.closed++ }

// TestPoolKeepsOneWarmBrowserPerKey: a key's browser starts once, a failed
// start keeps nothing, Drop stops and forgets the browser (the next load
// starts another), and Close stops the rest after the browsers shutting
// down are gone.
func TestPoolKeepsOneWarmBrowserPerKey(t *testing.T) {
	var pool Pool[*process]
	starts := 0
	start := func(context.Context) (*process, error) { starts++; return &process{}, nil }
	a, _ := pool.Warm(t.Context(), "h2", start)
	if again, _ := pool.Warm(t.Context(), "h2", start); again != a || starts != 1 {
		t.Fatalf("the warm browser started %d times", starts)
	}
	if _, err := pool.Warm(t.Context(), "h3", func(context.Context) (*process, error) { return nil, errors.New("no") }); err == nil {
		t.Fatal("a failed start gave a browser")
	}
	h3, _ := pool.Warm(t.Context(), "h3", start)
	pool.Drop("h2", a)
	if b, _ := pool.Warm(t.Context(), "h2", start); b == a || a.closed != 1 || starts != 3 {
		t.Errorf("after Drop: same browser %v, closed %d, starts %d", b == a, a.closed, starts)
	}
	pool.Drop("h3", &process{}) // not h3's browser: h3's stays
	shutDown := false
	pool.CloseLater(func() { shutDown = true })
	pool.Close()
	if !shutDown || h3.closed != 1 || a.closed != 1 {
		t.Errorf("Close: shut down %v, h3 closed %d, dropped closed %d", shutDown, h3.closed, a.closed)
	}
}
