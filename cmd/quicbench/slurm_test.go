package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	conf, uid, gid, bin, dir := slurmUser(t)
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
// slurmUser starts a one-node Slurm cluster and returns its
// configuration, an ordinary user, the quicbench binary (readable by that
// user) and a directory the user owns.
func slurmUser(t *testing.T) (conf string, uid, gid int, bin, dir string) {
	conf = testenv.StartSlurm(t)
	uid, gid = ordinaryUser(t)
	bin = quicbenchBinary(t)
	os.Chmod(filepath.Dir(bin), 0o755)
	return conf, uid, gid, bin, sharedDir(t, uid)
}

func done(conf string) bool {
	cmd := exec.Command("squeue", "--noheader")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == ""
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestReproduceSubmitsToSlurm: on a real one-node Slurm cluster an ordinary
// user submits Cook et al.'s paper-scale reproduction with --slurm (from
// the user's own namespaces: inside a user namespace of its own sbatch
// cannot authenticate): before submitting it says each spec's shards and
// the expected wall time on the nodes given, then every spec becomes a job
// array sized by the plan (the 17-hour main spec in more shards than the 2
// nodes, none over 4 hours; the 4-minute Alt-Svc spec in one) and a merge
// job that waits for it (afterok) and writes the merged run where the
// reproduction reads it (OUT/<spec>); the jobs are cancelled once seen.
func TestReproduceSubmitsToSlurm(t *testing.T) {
	conf, uid, gid, bin, dir := slurmUser(t)
	out := filepath.Join(dir, "cook")
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "SLURM_CONF=" + conf}
	cmd := exec.Command(bin, "reproduce", "cook2017", "--scale", "paper", "--slurm", "--nodes", "2", "--out", out)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	b, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		cancel := exec.Command("scancel", "--user", strconv.Itoa(uid))
		cancel.Env = append(os.Environ(), "SLURM_CONF="+conf)
		cancel.Run()
		for deadline := time.Now().Add(time.Minute); !done(conf) && time.Now().Before(deadline); {
			time.Sleep(time.Second)
		}
		exec.Command(bin, "cleanup").Run()
	})
	text := string(b)
	if err != nil {
		ctld, _ := os.ReadFile(filepath.Join(filepath.Dir(conf), "slurmctld.log"))
		t.Fatalf("reproduce --slurm: %v\n%s\nslurmctld.log:\n%s", err, text, ctld[max(0, len(ctld)-3000):])
	}
	expect := strings.Index(text, "Expected wall time on 2 nodes: about ")
	if expect < 0 || expect > strings.Index(text, "submitted array job") {
		t.Errorf("no expected wall time before the first submission:\n%s", text)
	}
	arrays := regexp.MustCompile(`(?m)^(\S+): submitted array job (\d+) \((\d+) tasks\) and merge job (\d+) into (.+)$`).FindAllStringSubmatch(text, -1)
	if len(arrays) < 2 {
		t.Fatalf("%d specs submitted, want every spec of the quick reproduction:\n%s", len(arrays), text)
	}
	if !strings.Contains(text, "cook2017: submitted") || !strings.Contains(text, "cook2017-altsvc: submitted") {
		t.Errorf("the main spec or the Alt-Svc spec was not submitted:\n%s", text)
	}
	for _, a := range arrays {
		tasks, _ := strconv.Atoi(a[3])
		if a[5] != filepath.Join(out, a[1]) || (a[1] == "cook2017" && tasks <= 2) || (a[1] == "cook2017-altsvc" && tasks != 1) {
			t.Errorf("%s: %d tasks merged into %s, want the main spec in more shards than nodes, the Alt-Svc spec in one, into %s", a[1], tasks, a[5], filepath.Join(out, a[1]))
		}
		merge, err := os.ReadFile(filepath.Join(out, "slurm", a[1], "quicbench-merge.sbatch"))
		if err != nil || !strings.Contains(string(merge), "merge '"+filepath.Join(out, a[1])+"' ") {
			t.Errorf("%s: merge script %v:\n%s", a[1], err, merge)
		}
		show := exec.Command("scontrol", "show", "job", a[4])
		show.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if job, err := show.Output(); err != nil || !strings.Contains(string(job), "Dependency=afterok:"+a[2]) {
			t.Errorf("%s: merge job %s: %v\n%s", a[1], a[4], err, job)
		}
	}
	// Again, while the main spec's jobs are queued: they are not submitted twice.
	again := exec.Command(bin, "reproduce", "cook2017", "--scale", "paper", "--slurm", "--nodes", "2", "--out", out)
	again.Env, again.Dir, again.SysProcAttr = env, dir, cmd.SysProcAttr
	b, err = again.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "cook2017: its jobs "+arrays[0][2]) || strings.Contains(string(b), "cook2017: submitted") {
		t.Errorf("a second submission while the first's jobs are queued: %v\n%s", err, b)
	}
}
