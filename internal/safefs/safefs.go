// Package safefs writes files into the directories quicbench owns (run,
// export and report directories) without following symbolic links: below a
// base directory, every directory is opened with O_NOFOLLOW, and a file is
// always a new inode (an existing one is unlinked first, never truncated), so
// a link or a hard link planted in a run directory cannot redirect a write.
// Modes are set explicitly, whatever the umask. The base directory itself is
// the user's own path and is followed as usual.
package safefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/trust"
)

// LinkError says that a path below a base directory is a symbolic link.
type LinkError struct{ Path string }

// Error names the link and says that it is not followed.
func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link: quicbench never follows links inside its directories; remove it or choose another directory", e.Path)
}

// NotRegularError says that a path below a base directory exists and is not
// a regular file (a directory, FIFO, device or socket).
type NotRegularError struct{ Path string }

// Error names the path and says that it is not a regular file.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s exists and is not a regular file: remove it or choose another directory", e.Path)
}

// components splits rel (slash- or OS-separated, relative, without "..")
// into its names.
func components(rel string) ([]string, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("safefs: %q is not a path below its directory", rel)
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

// openDir opens base (created if missing, links followed) and then each of
// names below it, creating the missing ones with perm and refusing links.
// The caller closes the returned descriptor.
func openDir(base string, names []string, perm os.FileMode) (int, error) {
	if err := os.MkdirAll(base, perm); err != nil {
		return -1, err
	}
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: base, Err: err}
	}
	return descend(fd, base, names, func(dirfd int, name, path string) (int, error) {
		return openChildDir(dirfd, name, path, perm)
	})
}

// descend opens names one below the other, from the directory fd (which
// it closes) named base, with open; path names each in errors.
func descend(fd int, base string, names []string, open func(dirfd int, name, path string) (int, error)) (int, error) {
	path := base
	for _, name := range names {
		path = filepath.Join(path, name)
		next, err := open(fd, name, path)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// openChildDir opens (creating it if missing) the directory name in the
// directory dirfd without following a link; path names it in errors.
func openChildDir(dirfd int, name, path string, perm os.FileMode) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(dirfd, name, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if err != nil {
		return -1, explainOpen(dirfd, name, path, err)
	}
	return fd, nil
}

// explainOpen turns a failed open of name in dirfd into a LinkError or
// NotRegularError where that is why it failed.
func explainOpen(dirfd int, name, path string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return &LinkError{Path: path}
		case unix.S_IFDIR, unix.S_IFREG:
		default:
			return &NotRegularError{Path: path}
		}
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// MkdirAll creates base/rel and every directory between (mode perm),
// refusing a symbolic link at any level below base.
func MkdirAll(base, rel string, perm os.FileMode) error {
	names, err := components(rel)
	if err != nil {
		return err
	}
	fd, err := openDir(base, names, perm)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// Create creates base/rel for writing as a new file with mode perm: a
// regular file already there is unlinked first (its inode, maybe linked
// elsewhere, is never written), a link or anything else is refused, and the
// directories between are created as by MkdirAll with mode 0755.
func Create(base, rel string, perm os.FileMode) (*os.File, error) {
	dirfd, name, err := openParent(base, rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	return createIn(dirfd, name, filepath.Join(base, rel), perm)
}

// openParent opens the directory of base/rel as MkdirAll would make it
// (mode 0755) and returns it with rel's last name. The caller closes it.
func openParent(base, rel string) (dirfd int, name string, err error) {
	names, err := components(rel)
	if err != nil {
		return -1, "", err
	}
	dirfd, err = openDir(base, names[:len(names)-1], 0o755)
	return dirfd, names[len(names)-1], err
}

// createIn creates name in dirfd as a new file with mode perm.
func createIn(dirfd int, name, path string, perm os.FileMode) (*os.File, error) {
	exists, err := refuseLinkOrDir(dirfd, name, path)
	if err != nil {
		return nil, err
	}
	if exists {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil {
			return nil, &os.PathError{Op: "replace", Path: path, Err: err}
		}
	}
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, explainOpen(dirfd, name, path, err)
	}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// WriteFile writes data to base/rel as Create does.
func WriteFile(base, rel string, data []byte, perm os.FileMode) error {
	f, err := Create(base, rel, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteAtomic writes base/rel through write into a temporary file beside
// it and renames it into place only if write and the close succeed, so a
// reader never sees a partial file and a failure leaves none behind.
func WriteAtomic(base, rel string, perm os.FileMode, write func(io.Writer) error) error {
	dirfd, name, err := openParent(base, rel)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	path := filepath.Join(base, rel)
	if _, err := refuseLinkOrDir(dirfd, name, path); err != nil {
		return err
	}
	tmp := fmt.Sprintf(".%s.tmp-%d", name, os.Getpid())
	f, err := createIn(dirfd, tmp, filepath.Join(filepath.Dir(path), tmp), perm)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	return nil
}

// refuseLinkOrDir fails if name in dirfd exists and is not a regular
// file, and reports whether a regular file is there.
func refuseLinkOrDir(dirfd int, name, path string) (exists bool, err error) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, nil
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return true, nil
	case unix.S_IFLNK:
		return false, &LinkError{Path: path}
	}
	return false, &NotRegularError{Path: path}
}

// CheckNoLinks fails if base/rel or any directory between is a symbolic
// link or not what it should be (directories, then a regular file); a
// missing path is fine. It guards files that another library opens by
// name, such as SQLite's database and journals.
func CheckNoLinks(base, rel string) error {
	names, err := components(rel)
	if err != nil {
		return err
	}
	path := base
	for i, name := range names {
		path = filepath.Join(path, name)
		fi, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return &LinkError{Path: path}
		case i < len(names)-1 && !fi.IsDir(), i == len(names)-1 && !fi.Mode().IsRegular():
			return &NotRegularError{Path: path}
		}
	}
	return nil
}

// LockFile is the name of the lock file in a locked directory.
const LockFile = ".lock"

// HeldError says that another process holds a directory's lock.
type HeldError struct {
	Dir string
	// PID is the holder's process ID, 0 if it did not say.
	PID int
}

// Error names the directory and its holder (its process ID where the
// lock file gives it).
func (e *HeldError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("%s is in use by %s (a quicbench run holds its lock): wait for it to end, or choose another directory", e.Dir, who)
}

// Lock takes the exclusive lock of dir (a flock on dir/.lock, which holds
// the holder's PID) without waiting; unlock releases it. The kernel
// releases the lock of a process that dies, so a killed run never leaves
// its directory locked.
func Lock(dir string) (unlock func(), err error) {
	dirfd, err := openDir(dir, nil, 0o755)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	const flags = unix.O_RDWR | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, LockFile, flags, 0o644)
	if err != nil {
		return nil, explainOpen(dirfd, LockFile, filepath.Join(dir, LockFile), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, LockFile))
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			var pid int
			b := make([]byte, 20)
			n, _ := f.ReadAt(b, 0)
			fmt.Sscan(string(b[:n]), &pid)
			return nil, &HeldError{Dir: dir, PID: pid}
		}
		return nil, &os.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(fmt.Sprintf("%d\n", os.Getpid())), 0)
	}
	return func() { f.Close() }, nil
}

