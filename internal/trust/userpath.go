package trust

// The one rule for every path a user names to a quicbench command (an
// --out, a --to, a spec, a recording, a shard, a certificate authority, a
// program): as root, quicbench reads, writes and runs nothing that another
// user owns or could change, on the path or on the way to it (each
// directory passed through and the entry itself owned by root, writable by
// no other user, a sticky directory such as /tmp allowed on the way). A
// path that passes cannot be swapped under root by anyone else, so what is
// below it is then read and written through descriptors that follow no
// link (package safefs). An ordinary user, and a rootless run's namespace
// (which holds no privilege beyond its user's), is not judged: nothing
// they name reaches further than they can themselves.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// PathKind is what a command does with a path a user named.
type PathKind int

// The kinds of path.
const (
	// Output is a directory the command writes into, made if missing.
	Output PathKind = iota
	// OutputFile is a file the command writes (made if missing, its
	// directory checked as Output's).
	OutputFile
	// InputFile is a regular file the command reads.
	InputFile
	// InputDir is a directory the command reads.
	InputDir
	// Input is a file or a directory the command reads (a recording: a
	// HAR file or a Mahimahi directory).
	Input
	// Program is a program the command runs, or hands to a node to run.
	Program
)

// String names the kind as the enumerating tests and errors do.
func (k PathKind) String() string {
	switch k {
	case Output:
		return "output directory"
	case OutputFile:
		return "output file"
	case InputFile:
		return "input file"
	case InputDir:
		return "input directory"
	case Input:
		return "input"
	case Program:
		return "program"
	}
	return fmt.Sprintf("PathKind(%d)", int(k))
}

// UserPath is one path of a command line: what it is, its value, and the flag
// or argument that names it ("--out", "SPEC"; "" where the caller's error
// names it).
type UserPath struct {
	Kind  PathKind
	Value string
	Name  string
}

// Judged reports whether this process applies the rule: it runs as root
// in a namespace where root is more than an ordinary user.
func Judged() bool { return os.Geteuid() == 0 && enforced() }

// CheckUserPaths applies the rule to each path with a value, in order, and
// returns the first refusal as one line that names the flag or argument
// and the fix. Paths that do not exist yet are fine for Output (the way to
// them is checked) and left to the command otherwise (it says it is
// missing).
func CheckUserPaths(paths ...UserPath) error {
	if !Judged() {
		return nil
	}
	for _, p := range paths {
		if p.Value == "" {
			continue
		}
		if err := check(p); err != nil {
			return &RefusedError{Path: p, Err: err}
		}
	}
	return nil
}

// check applies the rule to one path.
func check(p UserPath) error {
	var err error
	switch p.Kind {
	case Output:
		_, err = DirOrParent(p.Value)
	case OutputFile:
		err = checkOutputFile(p.Value)
	case InputFile:
		_, err = File(p.Value)
	case InputDir:
		err = Dir(p.Value)
	case Input:
		if fi, serr := os.Stat(p.Value); serr == nil && fi.IsDir() {
			err = Dir(p.Value)
		} else {
			_, err = File(p.Value)
		}
	case Program:
		_, err = Executable(p.Value)
	}
	if errors.Is(err, os.ErrNotExist) && p.Kind != Output {
		return nil // the command says what is missing
	}
	return err
}

// RefusedError is a path the rule refused.
type RefusedError struct {
	Path UserPath
	Err  error
}

// Error names the path, why it was refused and what to do instead.
func (e *RefusedError) Error() string {
	if e.Path.Name == "" { // a file a reader was handed, its caller names it
		return fmt.Sprintf("%v: run quicbench as that user, or copy it into a directory of root's", e.Err)
	}
	what := "one of root's"
	if e.Path.Kind == Output {
		what = "a directory of root's"
	}
	return fmt.Sprintf("%s %s: %v: run quicbench as that user, or give %s %s", e.Path.Name, e.Path.Kind, e.Err, e.Path.Name, what)
}

// Unwrap is the reason the path was refused.
func (e *RefusedError) Unwrap() error { return e.Err }

// checkOutputFile checks the directory a file is written into as an
// output directory, and the file, if it is there, as one root may replace:
// a regular file of root's or this user's, not a link.
func checkOutputFile(path string) error {
	if _, err := DirOrParent(filepath.Dir(path)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil // not there yet: the command makes it
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &UntrustedError{Path: path, Why: "is there and is not a regular file (a link, a directory or a device)"}
	}
	if !trustedOwner(st.Uid) {
		return &UntrustedError{Path: path, Why: "belongs to " + ownerText(st.Uid)}
	}
	return nil
}
