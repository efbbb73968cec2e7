package a2a

import (
	"bytes"
	"io"
)

// An SSE reader starts with a small buffer, since a stream mostly waits
// (a stalled turn, a long tool call) and thousands may be open at once,
// and doubles it up to sseBurstBuffer while reads keep filling it, so a
// burst of deltas is read in large chunks. A buffer grown past that for
// one long frame is dropped once the frame is consumed.
const (
	sseInitialBuffer = 1 << 10
	sseBurstBuffer   = 64 << 10
)

// sseReader splits a text/event-stream into frames. It accepts CRLF, LF and
// CR line endings, ignores comment lines (": ping"), joins several data
// lines with "\n" and records whether the frame had "event: error". The
// only size limit is max, applied to one line and to one frame's data.
type sseReader struct {
	r       io.Reader
	buf     []byte
	start   int  // first unread byte
	end     int  // end of buffered bytes
	scanned int  // bytes after start already known to hold no line ending
	max     int  // frame data limit
	lineMax int  // max plus room for the "data: " field name
	skipLF  bool // the last line ended in CR at the buffer end
	rerr    error
	data    []byte // the current frame's joined data, reused
	full    bool   // the last read filled the buffer: more is waiting
}

func newSSEReader(r io.Reader, max int) *sseReader {
	lineMax := max + 16
	n := sseInitialBuffer
	if lineMax+1 < n {
		n = lineMax + 1
	}
	return &sseReader{r: r, buf: make([]byte, n), max: max, lineMax: lineMax}
}

// next returns the data of the next frame and whether its event type was
// "error". The slice is valid until the next call. At the end of input a
// pending frame is still delivered, then io.EOF.
func (s *sseReader) next() ([]byte, bool, error) {
	s.data = s.data[:0]
	hasData, isErr := false, false
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && hasData {
				return s.data, isErr, nil
			}
			return nil, false, err
		}
		if len(line) == 0 {
			if hasData {
				return s.data, isErr, nil
			}
			isErr = false // an event type without data is discarded
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > s.max {
				return nil, false, ErrFrameTooLarge
			}
			s.data = append(s.data, value...)
			hasData = true
		case "event":
			isErr = string(value) == "error"
		}
	}
}

// buffered reports whether a frame with data is complete in the buffer,
// so next will not read. It splits lines at LF only: a CR-only stream
// reads as not buffered, which costs the caller an early flush, never a
// wait. One pass; the older search for "\n\n" ran through the whole
// buffer on every call for CRLF streams, which is what iac-code sends
// (upstream.md §1.5).
func (s *sseReader) buffered() bool {
	// An LF left over from a CRLF split across reads (skipLF) reads as a
	// blank line before any data, which is ignored.
	b := s.buf[s.start:s.end]
	hasData := false
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		line := b[:i]
		if i > 0 && line[i-1] == '\r' {
			line = line[:i-1]
		}
		switch {
		case len(line) == 0:
			if hasData {
				return true
			}
		case len(line) >= 4 && string(line[:4]) == "data" && (len(line) == 4 || line[4] == ':'):
			hasData = true
		}
		b = b[i+1:]
	}
}

// started reports whether bytes of a next frame, not only line endings,
// are buffered: the upstream is in the middle of a frame.
func (s *sseReader) started() bool {
	for _, c := range s.buf[s.start:s.end] {
		if c != '\n' && c != '\r' {
			return true
		}
	}
	return false
}

// line returns the next line without its terminator; valid until the next
// call.
func (s *sseReader) line() ([]byte, error) {
	for {
		if s.skipLF && s.start < s.end {
			if s.buf[s.start] == '\n' {
				s.start++
			}
			s.skipLF = false
		}
		seg := s.buf[s.start+s.scanned : s.end]
		n := bytes.IndexByte(seg, '\n')
		region := seg
		if n >= 0 {
			region = seg[:n]
		}
		if c := bytes.IndexByte(region, '\r'); c >= 0 {
			line := s.buf[s.start : s.start+s.scanned+c]
			next := s.start + s.scanned + c + 1
			if next < s.end {
				if s.buf[next] == '\n' {
					next++
				}
			} else {
				s.skipLF = true
			}
			s.start, s.scanned = next, 0
			return line, nil
		}
		if n >= 0 {
			line := s.buf[s.start : s.start+s.scanned+n]
			s.start, s.scanned = s.start+s.scanned+n+1, 0
			return line, nil
		}
		s.scanned = s.end - s.start
		if s.scanned > s.lineMax {
			return nil, ErrFrameTooLarge
		}
		if s.rerr != nil {
			if s.start < s.end {
				line := s.buf[s.start:s.end]
				s.start, s.scanned = s.end, 0
				return line, nil
			}
			return nil, s.rerr
		}
		s.fill()
	}
}

// fill reads more bytes, compacting or growing the buffer first.
func (s *sseReader) fill() {
	if s.start == s.end {
		s.start, s.end = 0, 0
		if len(s.buf) > sseBurstBuffer {
			s.buf = make([]byte, sseBurstBuffer)
		}
	}
	if s.full && len(s.buf) < sseBurstBuffer && len(s.buf) <= s.lineMax {
		nb := make([]byte, min(2*len(s.buf), sseBurstBuffer, s.lineMax+1))
		s.end = copy(nb, s.buf[s.start:s.end])
		s.start = 0
		s.buf = nb
	}
	if s.end == len(s.buf) {
		if s.start > 0 {
			s.end = copy(s.buf, s.buf[s.start:s.end])
			s.start = 0
		} else {
			size := 2 * len(s.buf)
			if size > s.lineMax+1 {
				size = s.lineMax + 1
			}
			if size <= len(s.buf) {
				// Cannot happen: line() fails once a line exceeds lineMax.
				s.rerr = ErrFrameTooLarge
				return
			}
			nb := make([]byte, size)
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
	}
	s.read(s.buf[s.end:])
}

// read reads into p, the free end of the buffer.
func (s *sseReader) read(p []byte) {
	for i := 0; i < 100; i++ {
		n, err := s.r.Read(p)
		s.end += n
		s.full = len(p) > 0 && n == len(p)
		if err != nil {
			s.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.rerr = io.ErrNoProgress
}
