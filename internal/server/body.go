package server

import (
	"errors"
	"io"
	"net/http"
	"time"
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
