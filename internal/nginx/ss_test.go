package nginx

import "testing"

func TestParseSS(t *testing.T) {
	out := "0      0      198.19.0.10:443 198.18.0.1:50962\n" +
		"\t cubic wscale:10,10 rto:204 rtt:21.5/10.75 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:14 bytes_sent:90000 bytes_retrans:2896 bytes_acked:87105 bytes_received:517 segs_out:70 retrans:0/2 bbr:(bw:0bps,mrtt:0.024) lastsnd:4\n" +
		"0      0      198.19.0.11:443 198.18.0.1:50970\n" +
		"\t bbr wscale:7,7 rtt:3/1.5 mss:1448 cwnd:10\n"
	got := parseSS(out)
	want := []socket{
		{remote: "198.18.0.1:50962", congestion: "cubic", srttMs: 21.5, cwnd: 14, mss: 1448, bytesAcked: 87105, bytesReceived: 517, retransmits: 2},
		{remote: "198.18.0.1:50970", congestion: "bbr", srttMs: 3, cwnd: 10, mss: 1448},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("socket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func FuzzParseSS(f *testing.F) {
	f.Add("0 0 a:1 b:2\n\t cubic rtt:1/2 cwnd:3\n")
	f.Add("\t rtt:/ retrans:x\n")
	f.Fuzz(func(t *testing.T, out string) { parseSS(out) })
}
