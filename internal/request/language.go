package request

import "encoding/json"

// PreferredLanguage extracts forwardedProps.iacCode.preferredLanguage (or
// its snake_case spelling) from a body that has not been validated yet.
// It returns "" when the value is absent or not a string.
func PreferredLanguage(raw json.RawMessage) string {
	return ForwardedLanguage(member(raw, "forwardedProps"))
}

// ForwardedLanguage is PreferredLanguage given the body's forwardedProps
// member, for a caller that has decoded the body already.
func ForwardedLanguage(fp json.RawMessage) string {
	ic := member(fp, fTop...)
	v := member(ic, fLang...)
	var s string
	if v == nil || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// member returns the first present key among names of the JSON object raw.
// Exact key matching is needed, so a map is used instead of a struct.
func member(raw json.RawMessage, names ...string) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	for _, n := range names {
		if v, ok := m[n]; ok {
			return v
		}
	}
	return nil
}