// OpenRegular opens a file the user named for reading, and refuses
// anything but a regular file: a FIFO, device or directory would block or
// never end. The descriptor is opened non-blocking, so naming a FIFO
// cannot hang the open either. As root it follows the ownership rule
// (trust.CheckUserPaths): a file another user owns or could swap, on the
// way to it too, is refused, so the path checked is the path opened.
func OpenRegular(path string) (*os.File, error) {
	if err := trust.CheckUserPaths(trust.UserPath{Kind: trust.InputFile, Value: path}); err != nil {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s): give a file", path, kindOf(fi.Mode()))
	}
	return f, nil
}

// ReadRegular reads a regular file the user named (see OpenRegular) of at
// most limit bytes.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// readLimited reads f, named path in errors, refusing more than limit
// bytes.
func readLimited(f io.Reader, path string, limit int64) ([]byte, error) {
	if file, ok := f.(*os.File); ok {
		if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > limit {
				return nil, &TooLargeError{Path: path, Limit: limit}
			}
			// One buffer of the file's size (and a byte to see growth),
			// not ReadAll's doublings.
			return readSized(file, path, fi.Size(), limit)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// TooLargeError is a file larger than a reader's limit.
type TooLargeError struct {
	Path  string
	Limit int64 // bytes
}

// Error names the file and the limit it passes.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// readSized reads f, whose size was size when it was opened, into one
// buffer of that size, refusing more than limit bytes should it have
// grown.
func readSized(f *os.File, path string, size, limit int64) ([]byte, error) {
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return buf[:n], nil
	}
	if err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit-size)) // it grew
	if err != nil {
		return nil, err
	}
	if data := append(buf, rest...); int64(len(data)) <= limit {
		return data, nil
	}
	return nil, &TooLargeError{Path: path, Limit: limit}
}

