package firefox

import (
	"bytes"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestTemplateHoldsNoNetworkState: none of what a browser keeps of the
// network (cache, cookies, HSTS, Alt-Svc, certificate overrides, sessions,
// site storage) or of its preferences goes from the template into a
// profile.
func TestTemplateHoldsNoNetworkState(t *testing.T) {
	for _, name := range []string{"cache2", "cookies.sqlite", "SiteSecurityServiceState.bin", "SiteSecurityServiceState.txt",
		"AlternateServices.bin", "AlternateServices.txt", "cert_override.txt", "sessionstore.jsonlz4", "storage", "prefs.js", "user.js", "hosts"} {
		if slices.Contains(templateEntries(), name) {
			t.Errorf("a profile takes %s from the template", name)
		}
	}
}

// TestCopyEntriesFollowsNoLink copies files and directories of files,
// skips what is missing, and refuses a link at the top or inside a
// directory, or one where a file is to go.
func TestCopyEntriesFollowsNoLink(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.db"), []byte("a"), 0o600)
	os.Mkdir(filepath.Join(src, "cache"), 0o700)
	os.WriteFile(filepath.Join(src, "cache", "x.bin"), []byte("x"), 0o600)
	if err := copyEntries(src, dst, []string{"a.db", "cache", "missing"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "cache", "x.bin")); err != nil || string(b) != "x" {
		t.Errorf("cache/x.bin: %q, %v", b, err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s"), 0o600)
	os.Symlink(secret, filepath.Join(src, "link.db"))
	if err := copyEntries(src, t.TempDir(), []string{"link.db"}); err == nil {
		t.Error("a link was copied")
	}
	os.Symlink(secret, filepath.Join(src, "cache", "y.bin"))
	if err := copyEntries(src, t.TempDir(), []string{"cache"}); err == nil {
		t.Error("a link inside a directory was copied")
	}
	os.Symlink(secret, filepath.Join(dst, "b.db"))
	os.WriteFile(filepath.Join(src, "b.db"), []byte("b"), 0o600)
	if err := copyEntries(src, dst, []string{"b.db"}); err == nil {
		t.Error("a link in the destination was replaced")
	}
	if b, _ := os.ReadFile(secret); string(b) != "s" {
		t.Error("copying onto a link wrote through it")
	}
}

// TestTemplateKeyNamesTheBuildAndPreferences: the kept template's key
// stays for the same binary and preferences and changes with the
// preferences, with the binary's or its omni.ja's contents, and with an
// omni.ja that appears; a binary that is not there is an error.
func TestTemplateKeyNamesTheBuildAndPreferences(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "firefox-esr")
	if err := os.WriteFile(bin, []byte("build 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := func(prefs string) string {
		t.Helper()
		k, err := templateKeyOf(bin, []byte(prefs))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := key("a")
	if again := key("a"); again != first {
		t.Errorf("the same build and preferences: key %s, then %s", first, again)
	}
	seen := map[string]string{first: "the first build"}
	differ := func(what, k string) {
		t.Helper()
		if was, ok := seen[k]; ok {
			t.Errorf("%s: key %s, the same as %s's", what, k, was)
		}
		seen[k] = what
	}
	differ("other preferences", key("b"))
	if err := os.WriteFile(filepath.Join(dir, "omni.ja"), []byte("ja 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	differ("an omni.ja beside the binary", key("a"))
	if err := os.WriteFile(filepath.Join(dir, "omni.ja"), []byte("ja 2, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	differ("another omni.ja", key("a"))
	if err := os.WriteFile(bin, []byte("build 2, longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	differ("another binary", key("a"))
	if _, err := templateKeyOf(filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("a missing binary gave a key")
	}
}

// TestTheTemplateIsKeptAcrossRuns: the template without a CA is made once
// for a Firefox build and kept in the user's cache; each run's template
// is a copy of it that trusts that run's CA alone, and the kept one
// trusts none.
func TestTheTemplateIsKeptAcrossRuns(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, DefaultPath, "apt-get install firefox-esr libnss3-tools")
	testenv.RequireCommand(t, "certutil")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	var kept os.FileInfo
	for run := range 2 {
		ca := filepath.Join(t.TempDir(), "ca.pem")
		pemText := testCAPEM(t)
		if err := os.WriteFile(ca, pemText, 0o644); err != nil {
			t.Fatal(err)
		}
		f := &Firefox{ProfileDir: t.TempDir()}
		dir, err := f.templateFor(t.Context(), client.Request{CAFile: ca})
		if err != nil {
			t.Fatal(err)
		}
		if got := trustedCA(t, dir); !bytes.Equal(got, pemBlock(t, pemText)) {
			t.Errorf("run %d's template trusts %q, want its own CA", run, got)
		}
		entries, err := os.ReadDir(filepath.Join(cache, templatesCacheDir))
		if err != nil || len(entries) != 1 {
			t.Fatalf("run %d: the cache holds %v (%v), want one template", run, entries, err)
		}
		info, err := entries[0].Info()
		if err != nil {
			t.Fatal(err)
		}
		if kept != nil && !os.SameFile(kept, info) {
			t.Errorf("run %d made the kept template again", run)
		}
		kept = info
		if got := trustedCA(t, filepath.Join(cache, templatesCacheDir, info.Name())); got != nil {
			t.Errorf("the kept template trusts a CA: %q", got)
		}
		f.Close()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("run %d's template is left after Close: %v", run, err)
		}
	}
}

// trustedCA is the DER of the run's CA the NSS database in dir trusts,
// nil if none.
func trustedCA(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := exec.Command("certutil", "-L", "-d", "sql:"+dir, "-n", "quicbench run CA", "-r").Output()
	if err != nil {
		return nil
	}
	return out
}

// pemBlock is the DER in PEM text pem.
func pemBlock(t *testing.T, text []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(text)
	if b == nil {
		t.Fatal("no PEM block")
	}
	return b.Bytes
}
