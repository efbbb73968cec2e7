package projection

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// The 25 keys of protocol.md §5.1, written out here as the spec lists them
// so that a change to the allowlist must be a deliberate change to both.
func TestKeysAreTheSpecAllowlist(t *testing.T) {
	want := []string{
		"schemaVersion", "kind", "requestTaskId", "contextId", "inputId",
		"toolUseId", "toolName", "title", "purpose", "effect", "target",
		"isReadOnly", "prompt", "safeSummary", "options", "language",
		"deploymentSummary", "scope", "subPipelineId", "operation",
		"displayParameters", "allowFreeText", "freeTextPrompt", "required",
		"selector",
	}
	if got := Keys(); !slices.Equal(got, want) {
		t.Fatalf("Keys() = %v, want %v", got, want)
	}
	for _, k := range want {
		if !IsKey(k) {
			t.Errorf("IsKey(%q) = false", k)
		}
	}
	for _, k := range []string{"", "toolInput", "llmApiKey", "expiresAt", "Kind", "question"} {
		if IsKey(k) {
			t.Errorf("IsKey(%q) = true", k)
		}
	}
	Keys()[0] = "mutated"
	if Keys()[0] != "schemaVersion" {
		t.Fatal("Keys() shares its backing array")
	}
}

// The kinds of protocol.md §5.2's table and upstream.md §4.
func TestKindsAreTheSpecKinds(t *testing.T) {
	want := []Kind{"permission", "cloud_resource_selection", "deployment_confirmation", "ask_user_question", "candidate_selection"}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	for _, k := range want {
		if !k.Known() {
			t.Errorf("%q.Known() = false", k)
		}
	}
	for _, k := range []Kind{"", "Permission", "other", "permission "} {
		if k.Known() {
			t.Errorf("%q.Known() = true", k)
		}
	}
}

func TestKindOf(t *testing.T) {
	cases := []struct {
		p    map[string]any
		want Kind
	}{
		{map[string]any{"kind": "permission"}, KindPermission},
		{map[string]any{"kind": "from-upstream"}, "from-upstream"},
		{map[string]any{"kind": 1.0}, ""},
		{map[string]any{"kind": nil}, ""},
		{map[string]any{}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := KindOf(c.p); got != c.want {
			t.Errorf("KindOf(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestProjectKeepsOnlyPublicKeysAndCopies(t *testing.T) {
	in := map[string]any{
		"inputId": "perm-1", "kind": "permission", "selector": map[string]any{"id": "vpc"},
		"options":   []any{map[string]any{"id": "a"}},
		"toolInput": map[string]any{"password": "hunter2"}, "llmApiKey": "sk-secret", "expiresAt": "2024-01-01T00:00:00Z",
	}
	got := Project(in)
	want := map[string]any{"inputId": "perm-1", "kind": "permission", "selector": map[string]any{"id": "vpc"},
		"options": []any{map[string]any{"id": "a"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Project = %v", got)
	}
	got["selector"].(map[string]any)["id"] = "changed"
	got["options"].([]any)[0].(map[string]any)["id"] = "changed"
	if in["selector"].(map[string]any)["id"] != "vpc" || in["options"].([]any)[0].(map[string]any)["id"] != "a" {
		t.Fatal("Project shares nested values with its input")
	}
	if b, err := json.Marshal(got); err != nil || len(b) == 0 {
		t.Fatalf("projection does not marshal: %v", err)
	}
	if p := Project(nil); p == nil || len(p) != 0 {
		t.Fatalf("Project(nil) = %#v, want an empty map", p)
	}
}
