package adapter

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaFailure is where a payload failed its responseSchema and what the
// schema expected there, for RESUME_PAYLOAD_INVALID's field and reason
// (protocol.md §5.7): loc is a JSON pointer below the payload. The
// reason names keys, types and the schema's own values, never a value
// the client sent.
type schemaFailure struct {
	loc    string
	reason string
	// missing marks a required key that is absent; want holds the values
	// of a const or enum rule, so that tied branches can be merged.
	missing bool
	want    []any
}

// payloadFailure picks, from a validation error, the failure a client
// most likely has to fix. ok is false when err is not a validation error.
func payloadFailure(err error) (schemaFailure, bool) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return schemaFailure{}, false
	}
	fs := failures(ve)
	if len(fs) == 0 {
		return schemaFailure{reason: "does not match the response schema"}, true
	}
	for _, f := range fs {
		if f.missing {
			return f, true // what to add before what to drop
		}
	}
	return fs[0], true
}

// failures lists the leaf failures of ve, one branch of each oneOf/anyOf.
func failures(ve *jsonschema.ValidationError) []schemaFailure {
	switch ve.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		if len(ve.Causes) > 0 {
			return branchFailures(ve)
		}
	}
	if len(ve.Causes) == 0 {
		return []schemaFailure{leafFailure(ve)}
	}
	var out []schemaFailure
	for _, c := range ve.Causes {
		out = append(out, failures(c)...)
	}
	return out
}

// branchFailures chooses among the branches of a oneOf or anyOf that
// none matched. A branch whose required keys the payload has is the one
// the client meant: the fewest failures among those win, and tied const
// or enum rules at one place are merged ("must be one of: …"). When every
// branch misses a key, the payload itself is named with the keys that
// would select a branch ("must have selectedId or freeText").
func branchFailures(ve *jsonschema.ValidationError) []schemaFailure {
	var tried [][]schemaFailure
	var keys []string
	for _, c := range ve.Causes {
		fs := failures(c)
		miss := false
		for _, f := range fs {
			if f.missing {
				miss = true
				if k := lastToken(f.loc); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		if !miss && len(fs) > 0 {
			tried = append(tried, fs)
		}
	}
	if len(tried) == 0 {
		return []schemaFailure{{loc: pointer(ve.InstanceLocation), reason: "must have " + strings.Join(keys, " or ")}}
	}
	best := tried[0]
	var merged []any
	for _, fs := range tried {
		if len(fs) < len(best) {
			best = fs
		}
	}
	for _, fs := range tried {
		if len(fs) == 1 && len(best) == 1 && fs[0].loc == best[0].loc && len(fs[0].want) > 0 && len(best[0].want) > 0 {
			merged = append(merged, fs[0].want...)
		}
	}
	if len(merged) > len(best[0].want) {
		return []schemaFailure{{loc: best[0].loc, reason: oneOf(merged), want: merged}}
	}
	return best
}

// leafFailure renders one rule that failed.
func leafFailure(ve *jsonschema.ValidationError) schemaFailure {
	loc := pointer(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		return schemaFailure{loc: loc + "/" + escapeToken(k.Missing[0]), reason: "is required", missing: true}
	case *kind.AdditionalProperties:
		return schemaFailure{loc: loc + "/" + escapeToken(k.Properties[0]), reason: "unknown key"}
	case *kind.Type:
		return schemaFailure{loc: loc, reason: "must be " + typeNames(k.Want)}
	case *kind.Enum:
		return schemaFailure{loc: loc, reason: oneOf(k.Want), want: k.Want}
	case *kind.Const:
		return schemaFailure{loc: loc, reason: "must be " + display(k.Want), want: []any{k.Want}}
	case *kind.MinLength:
		if k.Want == 1 {
			return schemaFailure{loc: loc, reason: "must not be empty"}
		}
		return schemaFailure{loc: loc, reason: "must have at least " + strconv.Itoa(k.Want) + " characters"}
	case *kind.MaxLength:
		return schemaFailure{loc: loc, reason: "must have at most " + strconv.Itoa(k.Want) + " characters"}
	}
	return schemaFailure{loc: loc, reason: "does not match the response schema"}
}

func oneOf(want []any) string {
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = display(w)
	}
	if len(parts) == 1 {
		return "must be " + parts[0]
	}
	return "must be one of: " + strings.Join(parts, ", ")
}

// display is a schema value as JSON.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

var typeArticles = map[string]string{
	"string": "a string", "object": "an object", "array": "an array", "number": "a number",
	"integer": "an integer", "boolean": "a boolean", "null": "null",
}

func typeNames(want []string) string {
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w
		if a, ok := typeArticles[w]; ok {
			names[i] = a
		}
	}
	return strings.Join(names, " or ")
}

// pointer is an instance location as an RFC 6901 pointer ("" for the root).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + escapeToken(t))
	}
	return b.String()
}

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func escapeToken(t string) string { return tokenEscaper.Replace(t) }

func lastToken(p string) string {
	i := strings.LastIndexByte(p, '/')
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(p[i+1:])
}
