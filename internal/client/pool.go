package client

import (
	"context"
	"sync"
)

// Process is a running browser a Pool keeps.
type Process interface {
	comparable
	// Close stops the browser and removes what it was started with (its
	// profile).
	Close()
}

// Pool is a browser package's running browsers: one warm browser per key
// (the values its command line or profile is made of), started on first
// use and dropped when a load in it fails, and the fresh browsers still
// shutting down after their load. Its zero value is empty and ready.
type Pool[P Process] struct {
	mu   sync.Mutex
	warm map[string]P
	// closing counts the fresh browsers still shutting down: a load
	// returns before its browser is gone, and the next timed load waits
	// for them (AwaitClosed).
	closing sync.WaitGroup
}

// Warm returns the running browser for key, starting it with start on
// first use. The pool stays locked while a browser starts: two loads never
// start two browsers for one key.
func (p *Pool[P]) Warm(ctx context.Context, key string, start func(context.Context) (P, error)) (P, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.warm[key]; ok {
		return b, nil
	}
	b, err := start(ctx)
	if err != nil {
		return b, err
	}
	if p.warm == nil {
		p.warm = map[string]P{}
	}
	p.warm[key] = b
	return b, nil
}

// Drop stops b, the warm browser of key, and forgets it.
func (p *Pool[P]) Drop(key string, b P) {
	p.mu.Lock()
	if p.warm[key] == b {
		delete(p.warm, key)
	}
	p.mu.Unlock()
	b.Close()
}

// CloseLater runs close, which finishes a fresh browser's shutdown, in the
// background: AwaitClosed waits for it.
func (p *Pool[P]) CloseLater(close func()) { p.closing.Go(close) }

// AwaitClosed waits until every browser given to CloseLater is gone.
func (p *Pool[P]) AwaitClosed() { p.closing.Wait() }

// Close waits for the browsers shutting down and stops the warm ones.
func (p *Pool[P]) Close() {
	p.AwaitClosed()
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, b := range p.warm {
		b.Close()
		delete(p.warm, key)
	}
}
