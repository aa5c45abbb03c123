package site

import (
	"container/heap"
	"net/url"
	"time"
)

// BoundInput is what a load's physical lower bound depends on besides the
// page: the network and the protocol.
type BoundInput struct {
	// RTT is the round trip to the origin of host.
	RTT func(host string) time.Duration
	// Handshake is the round trips a new connection takes before it
	// carries a request: 2 for TCP + TLS 1.3 (resumed or not), 1 for
	// QUIC, 0 for QUIC with 0-RTT.
	Handshake int
	// RateBps is the downlink's bottleneck rate in bit/s; 0: unlimited.
	RateBps float64
	// Required are the subresources the load must fetch (absolute URLs);
	// the document always is.
	Required []string
}

// Bound is the least time a load can take on a network: no browser, server
// or transport can be faster. Chain is the page's dependency chain: each
// resource is requested once what reveals it (Parents) has arrived, on a
// connection to its origin opened, with Handshake round trips, when the
// origin was first needed, and arrives one round trip after its request.
// Transfer is every required byte at the bottleneck rate, which can start
// no earlier than the document's first byte. Ms is the larger of Chain and
// that first byte plus Transfer. Byte counts are bodies on the wire
// without headers or framing, so the bound errs low.
type Bound struct {
	Ms, ChainMs, TransferMs float64
	// ChainRTTs is the critical chain in round trips of the document's
	// origin, handshakes included.
	ChainRTTs float64
	Bytes     int64 // the required bodies
}

// LowerBound computes the page's bound for in.
func (s *Site) LowerBound(in BoundInput) Bound {
	doc := s.DocumentURL()
	nodes := map[string]*boundNode{doc: {url: doc, host: s.Origins[0].Host}}
	for _, raw := range in.Required {
		u, err := url.Parse(raw)
		if err != nil || nodes[raw] != nil {
			continue
		}
		nodes[raw] = &boundNode{url: raw, host: u.Hostname()}
	}
	var bytes int64
	for _, n := range nodes {
		n.parent = nodes[s.Parents[n.url]]
		if n.parent == nil && n.url != doc {
			n.parent = nodes[doc] // a resource of unknown origin in the page: the document reveals it
		}
		if u, err := url.Parse(n.url); err == nil {
			if r := s.Lookup(u.Hostname(), u.RequestURI()); r != nil {
				bytes += int64(len(r.Body))
			}
		}
	}
	chain := chainTime(nodes, nodes[doc], in)
	rtt0 := in.RTT(s.Origins[0].Host)
	b := Bound{ChainMs: ms(chain), Bytes: bytes}
	if in.RateBps > 0 {
		b.TransferMs = float64(bytes) * 8 / in.RateBps * 1000
	}
	firstByte := time.Duration(in.Handshake+1) * rtt0
	b.Ms = max(b.ChainMs, ms(firstByte)+b.TransferMs)
	if rtt0 > 0 {
		b.ChainRTTs = float64(chain) / float64(rtt0)
	}
	return b
}

// boundNode is one resource of the bound's computation.
type boundNode struct {
	url, host string
	parent    *boundNode
	known     time.Duration // when what reveals it has arrived
	ready     time.Duration // when its first byte arrives
	done      bool
}

// chainTime runs the resources in the order they become known (earliest
// first, so that an origin's connection opens when it is first needed)
// and returns when the last one's first byte arrives.
func chainTime(nodes map[string]*boundNode, doc *boundNode, in BoundInput) time.Duration {
	children := map[*boundNode][]*boundNode{}
	for _, n := range nodes {
		if n.parent != nil {
			children[n.parent] = append(children[n.parent], n)
		}
	}
	opened := map[string]time.Duration{}
	q := &boundQueue{doc}
	var last time.Duration
	for q.Len() > 0 {
		n := heap.Pop(q).(*boundNode)
		rtt := in.RTT(n.host)
		conn, ok := opened[n.host]
		if !ok {
			conn = n.known + time.Duration(in.Handshake)*rtt
			opened[n.host] = conn
		}
		n.ready, n.done = max(n.known, conn)+rtt, true
		last = max(last, n.ready)
		for _, c := range children[n] {
			if !c.done {
				c.known = n.ready
				heap.Push(q, c)
			}
		}
	}
	return last
}

// boundQueue orders resources by the time they become known.
type boundQueue []*boundNode

// Len is the queue's length (heap.Interface).
func (q boundQueue) Len() int { return len(q) }

// Less orders by the time a resource becomes known, then by URL
// (heap.Interface).
func (q boundQueue) Less(i, j int) bool {
	if q[i].known != q[j].known {
		return q[i].known < q[j].known
	}
	return q[i].url < q[j].url
}

// Swap swaps two entries (heap.Interface).
func (q boundQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// Push appends x, a *boundNode (heap.Interface).
func (q *boundQueue) Push(x any) { *q = append(*q, x.(*boundNode)) }

// Pop removes and returns the last entry (heap.Interface).
func (q *boundQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
