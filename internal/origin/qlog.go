package origin

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"
	"github.com/quicbench/quicbench/internal/safefs"
)

// SetQlogDir makes the QUIC server write a qlog of every connection that
// starts from now on into dir, as <connection ID>_server.sqlog (qvis reads
// them); "" stops it. A trace is complete once its connection closes.
func (srv *Server) SetQlogDir(dir string) { srv.qlogDir.Store(&dir) }

// tracer is quic-go's per-connection tracer hook: every connection's
// lost and resent data is followed for its record (lossTrace), and
// written to a qlog file while SetQlogDir has a directory.
func (srv *Server) tracer(_ context.Context, isClient bool, connID quic.ConnectionID) qlogwriter.Trace {
	file := srv.qlogFile(isClient, connID)
	if srv.untraced.Load() {
		return file
	}
	return &lossTrace{file: file, tracker: srv.conns}
}

// qlogFile starts the qlog file of connection connID in the qlog
// directory; nil when there is none.
func (srv *Server) qlogFile(isClient bool, connID quic.ConnectionID) qlogwriter.Trace {
	dir := srv.qlogDir.Load()
	if dir == nil || *dir == "" {
		return nil
	}
	f, err := safefs.Create(*dir, fmt.Sprintf("%s_server.sqlog", connID), 0o644)
	if err != nil {
		srv.log.Error("origin: qlog file", "err", err)
		return nil
	}
	seq := qlogwriter.NewConnectionFileSeq(&bufferedFile{bufio.NewWriter(f), f}, isClient, connID)
	go seq.Run()
	return seq
}

// bufferedFile flushes its buffer before closing the file.
type bufferedFile struct {
	*bufio.Writer
	file io.Closer
}

// Close flushes the buffer and closes the file, returning the first
// error.
func (b *bufferedFile) Close() error {
	err := b.Flush()
	if cerr := b.file.Close(); err == nil {
		err = cerr
	}
	return err
}
