package experiment

import (
	"testing"

	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestLoadsRecordTheirStalls: h2 loads over a link that drops 5 % of the
// downstream packets record the data segments lost, their repair and the
// time the streams stood still for them, within what the emulator counted
// and the load's own time; h3 loads from quic-go record the time their
// streams waited for resent data; over a lossless link, neither waits.
func TestLoadsRecordTheirStalls(t *testing.T) {
	testenv.RequireRoot(t)
	res, store, _ := runSpec(t, `seed: 5
repetitions: 2
client: loader
netcheck: false
factors:
  networks: [{name: lossy, rtt: 20ms, loss-down: 5}, {name: clean, rtt: 20ms}]
  pages: [synthetic:16x20KB]
  protocols: [h2, h3]
`)
	if res.Done != 8 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	waited := map[factor.Protocol]float64{}
	for _, tr := range trialsOf(t, store) {
		if tr.Protocol == factor.H3 {
			checkQUICStalls(t, tr.Trial)
		} else {
			checkStalls(t, tr.Trial)
		}
		if tr.Network == "clean" && tr.LossWaitMs != nil && (*tr.LossWaitMs != 0 || tr.TCPLosses != 0 || tr.HeldBytes != 0) {
			t.Errorf("%s %s on a clean link: %+v", tr.ID, tr.Protocol, tr.Stalls)
		}
		if tr.Network == "lossy" && tr.LossWaitMs != nil {
			waited[tr.Protocol] += *tr.LossWaitMs
		}
		checkLossRows(t, store, tr.Trial)
	}
	if waited[factor.H2] == 0 || waited[factor.H3] == 0 {
		t.Errorf("loss waits over two loads of 320 KB at 5 %% loss: %v, want some for h2 and h3", waited)
	}
}

// checkQUICStalls fails an h3 trial without a loss wait or with TCP's.
func checkQUICStalls(t *testing.T, tr results.Trial) {
	t.Helper()
	if tr.LossWaitMs == nil || tr.PLT == nil || *tr.LossWaitMs > *tr.PLT || tr.HeldMs != nil || tr.TCPLosses != 0 {
		t.Errorf("%s (h3): stalls %+v, want a loss wait within its PLT and no TCP stalls", tr.ID, tr.Stalls)
		return
	}
	t.Logf("%s h3: waited %.1f ms (PLT %.0f ms)", tr.Network, *tr.LossWaitMs, *tr.PLT)
}

// checkStalls fails an h2 trial whose stalls are missing or exceed what
// the emulator dropped and the load's own time.
func checkStalls(t *testing.T, tr results.Trial) {
	t.Helper()
	if tr.LossWaitMs == nil || tr.HeldMs == nil || tr.PLT == nil {
		t.Errorf("%s: stalls %+v, PLT %v: want both times", tr.ID, tr.Stalls, tr.PLT)
		return
	}
	dropped := tr.DownLost + tr.DownQueueDrops + tr.DownPathLost
	if tr.TCPLosses > dropped || tr.TCPRepaired > tr.TCPLosses || *tr.LossWaitMs > *tr.PLT || *tr.HeldMs > *tr.PLT {
		t.Errorf("%s: stalls %+v with %d packets dropped downstream and PLT %.0f ms", tr.ID, tr.Stalls, dropped, *tr.PLT)
	}
	t.Logf("%s %s: %d lost, %d repaired, waited %.1f ms, %d bytes held %.1f ms (PLT %.0f ms)", tr.Network, tr.Protocol,
		tr.TCPLosses, tr.TCPRepaired, *tr.LossWaitMs, tr.HeldBytes, *tr.HeldMs, *tr.PLT)
}

// checkLossRows fails a trial whose losses table disagrees with its
// counters: as many drops as the emulator counted, each named by its
// connection, and a wait for lost data wherever the trial waited.
func checkLossRows(t *testing.T, store *results.Store, tr results.Trial) {
	t.Helper()
	losses, err := store.LossesOf(tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	var drops, waits int64
	for _, l := range losses {
		switch {
		case l.Kind == results.LossDrop && l.Client != "" && l.Server != "" && l.FromMs == l.ToMs:
			drops++
		case l.Kind == results.LossWait && l.ToMs > l.FromMs:
			waits++
		default:
			t.Errorf("%s: loss row %+v", tr.ID, l)
		}
	}
	counted := tr.DownLost + tr.DownQueueDrops + tr.DownPathLost + tr.UpLost + tr.UpQueueDrops + tr.UpPathLost
	if drops != counted || (tr.LossWaitMs != nil && *tr.LossWaitMs > 0) != (waits > 0) {
		t.Errorf("%s: %d drops and %d waits in the losses table, %d drops counted, loss wait %v", tr.ID, drops, waits, counted, tr.LossWaitMs)
	}
}
