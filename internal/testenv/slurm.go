package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartSlurm starts a one-node Slurm cluster of this machine for t (munge
// if it is not running, slurmctld and slurmd on ports of their own, state
// in a temporary directory) and returns the path of its slurm.conf, for
// SLURM_CONF. The daemons it started stop when t ends.
func StartSlurm(t *testing.T) string {
	t.Helper()
	RequireRoot(t)
	for _, name := range []string{"slurmctld", "slurmd", "sbatch", "squeue", "munged", "munge"} {
		RequireCommand(t, name)
	}
	dir, err := os.MkdirTemp("", "qb-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // the job's user reads slurm.conf
	t.Cleanup(func() { os.RemoveAll(dir) })
	startMunge(t)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=quicbench
SlurmctldHost=%[1]s
SlurmctldPort=26817
SlurmdPort=26818
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmUser=root
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/slurmctld.log
SlurmdLogFile=%[2]s/slurmd.log
NodeName=%[1]s CPUs=%[3]d State=UNKNOWN
PartitionName=quicbench Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, dir, runtime.NumCPU())
	for _, sub := range []string{"state", "spool"} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
	}
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, daemon := range []string{"slurmctld", "slurmd"} {
		cmd := exec.Command(daemon, "-D", "-f", conf)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", daemon, err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); cmd.Wait() })
	}
	waitForNode(t, conf)
	return conf
}

// startMunge starts munged unless a credential can be made already.
func startMunge(t *testing.T) {
	t.Helper()
	if exec.Command("munge", "-n").Run() == nil {
		return
	}
	os.MkdirAll("/run/munge", 0o755)
	exec.Command("chown", "munge:munge", "/run/munge").Run()
	cmd := exec.Command("runuser", "-u", "munge", "--", "munged", "--foreground")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("munged: %v", err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); cmd.Wait() })
	for range 50 {
		if exec.Command("munge", "-n").Run() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("munged did not start: is /etc/munge/munge.key there (apt-get install munge)?")
}

// waitForNode waits until the cluster's node takes jobs: it is idle, and
// the controller accepts a job (a controller that has just started says
// its node is idle some seconds before it takes submissions: sbatch then
// fails with "Batch job submission failed: No error").
func waitForNode(t *testing.T, conf string) {
	t.Helper()
	for range 150 {
		cmd := exec.Command("sinfo", "--noheader", "--format=%t")
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if out, err := cmd.Output(); err == nil && strings.Contains(string(out), "idle") {
			probe := exec.Command("sbatch", "--test-only", "--wrap", "true")
			probe.Env = cmd.Env
			if probe.Run() == nil {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the Slurm node did not take jobs: see slurmctld.log and slurmd.log")
}
