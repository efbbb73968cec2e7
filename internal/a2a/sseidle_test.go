package a2a

import (
	"io"
	"strings"
	"testing"
)

// pacedReader hands out one piece per Read, as a network that delivers
// frames one by one, and records the reader's state at each Read.
type pacedReader struct {
	pieces []string
	s      *sseReader
	seen   func(p []byte)
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if r.seen != nil {
		r.seen(p)
	}
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	if r.pieces[0] == "" {
		r.pieces = r.pieces[1:]
	}
	return n, nil
}

// TestSSEReaderReleasesBufferWhileWaiting: once a frame is consumed and
// the network has nothing more, the reader waits in its small read with
// no buffer held, and the frames still arrive whole, also those longer
// than the small read.
func TestSSEReaderReleasesBufferWhileWaiting(t *testing.T) {
	long := strings.Repeat("x", 3*idleRead)
	src := &pacedReader{pieces: []string{"data: one\n\n", "data: " + long + "\n\n", ": ping\n\n", "data: three\n\n"}}
	s := newSSEReader(src, DefaultMaxFrameBytes)
	src.s = s
	waits := 0
	src.seen = func(p []byte) {
		if s.end == 0 {
			waits++
			if s.buf != nil || len(p) > idleRead {
				t.Errorf("waiting read holds a %d-byte buffer and reads %d bytes", len(s.buf), len(p))
			}
		}
	}
	for _, want := range []string{"one", long, "three"} {
		got, _, err := s.next()
		if err != nil || string(got) != want {
			t.Fatalf("frame %.20q, %v; want %.20q", got, err, want)
		}
	}
	if _, _, err := s.next(); err != io.EOF {
		t.Fatalf("after the frames: %v, want io.EOF", err)
	}
	if waits < 4 {
		t.Errorf("%d waiting reads, want one before each piece", waits)
	}
}
