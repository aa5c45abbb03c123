package link

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

func mustNew(t *testing.T, cfg Config) *Direction {
	t.Helper()
	d, err := New(cfg, time.Unix(0, 0))
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return d
}

func TestDelayOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := mustNew(t, Config{Delay: 50 * time.Millisecond})
		for i := range 5 {
			now := time.Now()
			at, v := d.Send(now, 1500)
			if v != Delivered {
				t.Fatalf("packet %d: verdict %v, want delivered", i, v)
			}
			if got := at.Sub(now); got != 50*time.Millisecond {
				t.Errorf("packet %d: delivered after %v, want 50ms", i, got)
			}
			time.Sleep(3 * time.Millisecond)
		}
	})
}

func TestRateSerializesBackToBackPackets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 1500 bytes at 12 Mbit/s take exactly 1 ms.
		d := mustNew(t, Config{Delay: 10 * time.Millisecond, RateBitsPerSecond: 12_000_000})
		start := time.Now()
		for i := range 4 {
			at, v := d.Send(start, 1500)
			if v != Delivered {
				t.Fatalf("packet %d: %v", i, v)
			}
			want := 10*time.Millisecond + time.Duration(i+1)*time.Millisecond
			if got := at.Sub(start); got != want {
				t.Errorf("packet %d: delivered after %v, want %v", i, got, want)
			}
		}
	})
}

func TestDropTailQueueInBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := mustNew(t, Config{RateBitsPerSecond: 12_000_000, QueueBytes: 3000})
		now := time.Now()
		var verdicts []Verdict
		for range 4 {
			_, v := d.Send(now, 1500)
			verdicts = append(verdicts, v)
		}
		want := []Verdict{Delivered, Delivered, DroppedQueue, DroppedQueue}
		for i := range want {
			if verdicts[i] != want[i] {
				t.Fatalf("verdicts %v, want %v", verdicts, want)
			}
		}
		// After 1 ms the first packet has left: room for one more.
		time.Sleep(time.Millisecond)
		if _, v := d.Send(time.Now(), 1500); v != Delivered {
			t.Errorf("after 1ms drain: %v, want delivered", v)
		}
		if _, v := d.Send(time.Now(), 1500); v != DroppedQueue {
			t.Errorf("queue full again: %v, want dropped-queue", v)
		}
		s := d.Stats()
		if s.Packets != 6 || s.Delivered != 3 || s.DroppedQueue != 3 || s.PeakQueueBytes != 3000 {
			t.Errorf("stats %+v, want 6 packets, 3 delivered, 3 queue drops, peak 3000", s)
		}
	})
}

func TestOversizedPacketAcceptedIntoEmptyQueue(t *testing.T) {
	d := mustNew(t, Config{RateBitsPerSecond: 1_000_000, QueueBytes: 100})
	if _, v := d.Send(time.Unix(0, 0), 1500); v != Delivered {
		t.Fatalf("empty queue refused a packet larger than the limit: %v", v)
	}
}

func TestDeliveriesStayInOrder(t *testing.T) {
	d := mustNew(t, Config{Delay: 5 * time.Millisecond, RateBitsPerSecond: 1_000_000})
	base := time.Unix(100, 0)
	var last time.Time
	// Arrival times that go slightly backwards, as two readers' clocks may.
	for i, off := range []time.Duration{0, 2, 1, 5, 4, 4, 9} {
		at, v := d.Send(base.Add(off*time.Microsecond), 100+i*200)
		if v != Delivered {
			t.Fatal(v)
		}
		if at.Before(last) {
			t.Fatalf("packet %d delivered at %v before the previous %v", i, at, last)
		}
		last = at
	}
}

// TestBernoulliLossRate checks the measured loss rate against a 99.9%
// binomial interval computed from the configured probability.
func TestBernoulliLossRate(t *testing.T) {
	for _, p := range []float64{0.005, 0.01, 0.02, 0.2} {
		const n = 200_000
		d := mustNew(t, Config{Loss: p, Seed: 42})
		now := time.Unix(0, 0)
		for range n {
			d.Send(now, 1200)
		}
		lost := float64(d.Stats().DroppedLoss)
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(lost-n*p) > 3.3*sd {
			t.Errorf("p=%v: lost %v of %d, want %v ± %.0f", p, lost, n, n*p, 3.3*sd)
		}
	}
}

func TestLossIsReproducibleFromSeed(t *testing.T) {
	decisions := func(seed uint64) []Verdict {
		d := mustNew(t, Config{Loss: 0.3, Seed: seed})
		var out []Verdict
		for range 200 {
			_, v := d.Send(time.Unix(0, 0), 100)
			out = append(out, v)
		}
		return out
	}
	a, b, c := decisions(7), decisions(7), decisions(8)
	same := func(x, y []Verdict) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed gave different loss decisions")
	}
	if same(a, c) {
		t.Error("seeds 7 and 8 gave identical decisions for 200 packets")
	}
}

