package tun

import (
	"io"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/testenv"
)

func TestFakeRoundTrip(t *testing.T) {
	f := NewFake("f0", 4)
	f.Inject([]byte{1, 2, 3})
	buf := make([]byte, 10)
	n, err := f.Read(buf)
	if err != nil || n != 3 || buf[2] != 3 {
		t.Fatalf("Read = %d, %v, %v", n, err, buf[:n])
	}
	if _, err := f.Write([]byte{9}); err != nil {
		t.Fatal(err)
	}
	if got := <-f.Written; len(got) != 1 || got[0] != 9 {
		t.Errorf("Written %v", got)
	}
	f.Close()
	if _, err := f.Read(buf); err != io.EOF {
		t.Errorf("Read after Close: %v, want EOF", err)
	}
}

// TestCreateAndCloseInPrivateNamespace creates a real TUN device in a fresh
// network namespace of a throwaway thread, and checks that Close unblocks a
// pending Read.
func TestCreateAndCloseInPrivateNamespace(t *testing.T) {
	testenv.RequireRoot(t)
	devs := make(chan Device, 1)
	errs := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errs <- err
			return
		}
		d, err := Create("qbtest0")
		if err != nil {
			errs <- err
			return
		}
		devs <- d
	}()
	var d Device
	select {
	case err := <-errs:
		t.Fatal(err)
	case d = <-devs:
	}
	if d.Name() != "qbtest0" {
		t.Errorf("name %q", d.Name())
	}
	readDone := make(chan error, 1)
	go func() {
		_, err := d.Read(make([]byte, MTU))
		readDone <- err
	}()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-readDone; err == nil {
		t.Error("Read after Close returned no error")
	}
}
