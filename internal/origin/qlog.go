package origin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"
)

// SetQlogDir makes the QUIC server write a qlog of every connection that
// starts from now on into dir, as <connection ID>_server.sqlog (qvis reads
// them); "" stops it. A trace is complete once its connection closes.
func (srv *Server) SetQlogDir(dir string) { srv.qlogDir.Store(&dir) }

// tracer is quic-go's per-connection tracer hook.
func (srv *Server) tracer(_ context.Context, isClient bool, connID quic.ConnectionID) qlogwriter.Trace {
	dir := srv.qlogDir.Load()
	if dir == nil || *dir == "" {
		return nil
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		srv.log.Error("origin: qlog directory", "err", err)
		return nil
	}
	path := filepath.Join(*dir, fmt.Sprintf("%s_server.sqlog", connID))
	f, err := os.Create(path)
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

func (b *bufferedFile) Close() error {
	err := b.Flush()
	if cerr := b.file.Close(); err == nil {
		err = cerr
	}
	return err
}
