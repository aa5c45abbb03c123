package chromium

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quicbench/quicbench/internal/proc"
	"github.com/quicbench/quicbench/internal/site"
	"github.com/quicbench/quicbench/internal/testenv"
)

// TestRecordRunsAsAnotherUser: a recording with RunAs set runs Chromium
// as that user, with its sandbox on, and still records the page (what
// `record` does when root starts it; issue 44, low).
func TestRecordRunsAsAnotherUser(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireFile(t, DefaultChromiumPath, "apt-get install chromium")
	// An archive keeps https responses on port 443: a loopback address of
	// its own lets the test have that port.
	ln, err := net.Listen("tcp", "127.31.41.59:443")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!DOCTYPE html><title>r</title><p>recorded"))
	}))
	srv.Listener = ln
	srv.StartTLS()
	defer srv.Close()
	spki := sha256.Sum256(srv.Certificate().RawSubjectPublicKeyInfo)
	profiles := t.TempDir()
	os.Chmod(profiles, 0o755) // nobody passes through it to its profile
	os.Chmod(filepath.Dir(profiles), 0o755)
	c := &Chromium{ProfileDir: profiles, Timeout: 30 * time.Second, RunAs: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stop := watchUIDs(profiles)
	var a *site.Archive
	a, _, err = c.Record(context.Background(), RecordRequest{URL: "https://www.record.test/",
		Addrs:    map[string]netip.Addr{"www.record.test": netip.MustParseAddr("127.31.41.59")},
		SPKIHash: base64.StdEncoding.EncodeToString(spki[:]), Settle: 200 * time.Millisecond})
	seen := stop()
	if err != nil {
		t.Fatalf("record as nobody: %v", err)
	}
	if len(a.Exchanges) == 0 || !strings.Contains(string(a.Exchanges[0].Body), "recorded") {
		t.Errorf("the recording has %d exchanges, not the page", len(a.Exchanges))
	}
	if len(seen) == 0 {
		t.Fatal("no browser process was seen")
	}
	for pid, uid := range seen {
		if uid != 65534 {
			t.Errorf("browser process %d ran as uid %d, want 65534", pid, uid)
		}
	}
}

// watchUIDs notes, every 10 ms until stop, the uid of each process whose
// command line names a profile below dir.
func watchUIDs(dir string) func() map[int]uint32 {
	seen := map[int]uint32{}
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, pid := range proc.Using("--user-data-dir=" + filepath.Clean(dir)) {
				var st syscall.Stat_t
				if syscall.Stat("/proc/"+strconv.Itoa(pid), &st) == nil {
					mu.Lock()
					seen[pid] = st.Uid
					mu.Unlock()
				}
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() map[int]uint32 {
		close(done)
		wg.Wait()
		return seen
	}
}
