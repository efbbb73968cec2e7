package adapter

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The shapes of mapper's response schemas (protocol.md §5.2).
var (
	testPermission = map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"decision": map[string]any{"type": "string", "enum": []any{"allow_once", "deny"}}},
		"required":             []any{"decision"},
		"additionalProperties": false,
	}
	testFreeText = map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"freeText": map[string]any{"type": "string", "minLength": 1}},
		"required":             []any{"freeText"},
		"additionalProperties": false,
	}
	testOption = func(id string) map[string]any {
		return map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"selectedId": map[string]any{"type": "string", "const": id}},
			"required":             []any{"selectedId"},
			"additionalProperties": false,
		}
	}
	testQuestion = map[string]any{"oneOf": []any{testOption("a"), testOption("b"), testFreeText}}
)

func TestPayloadFailure(t *testing.T) {
	for _, tc := range []struct {
		name          string
		schema        map[string]any
		payload       string
		field, reason string
	}{
		{"permission missing", testPermission, `{}`, "/decision", "is required"},
		{"permission enum", testPermission, `{"decision":"allow"}`, "/decision", `must be one of: "allow_once", "deny"`},
		{"permission type", testPermission, `{"decision":1}`, "/decision", "must be a string"},
		{"permission wrong key", testPermission, `{"text":"deny"}`, "/decision", "is required"},
		{"permission extra", testPermission, `{"decision":"deny","why":"x"}`, "/why", "unknown key"},
		{"not an object", testPermission, `"deny"`, "", "must be an object"},
		{"question text", testQuestion, `{"text":"yes"}`, "", "must have selectedId or freeText"},
		{"question empty free text", testQuestion, `{"freeText":""}`, "/freeText", "must not be empty"},
		{"question bad option", testQuestion, `{"selectedId":"c"}`, "/selectedId", `must be one of: "a", "b"`},
		{"free text only", map[string]any{"oneOf": []any{testFreeText}}, `{"text":"yes"}`, "", "must have freeText"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := compileSchema(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.payload)))
			if err != nil {
				t.Fatal(err)
			}
			verr := s.Validate(v)
			if verr == nil {
				t.Fatal("payload accepted")
			}
			f, ok := payloadFailure(verr)
			if !ok || f.loc != tc.field || f.reason != tc.reason {
				t.Fatalf("got (%q, %q, %v), want (%q, %q)", f.loc, f.reason, ok, tc.field, tc.reason)
			}
		})
	}
}
