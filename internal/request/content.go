package request

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Limits of user content (protocol.md §3.2, §11).
const (
	maxImageBytes           = 8 << 20
	maxTotalImageBytes      = 10 << 20
	maxImageFilenameBytes   = 255
	fallbackImageNamePrefix = "agui-image-"
)

// ContentError is a user-content failure; Msg is the public English text.
type ContentError struct{ Msg string }

func (e *ContentError) Error() string { return e.Msg }

// ErrNoUserMessage means a new run carried no message with role "user".
var ErrNoUserMessage error = &ContentError{Msg: i18n.MsgUserMessageRequired}

// UserInput is the latest user message converted to A2A parts.
type UserInput struct {
	MessageID string
	Parts     []*a2asdk.Part
}

var supportedImageTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
}

// UserContent converts the newest message with role "user" into A2A parts.
// Images are forwarded unchanged (no resizing or re-encoding).
func UserContent(messages []agui.Message) (*UserInput, error) {
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role != "user" {
			continue
		}
		parts, err := convertContent(messages[i].Content)
		if err != nil {
			return nil, err
		}
		return &UserInput{MessageID: messages[i].ID, Parts: parts}, nil
	}
	return nil, ErrNoUserMessage
}

func contentErr(msg string) error { return &ContentError{Msg: msg} }

func convertContent(raw json.RawMessage) ([]*a2asdk.Part, error) {
	// One decoding pass into exact-key maps: the content may hold 10 MiB of
	// base64, and struct decoding would match keys case-insensitively.
	var content any
	if len(raw) == 0 || json.Unmarshal(raw, &content) != nil {
		return nil, contentErr(i18n.MsgContentInvalid)
	}
	switch c := content.(type) {
	case string:
		return []*a2asdk.Part{a2asdk.NewTextPart(c)}, nil
	case []any:
		return convertList(c)
	}
	return nil, contentErr(i18n.MsgContentInvalid)
}

func convertList(list []any) ([]*a2asdk.Part, error) {
	parts := make([]*a2asdk.Part, 0, len(list))
	total := 0
	for _, entry := range list {
		obj, ok := entry.(map[string]any)
		if !ok {
			return nil, contentErr(i18n.MsgContentInvalid)
		}
		switch obj["type"] {
		case "text":
			text, ok := obj["text"].(string)
			if !ok {
				return nil, contentErr(i18n.MsgContentInvalid)
			}
			parts = append(parts, a2asdk.NewTextPart(text))
		case "image":
			p, n, err := imagePart(obj, len(parts)+1)
			if err != nil {
				return nil, err
			}
			if total += n; total > maxTotalImageBytes {
				return nil, contentErr(i18n.MsgImagesTotalTooLarge)
			}
			parts = append(parts, p)
		default:
			return nil, contentErr(i18n.MsgContentTypeUnsupported)
		}
	}
	return parts, nil
}

// imagePart converts one image part; n is its decoded size.
func imagePart(obj map[string]any, ordinal int) (*a2asdk.Part, int, error) {
	src, _ := obj["source"].(map[string]any)
	if src == nil || src["type"] != "data" {
		return nil, 0, contentErr(i18n.MsgRemoteMediaUnsupported)
	}
	mimeRaw, _ := src["mimeType"].(string)
	mime, ok := asciiLower(mimeRaw)
	if !ok || !supportedImageTypes[mime] {
		return nil, 0, contentErr(i18n.MsgImageMediaTypeUnsupported)
	}
	data, ok := src["value"].(string)
	if !ok {
		return nil, 0, contentErr(i18n.MsgImageBase64Invalid)
	}
	n, ok := base64Len(data)
	if !ok {
		return nil, 0, contentErr(i18n.MsgImageBase64Invalid)
	}
	if n > maxImageBytes {
		return nil, 0, contentErr(i18n.MsgImageTooLarge)
	}
	if n == 0 {
		return nil, 0, contentErr(i18n.MsgImageInvalid)
	}
	name := fallbackImageNamePrefix + strconv.Itoa(ordinal)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if fn, _ := meta["filename"].(string); fn != "" && len(fn) <= maxImageFilenameBytes && SafeFileName(fn) {
			name = fn
		}
	}
	p := a2asdk.NewDataPart(map[string]any{"filename": name, "bytes": data})
	p.MediaType = mime
	return p, n, nil
}

// asciiLower lowercases s; non-ASCII input is refused because Unicode case
// mapping could turn it into a supported ASCII type the original rejects.
func asciiLower(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// base64Buf holds base64Len's chunks. They come from a pool rather than
// the stack: 7 KiB of locals would double the stack of the goroutine that
// admits a run with an image, and a stack is halved again only when less
// than a quarter of it is in use, which a waiting stream never reaches.
type base64Buf struct {
	src [4096]byte
	dst [3072]byte
}

var base64Bufs = sync.Pool{New: func() any { return new(base64Buf) }}

// base64Len validates s as standard base64 with padding, the way Python's
// b64decode(validate=True) does (no whitespace, no URL alphabet, padding
// only at the end; non-zero trailing bits are tolerated), and returns the
// decoded length. It decodes in chunks so nothing large is allocated.
func base64Len(s string) (int, bool) {
	if len(s)%4 != 0 || strings.ContainsAny(s, "\r\n") {
		return 0, false
	}
	if i := strings.IndexByte(s, '='); i >= 0 && i < len(s)-2 {
		return 0, false
	}
	b := base64Bufs.Get().(*base64Buf)
	defer base64Bufs.Put(b)
	for i := 0; i < len(s); i += len(b.src) {
		n := copy(b.src[:], s[i:])
		if _, err := base64.StdEncoding.Decode(b.dst[:], b.src[:n]); err != nil {
			return 0, false
		}
	}
	return base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s[max(0, len(s)-2):], "="), true
}
