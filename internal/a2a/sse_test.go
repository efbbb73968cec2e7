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
