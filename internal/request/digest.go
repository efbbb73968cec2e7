package request

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/iac-code-agui/iac-code-agui/internal/pyjson"
)

// Digest returns the canonical request digest (protocol.md §6): SHA-256,
// lowercase hex, of the parsed body re-serialised exactly like Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
// Matching Python byte for byte keeps replays of requests admitted by the
// original adapter classified as DUPLICATE_RUN_ID.
//
// The body is re-serialised as it is read, never decoded whole, so a large
// body costs about its own size again rather than tens of bytes per array
// element (docs/reliability.md).
func Digest(body []byte) (string, error) {
	b, err := pyjson.AppendText(make([]byte, 0, len(body)), body)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
