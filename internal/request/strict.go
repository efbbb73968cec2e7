package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// decodeJSON decodes one JSON value with UseNumber and refuses trailing data.
// Duplicate keys keep the last value, as Python's json.loads does.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// object checks that v is a JSON object whose keys all belong to fields.
func object(v any, name string, fields []field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(name, "must be an object")
	}
	for k := range m {
		if !known(k, fields) {
			return nil, &FieldError{Pointer: childPointer(pointerOf(name), k), Reason: "unknown key"}
		}
	}
	return m, nil
}

func known(k string, fields []field) bool {
	for _, f := range fields {
		for _, n := range f {
			if n == k {
				return true
			}
		}
	}
	return false
}

// pick returns the value of f under whichever spelling is present; both
// spellings at once are ambiguous and rejected.
func pick(m map[string]any, f field) (any, bool, error) {
	var v any
	found := 0
	for _, n := range f {
		if x, ok := m[n]; ok {
			v, found = x, found+1
		}
	}
	if found > 1 {
		return nil, false, invalid(f[0], "given under two spellings")
	}
	return v, found == 1, nil
}

func reqString(m map[string]any, f field) (string, error) {
	v, ok, err := pick(m, f)
	if err != nil {
		return "", err
	}
	s, isStr := v.(string)
	if !ok || !isStr {
		return "", invalid(f[0], "must be a string")
	}
	return s, nil
}

// optString accepts a string or null (Optional[str] in the original).
func optString(m map[string]any, f field) (string, bool, error) {
	v, ok, err := pick(m, f)
	if err != nil || !ok || v == nil {
		return "", false, err
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, invalid(f[0], "must be a string")
	}
	return s, true, nil
}

// optBool accepts a boolean; null is refused because the field is a plain
// bool with a default, not an Optional.
func optBool(m map[string]any, f field) (bool, error) {
	v, ok, err := pick(m, f)
	if err != nil || !ok {
		return false, err
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, invalid(f[0], "must be a boolean")
	}
	return b, nil
}
