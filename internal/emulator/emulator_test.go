package emulator

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/tun"
)

func TestForwardsWithDelayBothWays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		e, err := Start(client, servers, Config{
			Up:   link.Config{Delay: 30 * time.Millisecond},
			Down: link.Config{Delay: 70 * time.Millisecond},
		}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		client.Inject([]byte("ping"))
		got := <-servers.Written
		if string(got) != "ping" || time.Since(start) != 30*time.Millisecond {
			t.Errorf("uplink delivered %q after %v, want \"ping\" after 30ms", got, time.Since(start))
		}
		start = time.Now()
		servers.Inject([]byte("pong"))
		got = <-client.Written
		if string(got) != "pong" || time.Since(start) != 70*time.Millisecond {
			t.Errorf("downlink delivered %q after %v, want \"pong\" after 70ms", got, time.Since(start))
		}
		client.Close()
		servers.Close()
		e.Wait()
		up, down := e.Stats()
		wroteUp, wroteDown := e.WrittenBytes()
		if up.Delivered != 1 || down.Delivered != 1 || up.WrittenBytes != 4 || down.WrittenBytes != 4 || wroteUp != 4 || wroteDown != 4 {
			t.Errorf("delivered up %d (%d bytes) down %d (%d bytes), want 1 of 4 bytes each way", up.Delivered, up.WrittenBytes, down.Delivered, down.WrittenBytes)
		}
	})
}

func TestRateLimitPacesDeliveries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 64), tun.NewFake("s", 64)
		// 1000-byte packets at 8 Mbit/s: one per millisecond.
		e, err := Start(client, servers, Config{Up: link.Config{RateBitsPerSecond: 8_000_000}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range 10 {
			client.Inject(make([]byte, 1000))
		}
		for i := range 10 {
			<-servers.Written
			if got, want := time.Since(start), time.Duration(i+1)*time.Millisecond; got != want {
				t.Errorf("packet %d delivered after %v, want %v", i, got, want)
			}
		}
		client.Close()
		servers.Close()
		e.Wait()
	})
}

func TestLossDropsAndCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 128), tun.NewFake("s", 128)
		e, err := Start(client, servers, Config{Up: link.Config{Loss: 1}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			client.Inject([]byte{1})
		}
		synctest.Wait()
		client.Close()
		servers.Close()
		e.Wait()
		if n := len(servers.Written); n != 0 {
			t.Errorf("%d packets crossed a link with 100%% loss", n)
		}
		if up, _ := e.Stats(); up.DroppedLoss != 100 {
			t.Errorf("counted %d losses, want 100", up.DroppedLoss)
		}
	})
}

func TestStartRejectsInvalidConfig(t *testing.T) {
	_, err := Start(tun.NewFake("c", 1), tun.NewFake("s", 1), Config{Down: link.Config{Loss: 2}}, Options{})
	if err == nil {
		t.Fatal("Start accepted a loss probability of 2")
	}
}

// TestStopDoesNotWaitForAFarDeadline: a packet behind a 1 bit/s link is
// due in hours; stopping the emulator returns at once and drops it.
func TestStopDoesNotWaitForAFarDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 16)
		e, err := Start(client, servers, Config{Up: link.Config{RateBitsPerSecond: 1}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		client.Inject(make([]byte, 1000)) // 8000 s at 1 bit/s
		time.Sleep(time.Second)
		start := time.Now()
		client.Close()
		servers.Close()
		e.Stop()
		e.Wait()
		if took := time.Since(start); took != 0 {
			t.Errorf("stopping took %v with a packet due in hours, want no wait", took)
		}
		select {
		case <-servers.Written:
			t.Error("the packet was delivered at stop")
		default:
		}
	})
}

// TestAwaitIdleWaitsForTheLinkToDrain: the link is idle once the last
// packet it held was delivered and nothing new came for the quiet time;
// traffic that never stops keeps it busy until the context ends.
func TestAwaitIdleWaitsForTheLinkToDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 16), tun.NewFake("s", 256)
		e, err := Start(client, servers, Config{Up: link.Config{Delay: 30 * time.Millisecond}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		client.Inject([]byte("late"))
		synctest.Wait()
		if e.Waiting() != 1 {
			t.Errorf("waiting %d after a packet was read, want 1", e.Waiting())
		}
		if !e.AwaitIdle(t.Context(), 10*time.Millisecond) {
			t.Fatal("not idle")
		}
		// the last activity is seen at a poll, up to idlePoll after it was
		if took := time.Since(start); took < 40*time.Millisecond-idlePoll || took > 40*time.Millisecond+2*idlePoll {
			t.Errorf("idle after %v, want the 30 ms delivery and 10 ms of quiet, to a poll", took)
		}
		// No packet since: the link has been quiet all along, and the
		// next wait for quiet ends at once.
		again := time.Now()
		if !e.AwaitIdle(t.Context(), 10*time.Millisecond) || time.Since(again) != 0 {
			t.Errorf("a second wait with no packet since the first took %v, want none", time.Since(again))
		}
		client.Inject([]byte("one more"))
		synctest.Wait()
		again = time.Now()
		if !e.AwaitIdle(t.Context(), 10*time.Millisecond) || time.Since(again) < 10*time.Millisecond {
			t.Errorf("a wait after a new packet took %v, want its delivery and the quiet", time.Since(again))
		}
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
					client.Inject([]byte("chatter"))
				}
			}
		}()
		time.Sleep(6 * time.Millisecond) // the chatter has begun
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if e.AwaitIdle(ctx, 10*time.Millisecond) {
			t.Error("idle while a packet came every 5 ms")
		}
		close(stop)
		client.Close()
		servers.Close()
		e.Wait()
	})
}
