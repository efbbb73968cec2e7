package config

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"go.yaml.in/yaml/v3"
)

// yamlFile holds the top-level entries of the config file, keyed by the
// normalised key ("-" replaced by "_"). A later spelling of the same key
// replaces an earlier one, as a Python dict built in file order would.
type yamlFile map[string]*yaml.Node

// maxConfigBytes bounds the file we read; a real config is a few hundred bytes.
const maxConfigBytes = 1 << 20

// readYAML loads path. An empty or null document counts as {} (protocol.md
// §1.3); a document that is not a mapping gives MsgConfigNotMapping; a read or
// parse error, or a second document (PyYAML's safe_load refuses those), gives
// MsgConfigLoad.
func readYAML(path string) (yamlFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, newError(i18n.MsgConfigLoad, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, newError(i18n.MsgConfigLoad, err)
	}
	if len(data) > maxConfigBytes {
		return nil, newError(i18n.MsgConfigLoad, errors.New("config file too large"))
	}
	return parseYAML(data)
}

func parseYAML(data []byte) (out yamlFile, err error) {
	// yaml.v3 has panicked on malformed input before (CVE-2022-28948); a
	// config file must never crash the process.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, newError(i18n.MsgConfigLoad, errors.New("yaml parser failure"))
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return yamlFile{}, nil
		}
		return nil, newError(i18n.MsgConfigLoad, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, newError(i18n.MsgConfigLoad, errors.New("more than one YAML document"))
	}
	root := deref(&doc)
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return yamlFile{}, nil
		}
		root = deref(root.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return yamlFile{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, newError(i18n.MsgConfigNotMapping, nil)
	}
	out = yamlFile{}
	addMapping(out, root, 0)
	return out, nil
}

// addMapping copies a mapping's entries into out. Merge keys ("<<") are applied
// first so that explicit keys override merged ones, as in PyYAML.
func addMapping(out yamlFile, m *yaml.Node, depth int) {
	if depth > 8 {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Tag != "!!merge" {
			continue
		}
		v := deref(m.Content[i+1])
		switch v.Kind {
		case yaml.MappingNode:
			addMapping(out, v, depth+1)
		case yaml.SequenceNode:
			for _, item := range v.Content {
				if item = deref(item); item.Kind == yaml.MappingNode {
					addMapping(out, item, depth+1)
				}
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := deref(m.Content[i])
		if k.Tag == "!!merge" || k.Kind != yaml.ScalarNode {
			continue
		}
		out[strings.ReplaceAll(k.Value, "-", "_")] = m.Content[i+1]
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// yaml11Bools are the plain scalars PyYAML (YAML 1.1) reads as booleans but
// yaml.v3 (YAML 1.2) reads as strings; the original saw booleans.
var yaml11Bools = map[string]bool{
	"yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// value returns the decoded scalar at key: nil for a missing key or YAML null,
// a bool, int, float64 or string for scalars, and a non-scalar marker for
// mappings and sequences (so type checks reject them).
func (y yamlFile) value(key string) any {
	n, ok := y[key]
	if !ok {
		return nil
	}
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return nonScalar{}
	}
	if n.Tag == "!!null" {
		return nil
	}
	if n.Style == 0 && n.Tag == "!!str" {
		if b, ok := yaml11Bools[n.Value]; ok {
			return b
		}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nonScalar{}
	}
	return v
}

type nonScalar struct{}

// stringAt returns the YAML string at key; any other value is a
// MsgConfigLoad error that names the key (never the value, which may be a
// secret).
func (y yamlFile) stringAt(key string) (string, error) {
	s, ok := asString(y.value(key))
	if !ok {
		return "", newError(i18n.MsgConfigLoad, errors.New(key+" must be a string"))
	}
	return s, nil
}

// asString accepts only a YAML string.
func asString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// asPort accepts only a YAML integer (not a boolean, float or string) in
// 1..65535.
func asPort(v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		if x > 65535 {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return int(n), true
}

// asSeconds accepts a YAML integer or float that is finite and >= 0; a boolean
// is rejected.
func asSeconds(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}

// asBool accepts only a YAML boolean.
func asBool(v any) (bool, bool) {
	b, ok := v.(bool)
	return b, ok
}
