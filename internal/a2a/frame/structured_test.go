package frame

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// frameGen writes a frame from fuzz bytes read as choices: which members an
// object has, in which order, how often (repeats included), null or the
// wrong JSON type for a member, wrapper combinations in result, key
// spellings (escaped, case-folded) and whitespace. Bytes run out as choice
// 0, which always ends an object or array. variant changes only the text
// values, so the frames of two variants differ only inside text strings,
// as consecutive text deltas do.
type frameGen struct {
	in      []byte
	variant int
	out     strings.Builder
}

func (g *frameGen) pick(n int) int {
	if len(g.in) == 0 {
		return 0
	}
	c := int(g.in[0]) % n
	g.in = g.in[1:]
	return c
}

func (g *frameGen) ws() {
	if g.pick(8) == 7 {
		g.out.WriteString(" \n\t"[:1+g.pick(3)])
	}
}

func (g *frameGen) raw(s string) {
	g.ws()
	g.out.WriteString(s)
}

// key writes a member name: as is, with its first letter escaped, or with
// its case changed (which must not match).
func (g *frameGen) key(k string) {
	g.ws()
	switch g.pick(16) {
	case 14:
		g.out.WriteString(`"\u00` + strings.ToLower(strconvHex(k[0])) + k[1:] + `"`)
	case 15:
		g.out.WriteString(`"` + strings.ToUpper(k[:1]) + k[1:] + `"`)
	default:
		g.out.WriteString(`"` + k + `"`)
	}
	g.raw(":")
}

func strconvHex(c byte) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[c>>4], hex[c&15]})
}

// object writes an object of up to four members drawn from keys, each
// written by val.
func (g *frameGen) object(keys []string, val func(k string)) {
	g.objectN(0, keys, val)
}

// objectN is object with at least min members while bytes last.
func (g *frameGen) objectN(min int, keys []string, val func(k string)) {
	g.raw("{")
	n := g.pick(5)
	if len(g.in) > 0 {
		n += min
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			g.raw(",")
		}
		k := keys[g.pick(len(keys))]
		g.key(k)
		val(k)
	}
	g.raw("}")
}

func (g *frameGen) array(elem func()) {
	g.raw("[")
	n := g.pick(4)
	for i := 0; i < n; i++ {
		if i > 0 {
			g.raw(",")
		}
		elem()
	}
	g.raw("]")
}

// odd writes, now and then, null or a value of the wrong JSON type instead
// of the member's own; it reports whether it did.
func (g *frameGen) odd(wrong string) bool {
	switch g.pick(32) {
	case 30:
		g.raw("null")
	case 31:
		g.raw(wrong)
	default:
		return false
	}
	return true
}

var genStrings = []string{`"A"`, `"B"`, `"T"`, `""`, `"TASK_STATE_WORKING"`, `"\u0041"`, `"é\ud83d\ude00"`, `null`}

// genTexts are text values; a frame's variant picks the column.
var genTexts = [][2]string{{`"tok "`, `"tik "`}, {`""`, `"x"`}, {`"a\"b"`, `"\u00e9"`}, {`"same"`, `"same"`}, {`null`, `"n"`}}

func (g *frameGen) str() {
	if !g.odd("5") {
		g.raw(genStrings[g.pick(len(genStrings))])
	}
}

// fixed writes an object of the given members in order, each perhaps
// followed by one drawn from keys and written by extra.
func (g *frameGen) fixed(members []string, val func(k string), keys []string, extra func(k string)) {
	g.raw("{")
	for i, k := range members {
		if i > 0 {
			g.raw(",")
		}
		g.key(k)
		val(k)
		if g.pick(4) == 0 {
			g.raw(",")
			k = keys[g.pick(len(keys))]
			g.key(k)
			extra(k)
		}
	}
	g.raw("}")
}

