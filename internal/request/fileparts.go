package request

import (
	"encoding/base64"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// FileParts returns parts with every image in the A2A 1.0 form a generic
// agent reads, a raw part with its mediaType and filename, instead of
// iac-code's data part {"filename", "bytes"} (upstream.md §2.3, §10.2).
// Other parts are kept as they are; parts is not modified.
func FileParts(parts []*a2asdk.Part) []*a2asdk.Part {
	out := make([]*a2asdk.Part, len(parts))
	for i, p := range parts {
		out[i] = p
		d, ok := p.Data().(map[string]any)
		if !ok || len(d) != 2 || !supportedImageTypes[p.MediaType] {
			continue
		}
		name, _ := d["filename"].(string)
		b64, _ := d["bytes"].(string)
		raw, err := base64.StdEncoding.DecodeString(b64)
		if name == "" || err != nil {
			continue // UserContent validated it; keep the part if not
		}
		f := a2asdk.NewRawPart(raw)
		f.MediaType, f.Filename = p.MediaType, name
		out[i] = f
	}
	return out
}
