package stacks_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicbench/quicbench/internal/emulator"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/stacks"
	"github.com/quicbench/quicbench/internal/testbed"
	"github.com/quicbench/quicbench/internal/testenv"
)

func TestLookup(t *testing.T) {
	for _, name := range []string{"tcp", "tcp+", "tcp+bbr"} {
		if p, err := stacks.Lookup(name); err != nil || p.Name != name {
			t.Errorf("stacks.Lookup(%q) = %+v, %v", name, p, err)
		}
	}
	if _, err := stacks.Lookup("tcp++"); err == nil || !strings.Contains(err.Error(), "quicbench stacks") {
		t.Errorf("unknown stack: %v", err)
	}
	for _, level := range factor.Stacks().Values() { // every TCP stack level has its profile
		if p := stacks.Of(level); p.Name != string(level) {
			t.Errorf("stacks.Of(%q) = %+v", level, p)
		}
	}
}

// TestApplyReadsBackEveryProfile applies each TCP profile in a real servers
// namespace and checks what the kernel reports: the route's windows, the
// sysctls, and the congestion control and pacing of a real connection.
func TestApplyReadsBackEveryProfile(t *testing.T) {
	testenv.RequireRoot(t)
	for _, name := range []string{"tcp", "tcp+", "tcp+bbr"} {
		t.Run(name, func(t *testing.T) {
			p, _ := stacks.Lookup(name)
			n, err := testbed.StartNetwork(netns.RunName(os.Getpid(), fmt.Sprintf("st%d", time.Now().UnixNano()%1e6)),
				emulator.Config{Up: link.Config{Delay: time.Millisecond}, Down: link.Config{Delay: time.Millisecond}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			a, err := stacks.Apply(n.Topo.Servers, netns.ClientSubnet, p)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := stacks.Listen(n.Topo.Servers, n.Topo.ServerAddrs[0].String()+":5000", p, &a)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan error, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					c.Close()
				}
				accepted <- err
			}()
			c, err := n.Topo.Client.DialContext(t.Context(), "tcp4", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := <-accepted; err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", name, a)
			wantSSAI := map[bool]string{true: "1", false: "0"}[p.SlowStartAfterIdle]
			if a.Congestion != p.Congestion || a.InitCwnd != p.InitCwnd || a.InitRwnd != p.InitRwnd || a.SlowStartAfterIdle != wantSSAI {
				t.Errorf("applied %+v, want congestion %s, initcwnd %d, initrwnd %d, slow start after idle %s",
					a, p.Congestion, p.InitCwnd, p.InitRwnd, wantSSAI)
			}
			if p.TunedBuffers && !strings.HasSuffix(a.TCPWmem, "33554432") {
				t.Errorf("tcp_wmem %q, want a 32 MiB maximum", a.TCPWmem)
			}
			// A socket that sets nothing itself (nginx's) gets the route's
			// congestion control, not the namespace default (BBR).
			if got := plainSocketCongestion(t, n); got != p.Congestion {
				t.Errorf("a plain server socket uses %q, want the route's %q", got, p.Congestion)
			}
		})
	}
}

// plainSocketCongestion accepts one connection on a listener without
// options and returns the accepted socket's congestion control.
func plainSocketCongestion(t *testing.T, n *testbed.Network) string {
	t.Helper()
	ln, err := n.Topo.Servers.Listen("tcp4", n.Topo.ServerAddrs[0].String()+":5001")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		rc, _ := c.(*net.TCPConn).SyscallConn()
		var cc string
		rc.Control(func(fd uintptr) { cc, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION) })
		if err != nil {
			cc = err.Error()
		}
		got <- strings.TrimRight(cc, "\x00")
	}()
	c, err := n.Topo.Client.DialContext(t.Context(), "tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return <-got
}
