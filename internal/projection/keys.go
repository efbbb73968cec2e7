package projection

// keys is the public projection allowlist of protocol.md §5.1, in the
// spec's order ("selector" since 2550a1fd). Nothing outside it (tool
// arguments, credentials) may be persisted or shown to a client.
var keys = [...]string{
	"schemaVersion", "kind", "requestTaskId", "contextId", "inputId",
	"toolUseId", "toolName", "title", "purpose", "effect", "target",
	"isReadOnly", "prompt", "safeSummary", "options", "language",
	"deploymentSummary", "scope", "subPipelineId", "operation",
	"displayParameters", "allowFreeText", "freeTextPrompt", "required",
	"selector",
}

var keySet = func() map[string]struct{} {
	m := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}()

// Keys returns the public keys in the order of protocol.md §5.1; the
// caller owns the slice.
func Keys() []string { return append([]string(nil), keys[:]...) }

// IsKey reports whether k is a public projection key.
func IsKey(k string) bool {
	_, ok := keySet[k]
	return ok
}

// Project returns a deep copy of an A2A input that keeps only the public
// keys. The copy shares nothing with in, so a caller may persist or
// mutate it (RequiredInputs writes a generated inputId into it) without
// touching the decoded event. Nested values are copied when they are JSON
// objects or arrays; other values are immutable scalars and are shared.
func Project(in map[string]any) map[string]any {
	out := make(map[string]any, min(len(in), len(keys)))
	for k, v := range in {
		if IsKey(k) {
			out[k] = DeepCopy(v)
		}
	}
	return out
}

func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		if x == nil {
			return []any(nil)
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = DeepCopy(e)
		}
		return s
	default:
		return x
	}
}
