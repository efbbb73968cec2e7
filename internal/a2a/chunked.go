package a2a

import "errors"

// chunkDecoder removes HTTP/1.1 chunked framing in place, so a lean
// connection's body is decoded inside the SSE reader's own buffer and a
// waiting stream holds no buffer of its connection (lean.go). It accepts
// what net/http's chunked reader accepts (FuzzChunkDecoder compares them):
// CRLF line ends only, a size of 1 to 16 hex digits, trailing spaces or
// tabs, an ignored extension after ';', lines under 4 KiB, bounded
// overhead per data byte. After the last chunk it also reads the trailer
// section, so that the connection can carry the next request.
type chunkDecoder struct {
	st     uint8
	line   int    // bytes of the current line before its LF
	digits int    // hex digits of the chunk size
	size   uint64 // the chunk size, then the data bytes left in the chunk
	excess int64  // framing overhead beyond what the data justifies
	extra  bool   // bytes followed the end of the body
}

const (
	chSize        = iota // chunk-size digits
	chSizeOWS            // spaces or tabs after the size
	chExt                // chunk extension, ignored
	chLF                 // CR seen, LF expected
	chData               // chunk data
	chDataCR             // CRLF after the data
	chDataLF             //
	chTrailer            // start of a trailer line or the final CRLF
	chTrailerLine        // a trailer field, ignored
	chEndLF              // LF of the final CRLF
	chDone               // the body ended
)

const (
	maxChunkLine    = 4096 // net/http's limit, CR included
	maxChunkExcess  = 16 << 10
	maxTrailerBytes = 16 << 10
)

var errChunked = errors.New("a2a: malformed chunked encoding")

// done reports whether the last chunk and the trailers were read.
func (d *chunkDecoder) done() bool { return d.st == chDone }

// decode decodes p in place and returns how many data bytes now start p.
// Bytes after the end of the body are dropped and recorded in d.extra.
func (d *chunkDecoder) decode(p []byte) (int, error) {
	w := 0
	for r := 0; r < len(p); {
		switch d.st {
		case chData:
			k := int(min(uint64(len(p)-r), d.size))
			w += copy(p[w:], p[r:r+k])
			r += k
			d.size -= uint64(k)
			if d.size == 0 {
				d.st = chDataCR
			}
			continue
		case chDone:
			d.extra = true
			return w, nil
		}
		if err := d.step(p[r]); err != nil {
			return w, err
		}
		r++
	}
	return w, nil
}

// step consumes one framing byte.
func (d *chunkDecoder) step(c byte) error {
	if d.st < chLF || d.st == chTrailerLine || d.st == chTrailer {
		d.line++
		if d.st < chLF && d.line >= maxChunkLine || d.line >= maxTrailerBytes {
			return errChunked
		}
	}
	switch d.st {
	case chSize:
		switch {
		case d.digits > 0 && c == '\r':
			d.st = chLF
		case d.digits > 0 && c == ';':
			d.st = chExt
		case d.digits > 0 && (c == ' ' || c == '\t'):
			d.st = chSizeOWS
		default:
			v, ok := unhex(c)
			if !ok || d.digits == 16 {
				return errChunked
			}
			d.size = d.size<<4 | uint64(v)
			d.digits++
		}
	case chSizeOWS:
		switch c {
		case ' ', '\t':
		case '\r':
			d.st = chLF
		default:
			return errChunked
		}
	case chExt:
		switch c {
		case '\r':
			d.st = chLF
		case '\n':
			return errChunked
		}
	case chLF:
		if c != '\n' {
			return errChunked
		}
		return d.sizeLine()
	case chDataCR:
		if c != '\r' {
			return errChunked
		}
		d.st = chDataLF
	case chDataLF:
		if c != '\n' {
			return errChunked
		}
		d.st, d.line, d.digits, d.size = chSize, 0, 0, 0
	case chTrailer:
		switch c {
		case '\r':
			d.st = chEndLF
		case '\n':
			d.st = chDone
		default:
			d.st = chTrailerLine
		}
	case chTrailerLine:
		if c == '\n' {
			d.st = chTrailer
		}
	case chEndLF:
		if c != '\n' {
			return errChunked
		}
		d.st = chDone
	}
	return nil
}

// sizeLine ends a chunk-size line. The overhead rule is net/http's: 16
// bytes per chunk plus twice its data are free, more than 16 KiB beyond
// that is an error.
func (d *chunkDecoder) sizeLine() error {
	d.excess += int64(d.line-1) + 2
	d.excess -= 16 + 2*int64(d.size)
	d.excess = max(d.excess, 0)
	if d.size == 0 {
		d.st, d.line = chTrailer, 0
		return nil
	}
	if d.excess > maxChunkExcess {
		return errChunked
	}
	d.st = chData
	return nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