func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not regular"
}

// openBelow opens the existing directory base/names... for reading:
// base is followed, nothing below it is (a link is a LinkError), and
// nothing is created. The caller closes the descriptor.
func openBelow(base string, names []string) (int, error) {
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: base, Err: err}
	}
	return descend(fd, base, names, func(dirfd int, name, path string) (int, error) {
		next, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, explainOpen(dirfd, name, path, err)
		}
		return next, nil
	})
}

// ReadIn reads the regular file base/rel of at most limit bytes that
// quicbench wrote into one of its directories, following no link below
// base.
func ReadIn(base, rel string, limit int64) ([]byte, error) {
	f, err := OpenIn(base, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, f.Name(), limit)
}

// OpenIn opens the regular file base/rel for reading, following no link
// below base (a link is a LinkError, anything but a regular file a
// NotRegularError, a FIFO never blocks the open).
func OpenIn(base, rel string) (*os.File, error) {
	names, err := components(rel)
	if err != nil {
		return nil, err
	}
	dirfd, err := openBelow(base, names[:len(names)-1])
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	path := filepath.Join(base, rel)
	name := names[len(names)-1]
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, explainOpen(dirfd, name, path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path}
	}
	return f, nil
}

// CopyTree copies the directory from/rel and what is below it into
// to/rel (directories 0755, files 0644, each a new file), following no
// link on either side: a link, FIFO, device or socket below from/rel is
// not copied but counted in skipped. It stops between files when ctx is
// done. A missing from/rel copies nothing.
func CopyTree(ctx context.Context, from, to, rel string) (files, skipped int, err error) {
	names, err := ListIn(from, rel)
	if errors.Is(err, unix.ENOENT) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if err := MkdirAll(to, rel, 0o755); err != nil {
		return 0, 0, err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return files, skipped, err
		}
		n, s, err := copyEntry(ctx, from, to, filepath.Join(rel, name))
		files, skipped = files+n, skipped+s
		if err != nil {
			return files, skipped, err
		}
	}
	return files, skipped, nil
}

// copyEntry copies from/rel, a file or a directory, to to/rel.
func copyEntry(ctx context.Context, from, to, rel string) (files, skipped int, err error) {
	src, err := OpenIn(from, rel)
	var notRegular *NotRegularError
	var link *LinkError
	switch {
	case errors.As(err, &link):
		return 0, 1, nil
	case errors.As(err, &notRegular):
		if _, lerr := ListIn(from, rel); lerr != nil {
			return 0, 1, nil // not a directory either
		}
		return CopyTree(ctx, from, to, rel)
	case err != nil:
		return 0, 0, err
	}
	defer src.Close()
	dst, err := Create(to, rel, 0o644)
	if err != nil {
		return 0, 0, err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return 0, 0, fmt.Errorf("copy %s: %w", rel, err)
	}
	return 1, 0, dst.Close()
}

// ListIn lists the names in the directory base/rel, following no link
// below base.
func ListIn(base, rel string) ([]string, error) {
	names, err := components(rel)
	if err != nil {
		return nil, err
	}
	fd, err := openBelow(base, names)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(base, rel))
	defer f.Close()
	return f.Readdirnames(-1)
}

// RemoveIn removes the file or link base/name (one name, no directory:
// an entry that is a directory stays), following no link below base. A
// missing entry is no error.
func RemoveIn(base, name string) error {
	names, err := components(name)
	if err != nil || len(names) != 1 {
		return fmt.Errorf("safefs: %q is not a name in %s", name, base)
	}
	dirfd, err := openBelow(base, nil)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: filepath.Join(base, name), Err: err}
	}
	return nil
}

// PruneIn removes, from the directory base/rel, each file or link whose
// name remove chooses, through the directory's open descriptor: nothing
// below base is followed (a link there is a LinkError) and a name is never
// looked up again by path, so a directory swapped for a link between the
// listing and the removal cannot turn the removal onto another directory.
// Directories inside are left. A missing base/rel is no error.
func PruneIn(base, rel string, remove func(name string) bool) error {
	names, err := components(rel)
	if err != nil {
		return err
	}
	fd, err := openBelow(base, names)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(fd), filepath.Join(base, rel))
	defer dir.Close()
	entries, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range entries {
		if !remove(name) {
			continue
		}
		if err := unix.Unlinkat(fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EISDIR) {
			errs = append(errs, &os.PathError{Op: "remove", Path: filepath.Join(base, rel, name), Err: err})
		}
	}
	return errors.Join(errs...)
}
