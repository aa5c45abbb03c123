package pcap

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

func TestWriteThenRead(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Unix(1_700_000_000, 123_456_789)
	w.WritePacket(t1, []byte{0x45, 1, 2, 3})
	w.WritePacket(t1.Add(time.Millisecond), []byte{0x45, 9})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// The global header as the format defines it: magic, version 2.4,
	// snap length, link type 101 (raw IP).
	h := buf.Bytes()[:24]
	if binary.LittleEndian.Uint32(h) != 0xa1b23c4d || binary.LittleEndian.Uint16(h[4:]) != 2 ||
		binary.LittleEndian.Uint16(h[6:]) != 4 || binary.LittleEndian.Uint32(h[20:]) != 101 {
		t.Errorf("header % x", h)
	}
	if len(buf.Bytes()) != 24+16+4+16+2 {
		t.Errorf("%d bytes, want 24 + two records of 16 + 4 and 16 + 2", len(buf.Bytes()))
	}
	pkts, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkts) != 2 || !pkts[0].Time.Equal(t1) || !bytes.Equal(pkts[1].Data, []byte{0x45, 9}) ||
		pkts[1].Time.Sub(pkts[0].Time) != time.Millisecond {
		t.Errorf("read back %+v", pkts)
	}
}

func TestReadRejectsOtherFiles(t *testing.T) {
	if _, err := Read(bytes.NewReader(make([]byte, 24))); err == nil {
		t.Error("read a zero header")
	}
}
