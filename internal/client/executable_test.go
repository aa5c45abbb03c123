package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAVersionThatNeverAnswersIsBounded: a program's --version that never
// answers (a hung browser build) held the run's start for as long as it
// hung; it now has no version after its time limit (versionTimeout, 10 s;
// 300 ms here), and one that answers has its line.
func TestAVersionThatNeverAnswersIsBounded(t *testing.T) {
	dir := t.TempDir()
	hangs, answers := filepath.Join(dir, "hangs"), filepath.Join(dir, "answers")
	os.WriteFile(hangs, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755)
	os.WriteFile(answers, []byte("#!/bin/sh\necho 'Browser 1.2.3'\n"), 0o755)
	e := Executable{Flag: "--browser", Name: "browser"}
	if got := e.Version(answers); got != "Browser 1.2.3" {
		t.Errorf("Version of a program that answers: %q", got)
	}
	start := time.Now()
	const limit = 300 * time.Millisecond
	if got := e.versionWithin(hangs, limit); got != "" {
		t.Errorf("Version of a program that hangs: %q, want none", got)
	}
	if took := time.Since(start); took > limit+3*time.Second {
		t.Errorf("Version of a program that hangs took %v, want about %v", took, limit)
	}
}
