package a2a

import (
	"bytes"
	"errors"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
)

// decodeChunked runs the decoder over in, cut into pieces of step bytes
// (0: whole), and returns the data, whether the body ended and the error.
func decodeChunked(in []byte, step int) ([]byte, bool, error) {
	out, d, err := decodeChunkedState(in, step)
	return out, d.done(), err
}

func decodeChunkedState(in []byte, step int) ([]byte, chunkDecoder, error) {
	var d chunkDecoder
	var out []byte
	if step <= 0 {
		step = len(in) + 1
	}
	for len(in) > 0 && !d.done() {
		piece := append([]byte(nil), in[:min(step, len(in))]...)
		in = in[len(piece):]
		n, err := d.decode(piece)
		out = append(out, piece[:n]...)
		if err != nil {
			return out, d, err
		}
	}
	return out, d, nil
}

func TestChunkDecoder(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		done           bool
		err            bool
	}{
		{"two chunks", "5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\n\r\n", "hello!", true, false},
		{"trailers", "3\r\nabc\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n", "abc", true, false},
		{"upper hex, OWS", "A \t\r\n0123456789\r\n0\r\n\r\n", "0123456789", true, false},
		{"unfinished", "5\r\nhel", "hel", false, false},
		{"bare LF", "5\nhello\r\n", "", false, true},
		{"no CRLF after data", "5\r\nhelloX\r\n", "hello", false, true},
		{"space before size", " 5\r\nhello\r\n", "", false, true},
		{"space before ext", "5 ;x\r\nhello\r\n", "", false, true},
		{"empty size", "\r\nhello\r\n", "", false, true},
		{"17 digits", "00000000000000005\r\nhello\r\n", "", false, true},
		{"CR in extension", "5;a\rb\r\nhello\r\n", "", false, true},
		{"bad final CRLF", "0\r\n\rx", "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{0, 1, 2, 7} {
				got, done, err := decodeChunked([]byte(tc.in), step)
				if string(got) != tc.want || done != tc.done || (err != nil) != tc.err {
					t.Fatalf("step %d: got %q, done %v, err %v; want %q, %v, error %v", step, got, done, err, tc.want, tc.done, tc.err)
				}
			}
		})
	}
}

func TestChunkDecoderLimits(t *testing.T) {
	// A size line of 4,094 bytes plus CRLF is net/http's longest.
	ok := "1;" + strings.Repeat("e", 4092) + "\r\nx\r\n0\r\n\r\n"
	if got, done, err := decodeChunked([]byte(ok), 0); string(got) != "x" || !done || err != nil {
		t.Fatalf("4094-byte line: %q %v %v", got, done, err)
	}
	long := "1;" + strings.Repeat("e", 4093) + "\r\nx\r\n0\r\n\r\n"
	if _, _, err := decodeChunked([]byte(long), 0); !errors.Is(err, errChunked) {
		t.Fatalf("4095-byte line: err %v", err)
	}
	// One-byte chunks with 20-byte extensions: too much overhead.
	var b strings.Builder
	for range 2000 {
		b.WriteString("1;" + strings.Repeat("a", 40) + "\r\nx\r\n")
	}
	got, _, err := decodeChunked([]byte(b.String()), 0)
	if !errors.Is(err, errChunked) || len(got) < 100 || len(got) > 2000 {
		t.Fatalf("overhead: %d bytes, err %v", len(got), err)
	}
	// Bytes after the end are dropped and recorded.
	var d chunkDecoder
	p := []byte("1\r\nx\r\n0\r\n\r\nHTTP/1.1")
	if n, err := d.decode(p); n != 1 || err != nil || !d.done() || !d.extra {
		t.Fatalf("extra bytes: n %d err %v done %v extra %v", n, err, d.done(), d.extra)
	}
}

// FuzzChunkDecoder compares the decoder with net/http's chunked reader,
// which stops at the last chunk's size line: the same data, and an error
// exactly when net/http's reader fails before the last chunk. The input is
// fed in pieces of a fuzzed size, as reads from a socket would bring it.
func FuzzChunkDecoder(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), uint8(0))
	f.Add([]byte("3;x=\"y\"\r\nabc\r\n10 \r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\n"), uint8(3))
	f.Add([]byte("1\r\na\r\n1\r\nb\r\nfffffffffffffffff\r\n"), uint8(1))
	f.Add([]byte("4\r\nab\r\n\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		want, werr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
		got, d, err := decodeChunkedState(in, int(step))
		if !bytes.Equal(got, want) {
			t.Fatalf("data %q, net/http %q", got, want)
		}
		// net/http's chunked reader ends at the last chunk's size line and
		// leaves the trailers to its caller; input that ends earlier is
		// its io.ErrUnexpectedEOF.
		pastLast := d.st >= chTrailer
		if (werr == nil) != pastLast || (werr != nil && err == nil && werr != io.ErrUnexpectedEOF) {
			t.Fatalf("error %v (state %d), net/http %v", err, d.st, werr)
		}
	})
}