// delta writes a text-delta frame as iac-code sends it (upstream.md
// §3.4.1) with members added at every level.
func (g *frameGen) delta() {
	g.fixed([]string{"jsonrpc", "id", "result"}, func(k string) {
		if k != "result" {
			g.str()
			return
		}
		g.fixed([]string{"statusUpdate"}, func(string) {
			g.fixed([]string{"taskId", "contextId", "status", "metadata"}, func(k string) {
				switch k {
				case "status":
					g.fixed([]string{"state", "message"}, func(k string) {
						if k != "message" {
							g.str()
							return
						}
						g.fixed([]string{"messageId", "role", "parts"}, func(k string) {
							if k != "parts" {
								g.str()
								return
							}
							g.raw("[")
							g.fixed([]string{"text"}, g.partField, partKeys, g.partField)
							g.raw("]")
						}, messageKeys, g.messageField)
					}, statusKeys, g.statusField)
				case "metadata":
					g.anyObject(2)
				default:
					g.str()
				}
			}, wireKeys, g.wireField)
		}, resultKeys, g.resultField)
	}, []string{"result", "error", "id"}, g.topField)
}

func (g *frameGen) frame() string {
	if g.pick(3) == 0 {
		g.delta()
		return g.out.String()
	}
	g.objectN(1, []string{"result", "error", "jsonrpc", "id", "result", "result"}, g.topField)
	return g.out.String()
}

func (g *frameGen) topField(k string) {
	switch k {
	case "result":
		if !g.odd("[]") {
			g.result()
		}
	case "error":
		if !g.odd(`"e"`) {
			g.rpcError()
		}
	default:
		g.str()
	}
}

var (
	wireKeys    = []string{"id", "taskId", "contextId", "status", "history", "artifact", "artifacts", "metadata", "lastChunk", "status", "status"}
	resultKeys  = append([]string{"task", "statusUpdate", "artifactUpdate", "message", "statusUpdate", "task"}, wireKeys...)
	statusKeys  = []string{"state", "message", "timestamp", "message"}
	messageKeys = []string{"messageId", "contextId", "taskId", "role", "parts", "metadata", "parts", "kind", "parts"}
	partKeys    = []string{"text", "raw", "url", "data", "mediaType", "filename", "metadata", "text", "text", "text"}
	anyKeys     = []string{"iac_code", "a", "b", "iac_code"}
)

func (g *frameGen) result() {
	g.object(resultKeys, g.resultField)
}

func (g *frameGen) resultField(k string) {
	switch k {
	case "task", "statusUpdate", "artifactUpdate":
		if !g.odd(`"T"`) {
			g.object(wireKeys, g.wireField)
		}
	case "message":
		if !g.odd("1") {
			g.message()
		}
	default:
		g.wireField(k)
	}
}

func (g *frameGen) wireField(k string) {
	switch k {
	case "status":
		if !g.odd("[]") {
			g.object(statusKeys, g.statusField)
		}
	case "history":
		if !g.odd("{}") {
			g.array(func() {
				if !g.odd(`"m"`) {
					g.message()
				}
			})
		}
	case "artifacts":
		if !g.odd("{}") {
			g.array(func() {
				if !g.odd("[1]") {
					g.anyObject(2)
				}
			})
		}
	case "artifact", "metadata":
		if !g.odd("[]") {
			g.anyObject(2)
		}
	case "lastChunk":
		g.anyValue(2)
	default:
		g.str()
	}
}

func (g *frameGen) statusField(k string) {
	if k == "message" {
		if !g.odd("true") {
			g.message()
		}
		return
	}
	g.str()
}

func (g *frameGen) message() {
	g.object(messageKeys, g.messageField)
}

func (g *frameGen) messageField(k string) {
	switch k {
	case "parts":
		if !g.odd(`{}`) {
			g.array(func() {
				if !g.odd("0") {
					g.object(partKeys, g.partField)
				}
			})
		}
	case "metadata":
		if !g.odd("[]") {
			g.anyObject(2)
		}
	case "kind":
		g.anyValue(1)
	default:
		g.str()
	}
}

