package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// ErrInvalidThreadID is returned for an empty thread id (§8.2 rule 4).
var ErrInvalidThreadID = errors.New("state: thread id must be a non-empty string")

const (
	encodedKeyPrefix = "aguiid~"
	hashedKeyPrefix  = "aguihash~"
	// maxEncodedKeyLen counts the "aguiid~" prefix, as the original does.
	maxEncodedKeyLen = 200
	// maxPlainKeyLen keeps ".<key>.json.<8 random>.tmp" within the 255-byte
	// NAME_MAX. The original keeps longer plain ids as they are and then
	// always fails to save them, so no file of the original uses a longer
	// plain key; we hash such ids instead of failing.
	maxPlainKeyLen = 236
)

// FileKey returns the file stem of a thread's document (protocol.md §8.2):
// the id itself when it is a safe lowercase portable name, else
// "aguiid~" + lowercase hex of its UTF-8 bytes when that fits in 200
// characters, else "aguihash~" + SHA-256 hex. Keys are distinct for distinct
// ids and never differ only by case.
func FileKey(threadID string) (string, error) {
	if threadID == "" {
		return "", ErrInvalidThreadID
	}
	if len(threadID) <= maxPlainKeyLen && isPlainKey(threadID) {
		return threadID, nil
	}
	if n := len(encodedKeyPrefix) + 2*len(threadID); n <= maxEncodedKeyLen {
		return encodedKeyPrefix + hex.EncodeToString([]byte(threadID)), nil
	}
	sum := sha256.Sum256([]byte(threadID))
	return hashedKeyPrefix + hex.EncodeToString(sum[:]), nil
}

// isPlainKey applies rule 1 of §8.2: [A-Za-z0-9_.-]+ and all lowercase (so
// effectively [a-z0-9_.-]+), not "." or "..", no trailing ".", and no
// Windows reserved device base name.
func isPlainKey(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	if id == "." || id == ".." || strings.HasSuffix(id, ".") {
		return false
	}
	base, _, _ := strings.Cut(strings.TrimRight(id, "."), ".")
	return !isWindowsReserved(strings.ToUpper(base))
}

func isWindowsReserved(base string) bool {
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		return base[3] >= '1' && base[3] <= '9'
	}
	return false
}
