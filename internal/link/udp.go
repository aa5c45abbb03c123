package link

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quicbench/quicbench/internal/units"
)

// UDPPolicy is what a network does to QUIC's UDP (the emulator applies
// it to port 443), both directions alike, as networks that block or
// throttle QUIC do. The zero value passes UDP.
type UDPPolicy struct {
	// Block drops UDP: every packet, or with After > 0, those after the
	// first After packets of each flow (both directions of a pair of
	// addresses and ports counted together), as middleboxes that let a
	// handshake through and then drop the flow do.
	Block bool `json:"block,omitempty"`
	After int  `json:"after,omitempty"`
	// RateBitsPerSecond, if not zero, polices UDP to this rate in each
	// direction: a packet that finds too few tokens in a bucket of
	// PolicerBurst of the rate is dropped.
	RateBitsPerSecond int64 `json:"rate_bps,omitempty"`
}

// PolicerBurst is the UDP policer's bucket: this long at its rate, and
// at least two full-size packets.
const PolicerBurst = 50 * time.Millisecond

// MaxUDPAfter bounds UDPPolicy.After.
const MaxUDPAfter = 1_000_000

// ParseUDPPolicy reads a network's udp setting: "pass" (or ""), "block",
// "block-after-N" or a rate such as "1mbit".
func ParseUDPPolicy(text string) (UDPPolicy, error) {
	const usage = "use pass, block, block-after-N (such as block-after-20) or a rate such as 1mbit"
	switch {
	case text == "" || text == "pass":
		return UDPPolicy{}, nil
	case text == "block":
		return UDPPolicy{Block: true}, nil
	case strings.HasPrefix(text, "block-after-"):
		n, err := strconv.Atoi(strings.TrimPrefix(text, "block-after-"))
		if err != nil || n < 1 || n > MaxUDPAfter {
			return UDPPolicy{}, fmt.Errorf("--udp %q: N must be a whole number from 1 to %d: %s", text, MaxUDPAfter, usage)
		}
		return UDPPolicy{Block: true, After: n}, nil
	}
	rate, err := units.ParseRate(text)
	if err != nil || rate <= 0 {
		return UDPPolicy{}, fmt.Errorf("--udp %q: %s", text, usage)
	}
	return UDPPolicy{RateBitsPerSecond: rate}, nil
}

// String is the policy as ParseUDPPolicy reads it; "pass" for the zero
// value.
func (p UDPPolicy) String() string {
	switch {
	case p.Block && p.After > 0:
		return "block-after-" + strconv.Itoa(p.After)
	case p.Block:
		return "block"
	case p.RateBitsPerSecond > 0:
		return rateText(p.RateBitsPerSecond)
	}
	return "pass"
}

// Passes says whether the policy leaves UDP alone.
func (p UDPPolicy) Passes() bool { return !p.Block && p.RateBitsPerSecond == 0 }

// UDPFlow names a UDP flow: its two ends, each an IPv4 address and port,
// the lower end first, so that both directions name one flow.
type UDPFlow struct{ A, B [6]byte }

// FlowOf is the flow between ends x and y, in either order.
func FlowOf(x, y [6]byte) UDPFlow {
	if string(y[:]) < string(x[:]) {
		x, y = y, x
	}
	return UDPFlow{x, y}
}

// UDPFilter applies a UDPPolicy to the UDP packets of both directions.
// Safe for concurrent use (each direction's loop calls it).
type UDPFilter struct {
	policy UDPPolicy
	mu     sync.Mutex
	seen   map[UDPFlow]int
	bucket [2]tokenBucket // by direction: 0 up, 1 down
}

// NewUDPFilter returns a filter of p.
func NewUDPFilter(p UDPPolicy) *UDPFilter {
	return &UDPFilter{policy: p, seen: map[UDPFlow]int{}}
}

// Drop says whether a UDP packet of size bytes of flow, read at now going
// up (client to servers) or down, is dropped.
func (f *UDPFilter) Drop(now time.Time, flow UDPFlow, up bool, size int) bool {
	p := f.policy
	if p.Passes() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.Block {
		f.seen[flow]++
		return f.seen[flow] > p.After
	}
	i := 1
	if up {
		i = 0
	}
	return !f.bucket[i].take(now, size, p.RateBitsPerSecond)
}

// tokenBucket is a policer's bucket, in bytes.
type tokenBucket struct {
	tokens float64
	last   time.Time
}

// take adds the tokens of rate bit/s since the last packet (up to the
// burst) and takes size bytes if they are there.
func (b *tokenBucket) take(now time.Time, size int, rate int64) bool {
	burst := max(float64(rate)/8*PolicerBurst.Seconds(), 2*1500)
	if b.last.IsZero() {
		b.tokens = burst
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(burst, b.tokens+float64(rate)/8*d.Seconds())
	}
	b.last = now
	if b.tokens < float64(size) {
		return false
	}
	b.tokens -= float64(size)
	return true
}

// rateText writes rate bit/s as ParseRate reads it, in the largest unit
// that divides it: "1mbit", "170kbit", "1500bit".
func rateText(rate int64) string {
	switch {
	case rate%1_000_000_000 == 0:
		return strconv.FormatInt(rate/1_000_000_000, 10) + "gbit"
	case rate%1_000_000 == 0:
		return strconv.FormatInt(rate/1_000_000, 10) + "mbit"
	case rate%1_000 == 0:
		return strconv.FormatInt(rate/1_000, 10) + "kbit"
	}
	return strconv.FormatInt(rate, 10) + "bit"
}
