package emulator

import (
	"testing"
	"testing/synctest"

	"github.com/quicbench/quicbench/internal/link"
	"github.com/quicbench/quicbench/internal/tun"
)

// udp4 makes an IPv4 UDP packet from src:srcPort to dst:dstPort, with id
// as a marker.
func udp4(src string, srcPort int, dst string, dstPort int, id byte) []byte {
	pkt := ipv4(src, dst, id)
	pkt[9] = 17
	pkt[20], pkt[21] = byte(srcPort>>8), byte(srcPort)
	pkt[22], pkt[23] = byte(dstPort>>8), byte(dstPort)
	return pkt
}

// TestUDPPolicyTakesQUICsPortAlone: with UDP blocked after 2 packets per
// flow, a QUIC flow's first two packets pass both ways and the rest are
// dropped and counted; UDP to another port (the netcheck's echo) and TCP
// pass.
func TestUDPPolicyTakesQUICsPortAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, servers := tun.NewFake("c", 64), tun.NewFake("s", 64)
		e, err := Start(client, servers, Config{UDP: link.UDPPolicy{Block: true, After: 2}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		client.Inject(udp4("198.18.0.1", 50000, "198.19.0.10", 443, 1))
		synctest.Wait()
		servers.Inject(udp4("198.19.0.10", 443, "198.18.0.1", 50000, 2))
		synctest.Wait()
		client.Inject(udp4("198.18.0.1", 50000, "198.19.0.10", 443, 3))
		client.Inject(udp4("198.18.0.1", 50000, "198.19.0.10", 7, 4))
		tcp := ipv4("198.18.0.1", "198.19.0.10", 5)
		tcp[9] = 6
		client.Inject(tcp)
		synctest.Wait()
		servers.Inject(udp4("198.19.0.10", 443, "198.18.0.1", 50000, 6))
		synctest.Wait()
		client.Close()
		servers.Close()
		e.Wait()
		var up, down []byte
		for len(servers.Written) > 0 {
			up = append(up, (<-servers.Written)[5])
		}
		for len(client.Written) > 0 {
			down = append(down, (<-client.Written)[5])
		}
		if string(up) != "\x01\x04\x05" || string(down) != "\x02" {
			t.Errorf("passed up %v, down %v; want [1 4 5] and [2]", up, down)
		}
		u, d := e.Stats()
		if u.DroppedUDP != 1 || d.DroppedUDP != 1 {
			t.Errorf("dropped %d up, %d down; want 1 each", u.DroppedUDP, d.DroppedUDP)
		}
	})
}
