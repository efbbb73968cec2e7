package server

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// errTooLarge reports a body over its limit, by header or while reading.
var errTooLarge = errors.New("request body too large")

// readBody reads at most limit bytes of the body, checking Content-Length
// first and counting while reading (adapter.md §2.5 step 4).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, errTooLarge
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, errTooLarge
	}
	return body, nil
}

// admitBody runs the checks both POST routes share, in order: bearer
// authentication, the JSON media type, and the body limit (adapter.md §2.5
// steps 2–4, §7.1). It answers the error itself and returns ok false.
func (h *Handler) admitBody(w http.ResponseWriter, r *http.Request, lang i18n.Lang, limit int64, tooLarge string) ([]byte, bool) {
	if !h.authorized(r) {
		writeError(w, lang, http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return nil, false
	}
	if !jsonMediaType(r) {
		writeError(w, lang, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", i18n.MsgUnsupportedMediaType)
		return nil, false
	}
	body, err := readBody(w, r, limit)
	if errors.Is(err, errTooLarge) {
		writeError(w, lang, http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", tooLarge)
		return nil, false
	}
	// Any other error: the client went away while sending.
	return body, err == nil
}
