package safefs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// UserCacheBase is the user's cache directory (os.UserCacheDir) if it is
// a directory of this user's own: not a link, not another user's (as
// root, a HOME that points into a stranger's tree is not written to).
func UserCacheBase() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	if err := checkOwnDir(base, false); err != nil {
		return "", err
	}
	return base, nil
}

// OwnCacheDir makes (mode 0700) and returns the directory rel below the
// user's cache directory, refusing one that any level of which, from the
// cache directory down, is a link, is another user's or others can write:
// what quicbench keeps there between runs (made templates) is read back
// as its own.
func OwnCacheDir(rel string) (string, error) {
	base, err := UserCacheBase()
	if err != nil {
		return "", err
	}
	if err := MkdirAll(base, rel, 0o700); err != nil {
		return "", err
	}
	names, err := components(rel)
	if err != nil {
		return "", err
	}
	path := base
	for _, name := range append([]string{""}, names...) {
		path = filepath.Join(path, name)
		if err := checkOwnDir(path, true); err != nil {
			return "", err
		}
	}
	return path, nil
}

// checkOwnDir refuses path unless it is a directory (not a link) of this
// user's, and, if private, one nobody else can write.
func checkOwnDir(path string, private bool) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("cache directory %s is not a directory of this user's", path)
	}
	if private && info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("cache directory %s can be written by others (mode %v): chmod go-w it", path, info.Mode().Perm())
	}
	return nil
}
