package breakdown

import (
	"testing"
	"time"
)

// TestAResentRangeEndsItsWait: packet 2 carries stream 0's bytes 1000–
// 1999 and is lost; packet 5 carries bytes 1500–1999 again 80 ms after
// packet 2 was sent: the stream waited 80 ms. Packet 3, lost too, carried
// stream 4, which is never sent again in the log: no wait ends.
func TestAResentRangeEndsItsWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r Resends
	r.Sent(t0, 1, []StreamRange{{0, 0, 1000}})
	r.Sent(t0.Add(time.Millisecond), 2, []StreamRange{{0, 1000, 1000}})
	r.Sent(t0.Add(2*time.Millisecond), 3, []StreamRange{{4, 0, 500}})
	r.Sent(t0.Add(3*time.Millisecond), 4, nil) // an ACK alone
	r.Lost(2)
	r.Lost(3)
	r.Lost(4) // no stream data: nothing waits
	r.Sent(t0.Add(81*time.Millisecond), 5, []StreamRange{{0, 1500, 500}})
	got := r.Stalls()
	if len(got) != 1 || got[0] != (Window{t0.Add(time.Millisecond), t0.Add(81 * time.Millisecond)}) {
		t.Fatalf("stalls %v, want one of 80 ms from packet 2's sending", got)
	}
	if w := WaitOf(got); w != 80*time.Millisecond {
		t.Errorf("wait %v, want 80ms", w)
	}
}

// TestWaitsOfStreamsCountOnce: two streams wait 0–50 ms and 30–70 ms:
// the connection stood still 70 ms in all, not 90.
func TestWaitsOfStreamsCountOnce(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	if w := WaitOf([]Window{{ms(30), ms(70)}, {ms(0), ms(50)}}); w != 70*time.Millisecond {
		t.Errorf("wait %v, want 70ms", w)
	}
	if w := WaitOf(nil); w != 0 {
		t.Errorf("no windows: %v", w)
	}
}

// TestResendsKeepsABoundedLog: past maxTracked packets the oldest are
// forgotten, and a loss of one of them ends no wait.
func TestResendsKeepsABoundedLog(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r Resends
	for pn := range int64(maxTracked + 10) {
		r.Sent(t0, pn, []StreamRange{{0, pn * 10, 10}})
	}
	if len(r.sent) != maxTracked {
		t.Errorf("%d packets kept, want %d", len(r.sent), maxTracked)
	}
	r.Lost(3)
	r.Sent(t0.Add(time.Second), maxTracked+10, []StreamRange{{0, 30, 10}})
	if len(r.Stalls()) != 0 {
		t.Errorf("a forgotten packet's loss made a wait: %v", r.Stalls())
	}
}
