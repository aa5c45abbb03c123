package client

import (
	"context"
	"sync"
	"time"
)

// Preparer is a Browser that can get ready for its next load before it is
// asked for it, while the harness records the last load: a fresh browser
// started, a browser context opened. The runner calls Prepare right after
// a load returns, never during one, and Unprepare before another client's
// timed load, so that nothing prepared runs beside a timed load.
type Preparer interface {
	// Prepare starts getting ready for a load of req in the background and
	// returns at once. Only what the browser is started with counts (its
	// protocol, hosts and certificates): req's callbacks and artifact
	// paths are not set. Load uses what is ready when its request fits and
	// discards it otherwise.
	Prepare(req Request)
	// Unprepare discards what Prepare got ready and waits until it is gone.
	Unprepare()
}

// Ahead holds one value a browser made ahead of the load that will use it
// (a started browser, a new browser context), under the key of the
// requests it fits, made in the background. Its zero value holds nothing.
type Ahead[T any] struct {
	mu      sync.Mutex
	pending *aheadValue[T]
}

// aheadValue is one value being made or made.
type aheadValue[T any] struct {
	key     string
	cancel  context.CancelFunc
	done    chan struct{}
	val     T
	err     error
	took    time.Duration
	discard func(T)
}

// Start discards what a holds (waiting for it) and starts making a value
// for key with build, in the background; build stops early when its context
// is canceled, and cleans up itself when it fails. discard releases a made
// value that no load takes.
func (a *Ahead[T]) Start(key string, build func(context.Context) (T, error), discard func(T)) {
	a.Discard()
	ctx, cancel := context.WithCancel(context.Background())
	v := &aheadValue[T]{key: key, cancel: cancel, done: make(chan struct{}), discard: discard}
	a.mu.Lock()
	a.pending = v
	a.mu.Unlock()
	go func() {
		defer close(v.done)
		start := time.Now()
		v.val, v.err = build(ctx)
		v.took = time.Since(start)
	}()
}

// Take returns the value made for key and how long making it took,
// waiting until it is made. ok is false, and nothing is returned, when no
// value for key was started or making it failed; a value for another key
// is discarded. If ctx ends while Take waits, the value is discarded and
// the error is ctx's.
func (a *Ahead[T]) Take(ctx context.Context, key string) (val T, took time.Duration, ok bool, err error) {
	a.mu.Lock()
	v := a.pending
	a.pending = nil
	a.mu.Unlock()
	if v == nil {
		return val, 0, false, nil
	}
	if v.key != key {
		v.throwAway()
		return val, 0, false, nil
	}
	select {
	case <-v.done:
	case <-ctx.Done():
		v.throwAway()
		return val, 0, false, ctx.Err()
	}
	v.cancel()
	if v.err != nil {
		return val, 0, false, nil
	}
	return v.val, v.took, true, nil
}

// Discard throws away what a holds, waiting until it is made (its making
// canceled) and discarded.
func (a *Ahead[T]) Discard() {
	a.mu.Lock()
	v := a.pending
	a.pending = nil
	a.mu.Unlock()
	if v != nil {
		v.throwAway()
	}
}

// throwAway cancels v's making, waits for it and discards a made value.
func (v *aheadValue[T]) throwAway() {
	v.cancel()
	<-v.done
	if v.err == nil {
		v.discard(v.val)
	}
}
