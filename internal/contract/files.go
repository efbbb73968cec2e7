package contract

import (
	"bytes"
	"encoding/json"
	"path"
)

// Files returns every generated file by its path relative to the
// repository root.
func Files() map[string][]byte {
	out := map[string][]byte{}
	for name, s := range Schemas() {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			panic(err) // the schemas are built from JSON values only
		}
		out[path.Join("schemas", name)] = b.Bytes()
	}
	out["schemas/ts/index.d.ts"] = []byte(TypeScript())
	out["schemas/ts/index.js"] = []byte(JavaScript())
	return out
}
