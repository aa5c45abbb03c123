package firefox

import (
	"context"

	"github.com/quicbench/quicbench/internal/client"
)

// Prepare opens, in the background, the tab the next load of req needs:
// a fresh browser's (its profile copied, the browser started, a BiDi
// session open), or a tab in a new user context of the warm browser. The
// runner calls it after a load has returned, while it records that load;
// Load takes the tab when its request needs the same profile, and a load
// with an HTTP log never does (its browser logs into the load's
// directory).
func (f *Firefox) Prepare(req client.Request) {
	f.next.Start(warmKey(req), func(ctx context.Context) (*tab, error) { return f.newTab(ctx, req) },
		func(t *tab) { t.close(false) })
}

// Unprepare closes what Prepare opened and waits until it is gone.
func (f *Firefox) Unprepare() {
	f.next.Discard()
	f.closing.Wait()
}