func (g *frameGen) partField(k string) {
	switch k {
	case "text":
		if !g.odd("1") {
			g.raw(genTexts[g.pick(len(genTexts))][g.variant])
		}
	case "data":
		g.anyValue(2)
	case "metadata":
		if !g.odd("[]") {
			g.anyObject(1)
		}
	default:
		g.str()
	}
}

func (g *frameGen) rpcError() {
	codes := []string{"-32001", "-32602", "1", "2.0", "3e0", "-0", "null", "1.5", `"1"`, "9007199254740993"}
	g.object([]string{"code", "message", "data", "code"}, func(k string) {
		switch k {
		case "code":
			// Mostly valid codes; the last three are refused.
			c := g.pick(len(codes))
			if c >= len(codes)-3 && g.pick(4) != 0 {
				c = 0
			}
			g.raw(codes[c])
		case "data":
			g.anyValue(2)
		default:
			g.str()
		}
	})
}

func (g *frameGen) anyObject(depth int) {
	g.object(anyKeys, func(string) { g.anyValue(depth - 1) })
}

func (g *frameGen) anyValue(depth int) {
	switch c := g.pick(8); {
	case c == 6 && depth > 0:
		g.anyObject(depth)
	case c == 7 && depth > 0:
		g.array(func() { g.anyValue(depth - 1) })
	default:
		g.raw([]string{"1", "2.5", "-3e2", "true", "false", "null", `"s"`, `"iac"`}[c])
	}
}

func genFrames(in []byte) (a, b []byte) {
	ga := &frameGen{in: in}
	gb := &frameGen{in: in, variant: 1}
	return []byte(ga.frame()), []byte(gb.frame())
}

// checkGenerated holds Decode to the reference decoder on both variants,
// and a Decoder that read variant 0 (so its text template may answer) to
// Decode on variant 1.
func checkGenerated(t *testing.T, in []byte) (answer, answer) {
	t.Helper()
	a, b := genFrames(in)
	ga, gb := checkFrame(t, a), checkFrame(t, b)
	var d Decoder
	_, _, _ = d.Decode(a)
	checkSame(t, b, answerOf(d.Decode(b)), gb, "fresh")
	return ga, gb
}

// FuzzDecodeStructured writes frames with repeated and reordered members,
// wrapper combinations, nulls and wrongly typed members from the fuzz
// bytes, which mutation of raw bytes rarely reaches, and holds the decoder
// to the reference on them.
func FuzzDecodeStructured(f *testing.F) {
	r := rand.New(rand.NewPCG(8, 5))
	for range 16 {
		in := make([]byte, 64+r.IntN(192))
		for i := range in {
			in[i] = byte(r.Uint32())
		}
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkGenerated(t, in)
	})
}

// The generator must reach what FuzzDecodeStructured is for: repeated
// wrappers, both accepted and refused frames, RPC errors and text
// templates. This also runs it over a fixed sample of inputs.
func TestDecodeStructuredSample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var valid, invalid, rpc, repeated, texts int
	for range 3000 {
		in := make([]byte, 32+r.IntN(480))
		for i := range in {
			in[i] = byte(r.Uint32())
		}
		a, _ := genFrames(in)
		ga, gb := checkGenerated(t, in)
		switch {
		case ga.Invalid:
			invalid++
		case ga.RPC != nil:
			rpc++
		default:
			valid++
			if gb.Event.Status != nil && gb.Event.Status.Message.Text() != ga.Event.Status.Message.Text() {
				texts++
			}
		}
		s := string(a)
		for _, w := range []string{`"statusUpdate":`, `"task":`} {
			if i := strings.Index(s, w); i >= 0 && strings.Contains(s[i+1:], w) {
				repeated++
			}
		}
	}
	t.Logf("valid %d, invalid %d, rpc errors %d, repeated wrappers %d, text deltas %d", valid, invalid, rpc, repeated, texts)
	for name, n := range map[string]int{"valid": valid, "invalid": invalid, "rpc": rpc, "repeated": repeated, "texts": texts} {
		if n < 30 {
			t.Errorf("only %d %s frames in the sample", n, name)
		}
	}
}
