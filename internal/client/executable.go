package client

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/trust"
)

// Executable is a client's own program (a browser's binary): the command
// line flag that names it, where it is by default and how to install it.
type Executable struct {
	// Flag is the flag of run, compare, reproduce and doctor that names
	// it, such as "chromium" for --chromium.
	Flag string
	// Name is what the flag's help calls it, such as "Chromium".
	Name string
	// Default is its path when the flag is not given.
	Default string
	// Install is the command that installs it, such as "make firefox";
	// Package what that command installs, such as "apt-get install
	// firefox-esr libnss3-tools".
	Install, Package string
}

// Path is path, or e.Default if path is empty.
func (e Executable) Path(path string) string { return cmp.Or(path, e.Default) }

// Check returns an error that says how to install the program if path
// (empty: its default) is not there, or why it is not run if it is not
// trusted (trust.Executable).
func (e Executable) Check(path string) error {
	path = e.Path(path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s not found at %s: install it with '%s' (%s), or pass --%s PATH", e.Flag, path, e.Install, e.Package, e.Flag)
	}
	if _, err := trust.Executable(path); err != nil {
		return fmt.Errorf("%s: not run: %w", e.Flag, err)
	}
	return nil
}

// Version is what the program at path (empty: its default) says its
// version is (--version), such as "Mozilla Firefox 153.7.0esr"; "" if it
// says nothing in versionTimeout or is not trusted.
func (e Executable) Version(path string) string { return e.versionWithin(path, versionTimeout) }

// versionWithin is Version with its own time limit.
func (e Executable) versionWithin(path string, limit time.Duration) string {
	path, err := trust.Executable(e.Path(path))
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// versionTimeout bounds a program's --version: one that does not answer
// in it has no version to record, rather than a run that never starts.
const versionTimeout = 10 * time.Second