func TestLossExtremes(t *testing.T) {
	never := mustNew(t, Config{Loss: 0})
	always := mustNew(t, Config{Loss: 1})
	for range 1000 {
		if _, v := never.Send(time.Unix(0, 0), 1); v != Delivered {
			t.Fatal("loss 0 dropped a packet")
		}
		if _, v := always.Send(time.Unix(0, 0), 1); v != DroppedLoss {
			t.Fatal("loss 1 delivered a packet")
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Config{
		{Delay: -time.Millisecond},
		{Loss: -0.1},
		{Loss: 1.5},
		{Loss: math.NaN()},
		{RateBitsPerSecond: -1},
		{QueueBytes: -1},
	}
	for _, c := range bad {
		if _, err := New(c, time.Unix(0, 0)); err == nil {
			t.Errorf("New(%+v) accepted an invalid config", c)
		}
	}
}

func TestTransmissionTime(t *testing.T) {
	tests := []struct {
		size int
		rate int64
		want time.Duration
	}{
		{1500, 12_000_000, time.Millisecond},
		{1500, 1_000_000_000, 12 * time.Microsecond},
		{1, 3, 2666666667}, // 8 bits at 3 bit/s, rounded up
	}
	for _, tt := range tests {
		if got := TransmissionTime(tt.size, tt.rate); got != tt.want {
			t.Errorf("TransmissionTime(%d, %d) = %v, want %v", tt.size, tt.rate, got, tt.want)
		}
	}
}

func TestResetPeaks(t *testing.T) {
	d := mustNew(t, Config{RateBitsPerSecond: 12_000_000})
	start := time.Unix(0, 0)
	for range 3 {
		d.Send(start, 1500)
	}
	if d.Stats().PeakQueuePackets != 3 {
		t.Fatalf("peak %d, want 3", d.Stats().PeakQueuePackets)
	}
	d.ResetPeaks()
	if s := d.Stats(); s.PeakQueuePackets != 3 || s.PeakQueueBytes != 4500 {
		t.Errorf("after reset with 3 queued: peak %d packets %d B, want the current 3 and 4500", s.PeakQueuePackets, s.PeakQueueBytes)
	}
	d.Send(start.Add(10*time.Millisecond), 100) // the queue has drained
	d.ResetPeaks()
	if s := d.Stats(); s.PeakQueuePackets != 1 || s.PeakQueueBytes != 100 {
		t.Errorf("after draining: peak %d packets %d B, want 1 and 100", s.PeakQueuePackets, s.PeakQueueBytes)
	}
}

// TestReseedRepeatsPacketFates: after Reseed with the same seed, two
// directions with different histories lose the same packets and give the
// same jitter, on Bernoulli and Gilbert-Elliott loss.
func TestReseedRepeatsPacketFates(t *testing.T) {
	start := time.Unix(0, 0)
	for name, cfg := range map[string]Config{
		"bernoulli": {Seed: 1, Loss: 0.2, Delay: 10 * time.Millisecond, Jitter: time.Millisecond},
		"gilbert":   {Seed: 1, GilbertElliott: &GilbertElliott{P: 0.05, R: 0.3, LossBad: 1}},
	} {
		a, _ := New(cfg, start)
		b, _ := New(cfg, start)
		now := start
		for range 37 { // a history only a has
			now = now.Add(time.Millisecond)
			a.Send(now, 1200)
		}
		now = now.Add(time.Second)
		a.Reseed(99, now)
		b.Reseed(99, now)
		same := 0
		for i := range 500 {
			at := now.Add(time.Duration(i) * time.Millisecond)
			ta, va := a.Send(at, 1200)
			tb, vb := b.Send(at, 1200)
			if va == vb && ta.Equal(tb) {
				same++
			}
		}
		if same != 500 {
			t.Errorf("%s: %d of 500 packets met the same fate after Reseed", name, same)
		}
	}
}

// TestSuspendedLossDropsNothingAndKeepsTheSequence: while the loss is
// suspended no packet is lost, and the packets after it meet the losses
// they would have met had it not been (the process drew for each), for
// random and bursty loss alike.
func TestSuspendedLossDropsNothingAndKeepsTheSequence(t *testing.T) {
	for _, cfg := range []Config{{Loss: 0.3, Seed: 7}, {GilbertElliott: &GilbertElliott{P: 0.1, R: 0.3, LossBad: 0.8}, Seed: 7}} {
		plain, suspended := mustNew(t, cfg), mustNew(t, cfg)
		for i := range 400 {
			_, want := plain.Send(time.Unix(0, 0), 100)
			suspended.SuspendLoss(i >= 100 && i < 200)
			_, got := suspended.Send(time.Unix(0, 0), 100)
			switch {
			case i >= 100 && i < 200 && got != Delivered:
				t.Fatalf("%+v: packet %d %v while the loss was suspended", cfg, i, got)
			case (i < 100 || i >= 200) && got != want:
				t.Fatalf("%+v: packet %d %v, want %v as without the suspension", cfg, i, got, want)
			}
		}
		if s := suspended.Stats(); s.DroppedLoss == 0 {
			t.Errorf("%+v: no loss outside the suspension", cfg)
		}
	}
}
