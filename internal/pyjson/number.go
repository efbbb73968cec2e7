package pyjson

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// AppendNumber appends a JSON number literal as Python writes it after
// json.loads: integers keep their digits (Python ints are unbounded; -0
// becomes 0), floats use repr, and an overflowing float is Infinity.
func AppendNumber(dst []byte, lit string) ([]byte, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return append(dst, '0'), nil
		}
		return append(dst, lit...), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return dst, err
	}
	return AppendFloat(dst, f), nil
}

// AppendFloat appends f like Python's repr(float) inside json.dumps: the
// shortest round-trip digits, positional when the decimal exponent is in
// [-4, 16), else scientific with a signed exponent of at least two digits;
// NaN and infinities as Python writes them.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(string(e), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	switch {
	case decpt > 16 || decpt < -3:
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	case decpt <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -decpt)...)
		return append(dst, digits...)
	case decpt >= len(digits):
		dst = append(dst, digits...)
		dst = append(dst, strings.Repeat("0", decpt-len(digits))...)
		return append(dst, ".0"...)
	default:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		return append(dst, digits[decpt:]...)
	}
}
