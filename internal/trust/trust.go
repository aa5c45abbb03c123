// Package trust decides which files and directories a quicbench process may
// rely on. quicbench runs as root on machines shared with strangers, so a
// path it executes, or hands to a browser or server as root, must be one no
// other user can change: the path and every directory above it (links
// followed, and each link's own directory checked on the way) owned by root
// or by this process's user, and writable by no group and no other user. A
// directory with the sticky bit (such as /tmp) may be writable by everyone
// on the way, as long as the entry taken from it is owned by root or this
// user (others cannot rename or remove it there).
//
// A path is resolved as the kernel resolves it, component by component
// with every link followed before a ".." after it, never by cleaning the
// text (filepath.Clean would take "link/.." away without looking at the
// link), and callers run or write into the resolved path they were given
// back: exactly what was checked.
//
// In a user namespace that maps one uid alone, and that uid is an ordinary
// user's outside (a rootless run: every other user shows as the overflow
// uid, root's files among them), the process holds no privilege beyond its
// user's and ownership is not judged. In any other user namespace (a
// container mapping many users, or root's own `unshare -r`, whose one uid
// is root's) owners are judged as the namespace sees them: there another
// user's files show as the overflow uid and are refused.
package trust

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the links followed in one path, as the kernel's 40.
const maxLinks = 40

// UntrustedError says why a path may not be relied on.
type UntrustedError struct {
	// Path is the file or directory that failed the check.
	Path string
	// Why says what is wrong with it.
	Why string
}

// Error names the path and why it is not trusted.
func (e *UntrustedError) Error() string {
	return fmt.Sprintf("%s %s", e.Path, e.Why)
}

// InitialUserNamespace reports whether this process is in the machine's
// initial user namespace (its uid_map maps every uid to itself), where
// root is the machine's root; false inside a namespace such as the one a
// rootless run makes.
func InitialUserNamespace() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true // no user namespaces in this kernel
	}
	return strings.Join(strings.Fields(string(data)), " ") == "0 0 4294967295"
}

// enforced reports whether ownership is judged: everywhere but in a user
// namespace that maps a single ordinary user's uid, where every other
// owner is the overflow uid and the process can do nothing that user
// could not.
func enforced() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true // no user namespaces in this kernel
	}
	return !mapsOneOrdinaryUID(string(data))
}

// mapsOneOrdinaryUID reports whether uidMap (the text of
// /proc/PID/uid_map) maps exactly one uid, and that to a uid other than
// root's outside: one line whose count is 1 and whose outside uid is not
// 0. Root's own `unshare -r` maps "0 0 1": it keeps root's power over
// every file and is judged.
func mapsOneOrdinaryUID(uidMap string) bool {
	lines := strings.Split(strings.TrimSpace(uidMap), "\n")
	if len(lines) != 1 {
		return false
	}
	f := strings.Fields(lines[0])
	return len(f) == 3 && f[2] == "1" && f[1] != "0"
}

