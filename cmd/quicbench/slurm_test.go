package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestSlurmArrayMergesToTheWholeRun: on a real one-node Slurm cluster an
// ordinary user submits a spec as a 2-task job array with its merge job,
// into a directory whose name has a space (sbatch must take the quoted
// #SBATCH --output); the merged run has the trials and factor levels of
// the spec run in one piece.
func TestSlurmArrayMergesToTheWholeRun(t *testing.T) {
	conf := testenv.StartSlurm(t)
	uid, gid := ordinaryUser(t)
	bin := quicbenchBinary(t)
	os.Chmod(filepath.Dir(bin), 0o755)
	dir := sharedDir(t, uid)
	specPath := filepath.Join(dir, "study.yaml")
	text := "name: slurm-study\nseed: 3\nrepetitions: 2\nclient: loader\nnetcheck: false\nfactors:\n  networks: [{name: a, rtt: 10ms}, {name: b, rtt: 20ms, loss: 1}]\n  pages: [synthetic:2x5KB]\n  protocols: [h2, h3]\n"
	if err := os.WriteFile(specPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	study := filepath.Join(dir, "my study")
	cmd := exec.Command(bin, "slurm", specPath, "--shards", "2", "--out", study, "--submit")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "SLURM_CONF=" + conf}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "submitted array job") {
		t.Fatalf("quicbench slurm --submit: %v\n%s", err, out)
	}
	merged := filepath.Join(study, "merged", results.FileName)
	deadline := time.Now().Add(3 * time.Minute)
	for !done(conf) || !exists(merged) {
		if time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(study, "slurm-*.out"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
			t.Fatal("the array and its merge job did not finish in 3 minutes")
		}
		time.Sleep(time.Second)
	}
	// root's run: its spec and run in root's directory (root reads
	// nothing of the user's)
	rootSpec := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(rootSpec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if b, err := exec.Command(bin, "run", rootSpec, "--out", whole).CombinedOutput(); err != nil {
		t.Fatalf("the spec in one piece: %v\n%s", err, b)
	}
	want, err := results.RunLevels(whole)
	if err != nil {
		t.Fatal(err)
	}
	got, err := results.RunLevels(filepath.Join(study, "merged"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 8 || len(got) != len(want) {
		t.Fatalf("merged run has %d trials, the whole run %d", len(got), len(want))
	}
	for id, lv := range want {
		if got[id] != lv {
			t.Errorf("trial %s: merged %+v, whole %+v", id, got[id], lv)
		}
	}
}

// done reports whether the cluster has no job left.
func done(conf string) bool {
	cmd := exec.Command("squeue", "--noheader")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == ""
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }
