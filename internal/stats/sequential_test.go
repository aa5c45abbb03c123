package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSequentialBoundaries: with a single look the boundary is the fixed
// test's; with many, the early ones are far stricter (O'Brien–Fleming) and
// the last one near the fixed test's.
func TestSequentialBoundaries(t *testing.T) {
	one, err := NewSequential(0.01, 30, 30, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b := one.Bound(30); math.Abs(b-2.5758) > 0.001 {
		t.Errorf("one look: bound %.4f, want 2.5758", b)
	}
	many, _ := NewSequential(0.01, 10, 40, 0)
	if first, last := many.Bound(10), many.Bound(40); first < 4.5 || last < 2.5758 || last > 2.75 {
		t.Errorf("bounds %.3f at n = 10, %.3f at n = 40", first, last)
	}
	for n := 11; n <= 40; n++ {
		if many.Bound(n) > many.Bound(n-1)+1e-9 {
			t.Errorf("bound rises from %.4f to %.4f at n = %d", many.Bound(n-1), many.Bound(n), n)
		}
	}
	if _, err := NewSequential(0.01, 1, 10, 0); err == nil {
		t.Error("min 1 accepted")
	}
}

// TestSequentialFalsePositiveRate: 10,000 simulated studies of two
// identical distributions, looked at after every repetition from 10 to
// 40: the sequential test rejects in α ± 0.005 of them, where testing at α
// at every look would reject in several times as many.
func TestSequentialFalsePositiveRate(t *testing.T) {
	t.Parallel() // thousands of simulated studies: the long tests share the cores
	seq, err := NewSequential(Alpha, 10, 40, 0)
	if err != nil {
		t.Fatal(err)
	}
	naive, _ := NewSequential(Alpha, 40, 40, 0) // the fixed test's bound at every look
	rng := rand.New(rand.NewPCG(7, 8))
	const studies = 10_000
	rejected, naiveRejected := 0, 0
	q, b := make([]float64, 0, 40), make([]float64, 0, 40)
	for range studies {
		q, b = q[:0], b[:0]
		stopped, naiveStopped := false, false
		for n := 1; n <= 40; n++ {
			q = append(q, math.Exp(0.3*rng.NormFloat64()))
			b = append(b, math.Exp(0.3*rng.NormFloat64()))
			if n < 10 {
				continue
			}
			if !stopped {
				if l := seq.Decide(n, q, b, math.NaN(), math.NaN()); l.Stop {
					stopped = true
					if l.Reason == StopVerdict {
						rejected++
					}
				}
			}
			if !naiveStopped {
				if u, tie, _ := rankSumU(q, b); func() bool { z, _ := mannWhitneyZ(u, tie, n, n); return z >= naive.Bound(40) }() {
					naiveStopped = true
					naiveRejected++
				}
			}
		}
	}
	rate, naiveRate := float64(rejected)/studies, float64(naiveRejected)/studies
	t.Logf("false positives: sequential %.4f, testing at α at every look %.4f", rate, naiveRate)
	if math.Abs(rate-Alpha) > 0.005 {
		t.Errorf("sequential false-positive rate %.4f, want %.2f ± 0.005", rate, Alpha)
	}
	if naiveRate < 2*Alpha {
		t.Errorf("looking at α every time rejected only %.4f: the test does not show what sequential testing prevents", naiveRate)
	}
}

// TestPairedSequentialFalsePositiveRate: the paired rule, over 10,000
// simulated studies of pairs that share a large link effect but no
// protocol difference, rejects in α ± 0.005 of them; with a 10 %
// difference it stops earlier than the unpaired rule.
func TestPairedSequentialFalsePositiveRate(t *testing.T) {
	t.Parallel() // thousands of simulated studies: the long tests share the cores
	paired, err := NewSequential(Alpha, 10, 40, 0)
	if err != nil {
		t.Fatal(err)
	}
	paired.Paired = true
	unpaired, _ := NewSequential(Alpha, 10, 40, 0)
	rng := rand.New(rand.NewPCG(11, 12))
	study := func(seq *Sequential, effect float64) (rejected bool, stoppedAt int) {
		q, b := map[int]float64{}, map[int]float64{}
		for n := 1; n <= 40; n++ {
			link := math.Exp(0.4 * rng.NormFloat64())
			q[n] = effect * link * math.Exp(0.1*rng.NormFloat64())
			b[n] = link * math.Exp(0.1*rng.NormFloat64())
			if n < 10 {
				continue
			}
			if l := seq.LookAt(n, q, b, 1); l.Stop {
				return l.Reason == StopVerdict, n
			}
		}
		return false, 40
	}
	const studies = 10_000
	rejected := 0
	for range studies {
		if r, _ := study(paired, 1); r {
			rejected++
		}
	}
	if rate := float64(rejected) / studies; math.Abs(rate-Alpha) > 0.005 {
		t.Errorf("paired false-positive rate %.4f, want %.2f ± 0.005", rate, Alpha)
	} else {
		t.Logf("paired false-positive rate %.4f", rate)
	}
	pairedN, unpairedN := 0, 0
	for range 200 {
		_, n := study(paired, 0.9)
		pairedN += n
		_, n = study(unpaired, 0.9)
		unpairedN += n
	}
	if pairedN >= unpairedN {
		t.Errorf("a 10 %% difference: paired rule took %d repetitions in all, unpaired %d", pairedN, unpairedN)
	}
	t.Logf("a 10 %% difference: mean repetitions paired %.1f, unpaired %.1f", float64(pairedN)/200, float64(unpairedN)/200)
}

// TestLooksReadTheirVerdictFromTheirInterval: at every look of simulated
// studies with and without a difference, paired and not, a look has a
// verdict exactly when its repeated interval excludes 1, on the side the
// interval lies; the looks' levels rise to the fixed test's 99 % where
// the rule has one look.
func TestLooksReadTheirVerdictFromTheirInterval(t *testing.T) {
	t.Parallel() // thousands of simulated studies: the long tests share the cores
	if one, _ := NewSequential(Alpha, 12, 12, 0); math.Abs(one.LookLevel(12)-0.99) > 1e-9 {
		t.Errorf("one look's level %.6f, want 0.99", one.LookLevel(12))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	verdicts := 0
	for _, paired := range []bool{false, true} {
		seq, _ := NewSequential(Alpha, 8, 30, 0.02)
		seq.Paired = paired
		if seq.LookLevel(8) <= seq.LookLevel(30) || seq.LookLevel(30) <= 0.99 || seq.LookLevel(7) != 1 {
			t.Errorf("levels %.5f at 8, %.5f at 30, %v before Min: want falling towards (above) 0.99", seq.LookLevel(8), seq.LookLevel(30), seq.LookLevel(7))
		}
		for _, effect := range []float64{1, 0.9, 1.15} {
			for range 40 {
				q, b := map[int]float64{}, map[int]float64{}
				for n := 1; n <= 30; n++ {
					link := math.Exp(0.3 * rng.NormFloat64())
					q[n], b[n] = effect*link*math.Exp(0.15*rng.NormFloat64()), link*math.Exp(0.15*rng.NormFloat64())
					l := seq.LookAt(n, q, b, 9)
					excludes := l.IntervalOK && (l.Hi < 1 || l.Lo > 1)
					if (l.Verdict != NoDifference) != excludes || (l.Verdict == Faster) != (excludes && l.Hi < 1) {
						t.Fatalf("paired %v, effect %g, look %d: verdict %s beside repeated interval [%.3f, %.3f] (ok %v)", paired, effect, n, l.Verdict, l.Lo, l.Hi, l.IntervalOK)
					}
					if excludes {
						verdicts++
					}
				}
			}
		}
	}
	if verdicts == 0 {
		t.Error("no look had a verdict: the test checked nothing")
	}
}
