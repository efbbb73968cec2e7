package a2a

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type sseFrame struct {
	data  string
	isErr bool
}

func readFrames(t *testing.T, r io.Reader, max int) ([]sseFrame, error) {
	t.Helper()
	s := newSSEReader(r, max)
	var out []sseFrame
	for {
		d, isErr, err := s.next()
		if err != nil {
			return out, err
		}
		out = append(out, sseFrame{string(d), isErr})
	}
}

func TestSSEReaderFraming(t *testing.T) {
	input := ": ping\r\n\r\n" + // comment only: no frame
		"data: a\r\n\r\n" + // CRLF
		"data: j1\r\ndata: j2\r\n\r\n" + // CRLF inside a frame
		"data: b\n\n" + // LF
		"data: c\r\r" + // CR only
		"data:  lead\ndata:x\ndata\n\n" + // one space stripped, no space, empty data line
		"event: error\ndata: e\n\n" +
		"event: error\n\n" + // event without data is dropped
		"id: 7\nretry: 10\nfoo: bar\ndata: f\n\n" +
		"data: tail" // unterminated at EOF
	want := []sseFrame{{"a", false}, {"j1\nj2", false}, {"b", false}, {"c", false}, {" lead\nx\n", false}, {"e", true}, {"f", false}, {"tail", false}}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(input),
		"one byte": iotest.OneByteReader(strings.NewReader(input)),
		"half":     iotest.HalfReader(strings.NewReader(input)),
	} {
		got, err := readFrames(t, r, 1<<10)
		if err != io.EOF {
			t.Errorf("%s: err = %v, want io.EOF", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: frames = %+v, want %+v", name, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d = %+v, want %+v", name, i, got[i], want[i])
			}
		}
	}
}

func TestSSEReaderLineOverLimit(t *testing.T) {
	input := "data: " + strings.Repeat("x", 100) + "\n\n"
	got, err := readFrames(t, iotest.HalfReader(strings.NewReader(input)), 64)
	if !errors.Is(err, ErrFrameTooLarge) || len(got) != 0 {
		t.Fatalf("frames %+v, err %v; want ErrFrameTooLarge", got, err)
	}
}

func TestSSEReaderJoinedDataOverLimit(t *testing.T) {
	line := "data: " + strings.Repeat("x", 40) + "\n"
	_, err := readFrames(t, strings.NewReader(line+line+"\n"), 64)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
}

func TestSSEReaderFrameAtLimit(t *testing.T) {
	payload := strings.Repeat("y", 64)
	got, err := readFrames(t, iotest.OneByteReader(strings.NewReader("data:"+payload+"\r\n\r\n")), 64)
	if err != io.EOF || len(got) != 1 || got[0].data != payload {
		t.Fatalf("frames %d, err %v", len(got), err)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: partial"), iotest.ErrReader(boom))
	got, err := readFrames(t, r, 1<<10)
	if !errors.Is(err, boom) || len(got) != 1 || got[0].data != "a" {
		t.Fatalf("frames %+v, err %v; want one frame then the read error", got, err)
	}
}

// lineReader hands out one line (up to and including its LF) per Read, so
// a frame's blank line always arrives in a later Read than its data line.
type lineReader struct{ s string }

func (r *lineReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := strings.IndexByte(r.s, '\n') + 1
	if n == 0 || n > len(p) {
		n = min(len(r.s), len(p))
	}
	n = copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

// A frame's single data line is handed out from the read buffer; when the
// buffer is compacted or grown before the frame ends, the frame must
// still arrive intact. A 64-byte limit makes the buffer 81 bytes, so
// almost every frame straddles a compaction.
func TestSSEReaderFramesAcrossBufferMoves(t *testing.T) {
	var input strings.Builder
	var want []sseFrame
	for i := 0; i < 60; i++ {
		payload := strings.Repeat(string(rune('a'+i%26)), 1+i%64)
		want = append(want, sseFrame{payload, false})
		input.WriteString("data: " + payload + "\n")
		if i%7 == 3 {
			input.WriteString(": ping\n")
		}
		input.WriteString("\n")
	}
	for name, r := range map[string]func() io.Reader{
		"lines":    func() io.Reader { return &lineReader{input.String()} },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(input.String())) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(input.String())) },
		"whole":    func() io.Reader { return strings.NewReader(input.String()) },
	} {
		got, err := readFrames(t, r(), 64)
		if err != io.EOF || len(got) != len(want) {
			t.Fatalf("%s: %d frames, err %v; want %d frames then io.EOF", name, len(got), err, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d = %q, want %q", name, i, got[i].data, want[i].data)
			}
		}
	}
}

func TestSSEReaderBuffered(t *testing.T) {
	for _, c := range []struct {
		name, input string
		want        bool // after the first frame
	}{
		{"CRLF frame", "data: a\r\n\r\ndata: b\r\n\r\n", true},
		{"LF frame", "data: a\n\ndata: b\n\n", true},
		{"two data lines", "data: a\r\n\r\nevent: error\r\ndata: b\r\ndata: c\r\n\r\n", true},
		{"empty data field", "data: a\n\ndata\n\n", true},
		{"partial frame", "data: a\r\n\r\ndata: b\r\n", false},
		{"partial line", "data: a\r\n\r\ndata: b", false},
		{"ping only", "data: a\r\n\r\n: ping\r\n\r\n", false},
		{"ping then partial", "data: a\r\n\r\n: ping\r\n\r\ndata: b\r\n", false},
		{"ping then frame", "data: a\r\n\r\n: ping\r\n\r\ndata: b\r\n\r\n", true},
		{"event without data", "data: a\n\nevent: error\n\n", false},
		{"field named dataX", "data: a\n\ndatax: b\n\n", false},
		{"nothing", "data: a\r\n\r\n", false},
	} {
		s := newSSEReader(strings.NewReader(c.input), 1<<10)
		if d, _, err := s.next(); err != nil || string(d) != "a" {
			t.Fatalf("%s: first frame %q, %v", c.name, d, err)
		}
		if got := s.buffered(); got != c.want {
			t.Errorf("%s: buffered() = %v, want %v", c.name, got, c.want)
		}
	}
	// A CR at the end of a read leaves its LF to the next one, which must
	// not read as a blank line.
	for _, c := range []struct {
		second string
		want   bool
	}{{"\ndata: b\r\n\r\n", true}, {"\ndata: b\r\n", false}, {"\n\r\n", false}} {
		s := newSSEReader(io.MultiReader(strings.NewReader("data: a\r\n\r"), strings.NewReader(c.second)), 1<<10)
		if d, _, err := s.next(); err != nil || string(d) != "a" {
			t.Fatalf("first frame %q, %v", d, err)
		}
		if !s.skipLF {
			t.Fatal("test bug: the reader is not waiting for an LF")
		}
		s.fill()
		if got := s.buffered(); got != c.want {
			t.Errorf("after a split CRLF and %q: buffered() = %v, want %v", c.second, got, c.want)
		}
	}
}