// trustedOwner reports whether uid is root or this process's user.
func trustedOwner(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

// ownerText names a user by uid and, where the machine knows it, name.
func ownerText(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// Dir checks that the directory path and every directory above it can be
// changed only by root or this process's user. Unlike the directories on
// the way, path itself may not be writable by others even with the sticky
// bit: what is inside it must be this user's alone.
func Dir(path string) error {
	if !enforced() {
		return nil
	}
	resolved, st, err := walk(path, false)
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &UntrustedError{Path: resolved, Why: "is not a directory"}
	}
	if st.Mode&0o022 != 0 {
		return &UntrustedError{Path: resolved, Why: "can be written by other users (mode " + modeText(st) + "): use a directory only you can write"}
	}
	return nil
}

// DirOrParent is Dir for a directory that exists; for one that does not
// (yet), it checks the way to its nearest existing ancestor, which may be
// writable by everyone if it has the sticky bit (as /tmp): a directory
// made there by this user is then this user's alone. Check the new
// directory with Dir once it is made (another user could make it first).
// It returns path resolved (links followed, ".." taken after them): make
// and write into that path, which is the one checked.
func DirOrParent(path string) (string, error) {
	if !enforced() {
		return path, nil
	}
	resolved, st, err := walk(path, true)
	if err != nil {
		return resolved, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return resolved, &UntrustedError{Path: resolved, Why: "is not a directory"}
	}
	if st.Mode&0o022 != 0 && !missing(st) {
		return resolved, &UntrustedError{Path: resolved, Why: "can be written by other users (mode " + modeText(st) + "): use a directory only you can write"}
	}
	return resolved, nil
}

// missingMark is the status walk gives a path whose tail does not exist:
// the nearest existing ancestor's, with this bit set in Nlink's place.
const missingMark = ^uint64(0)

// missing reports whether st is walk's status for a path not made yet.
func missing(st unix.Stat_t) bool { return st.Nlink == missingMark }

// File checks that path is a file that only root or this process's user
// can change (whether it is a regular one is the reader's to say), in directories only they can change (see
// Dir), and returns it resolved (links followed): open that path, the one
// checked. It is for files a command reads as root that decide what it
// does or what it writes where others may read it (a spec, a certificate
// authority, a recording).
func File(path string) (string, error) {
	if !enforced() {
		return path, nil
	}
	resolved, st, err := walk(path, false)
	if err != nil {
		return "", err
	}
	if !trustedOwner(st.Uid) {
		return "", &UntrustedError{Path: resolved, Why: "belongs to " + ownerText(st.Uid) + ": as root, quicbench reads no file another user owns"}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o022 != 0 {
		return "", &UntrustedError{Path: resolved, Why: "can be written by other users (mode " + modeText(st) + ")"}
	}
	return resolved, nil
}

// Executable checks that path is a regular executable file that only root
// or this process's user can change, in directories only they can change,
// and returns it resolved (links followed): run that path, the one
// checked.
func Executable(path string) (string, error) {
	var st unix.Stat_t
	resolved, judged := path, enforced()
	if judged {
		var err error
		if resolved, st, err = walk(path, false); err != nil {
			return "", err
		}
	} else if err := unix.Stat(path, &st); err != nil {
		return "", &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", &UntrustedError{Path: resolved, Why: "is not a regular file"}
	}
	if st.Mode&0o111 == 0 {
		return "", &UntrustedError{Path: resolved, Why: "is not executable"}
	}
	if !judged {
		return resolved, nil
	}
	if !trustedOwner(st.Uid) {
		return "", &UntrustedError{Path: resolved, Why: "belongs to " + ownerText(st.Uid) + ": as root, quicbench runs no program another user owns"}
	}
	if st.Mode&0o022 != 0 {
		return "", &UntrustedError{Path: resolved, Why: "can be written by other users (mode " + modeText(st) + "): quicbench runs no program another user can change"}
	}
	return resolved, nil
}

// LookPath finds the executable name on PATH, as exec.LookPath does, but
// only in PATH's directories that pass Dir's checks for the way there
// (a directory that another user can write, or one below such, is passed
// over); a name with a slash is checked as it is. It returns the program's
// resolved path (Executable).
func LookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return Executable(name)
	}
	var skipped []error
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // the working directory: never
		}
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		resolved, err := Executable(path)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		return resolved, nil
	}
	if len(skipped) > 0 {
		return "", fmt.Errorf("%s: found on PATH only where another user can change it (%w)", name, skipped[0])
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// modeText is a file's permission bits in octal, with the sticky bit.
func modeText(st unix.Stat_t) string { return fmt.Sprintf("%04o", st.Mode&0o7777) }

// walk resolves path component by component from the root, following
// links, and checks every directory it passes through and every entry it
// takes from a directory that others may write. It returns the resolved
// path and the final entry's status. With tailMissing, the path's last
// names may not exist yet (plain names only, no ".."): the status is then
// the nearest existing ancestor's, marked missing.
func walk(path string, tailMissing bool) (string, unix.Stat_t, error) {
	abs, err := absolute(path)
	if err != nil {
		return "", unix.Stat_t{}, err
	}
	w := walker{tailMissing: tailMissing}
	st, err := w.from("/", strings.Split(strings.TrimPrefix(abs, "/"), "/"))
	if w.rest != nil {
		return filepath.Join(append([]string{w.cur}, w.rest...)...), st, err
	}
	return w.cur, st, err
}

// absolute is path from the root, the working directory (as the kernel
// names it) put before a relative one, and nothing cleaned away.
func absolute(path string) (string, error) {
	if path == "" {
		return "", &os.PathError{Op: "resolve", Path: path, Err: unix.ENOENT}
	}
	if filepath.IsAbs(path) {
		return path, nil
	}
	wd, err := unix.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return wd + "/" + path, nil
}

// walker follows a path; cur is where it has got to, resolved.
type walker struct {
	cur   string
	links int
	// tailMissing lets the path's last plain names not exist; rest is
	// then those names.
	tailMissing bool
	rest        []string
}

// from walks names below the directory dir (resolved, checked).
func (w *walker) from(dir string, names []string) (unix.Stat_t, error) {
	w.cur = dir
	st, err := w.stat(dir, len(names) == 0)
	if err != nil {
		return st, err
	}
	for i, name := range names {
		switch name {
		case "", ".":
			continue
		case "..":
			w.cur = filepath.Dir(w.cur)
			if st, err = w.stat(w.cur, false); err != nil {
				return st, err
			}
			continue
		}
		followed := false
		if st, followed, err = w.step(st, name, names[i+1:]); err != nil || followed {
			return st, err
		}
	}
	return st, nil
}

// step takes name from the current directory, whose status is parent, and
// checks it. A link is followed to the end of the path (rest are the names
// after it): followed then says the walk is done.
func (w *walker) step(parent unix.Stat_t, name string, rest []string) (st unix.Stat_t, followed bool, err error) {
	if parent.Mode&unix.S_IFMT != unix.S_IFDIR {
		return parent, false, &UntrustedError{Path: w.cur, Why: "is not a directory"}
	}
	next := filepath.Join(w.cur, name)
	if err := unix.Lstat(next, &st); err != nil {
		if errors.Is(err, unix.ENOENT) && w.tailMissing && plainNames(rest) {
			w.rest = append([]string{name}, rest...)
			parent.Nlink = missingMark
			return parent, true, nil
		}
		return st, false, &os.PathError{Op: "lstat", Path: next, Err: err}
	}
	if parent.Mode&0o022 != 0 && !trustedOwner(st.Uid) {
		return st, false, &UntrustedError{Path: next, Why: "belongs to " + ownerText(st.Uid) + " in " + w.cur + ", which everyone can write: another user could replace it"}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		w.cur = next
		st, err = w.stat(next, len(rest) == 0)
		return st, false, err
	case unix.S_IFLNK:
	default:
		w.cur = next
		return st, false, nil
	}
	if w.links++; w.links > maxLinks {
		return st, true, &os.PathError{Op: "resolve", Path: next, Err: unix.ELOOP}
	}
	target, err := os.Readlink(next)
	if err != nil {
		return st, true, err
	}
	start := w.cur
	if filepath.IsAbs(target) {
		start = "/"
	}
	st, err = w.from(start, append(strings.Split(target, "/"), rest...))
	return st, true, err
}

// plainNames reports whether names has no "..": names below a directory
// that does not exist yet, which the kernel would never resolve.
func plainNames(names []string) bool {
	for _, n := range names {
		if n == ".." {
			return false
		}
	}
	return true
}

// stat checks the directory dir (already reached by a checked way): owned
// by root or this user, and writable by no group or other user unless it
// is sticky and not the last of the path (last: the caller judges it).
func (w *walker) stat(dir string, last bool) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return st, &os.PathError{Op: "lstat", Path: dir, Err: err}
	}
	if !trustedOwner(st.Uid) {
		return st, &UntrustedError{Path: dir, Why: "belongs to " + ownerText(st.Uid) + ": as root, quicbench relies on no directory another user owns"}
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 && !last {
		return st, &UntrustedError{Path: dir, Why: "can be written by other users and has no sticky bit (mode " + modeText(st) + "): another user could replace what is in it"}
	}
	return st, nil
}

// IsUntrusted reports whether err is (or wraps) an UntrustedError.
func IsUntrusted(err error) bool {
	var u *UntrustedError
	return errors.As(err, &u)
}
