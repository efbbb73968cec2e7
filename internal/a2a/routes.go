package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// Health probes GET <base>health with the token; nil on a 2xx answer.
func (c *Client) Health(ctx context.Context) error {
	_, _, err := c.plain(ctx, http.MethodGet, "health", "", nil)
	return err
}

// PipelineState fetches the pipeline recovery snapshot and the journal
// envelopes after afterSequence (a negative value leaves it out, so the
// server uses snapshot.lastSequence). A 404 gives ErrNotFound. Numbers
// decode as float64, like every other metadata; read them with Int.
func (c *Client) PipelineState(ctx context.Context, taskID string, afterSequence int64) (*PipelineState, error) {
	q := url.Values{"taskId": {taskID}}
	if afterSequence >= 0 {
		q.Set("afterSequence", strconv.FormatInt(afterSequence, 10))
	}
	_, b, err := c.plain(ctx, http.MethodGet, "iac-code/pipeline/state?"+q.Encode(), "/iac-code/pipeline/state", nil)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
			return nil, ErrNotFound
		}
		return nil, err
	}
	var ps PipelineState
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, protocolError("pipeline state: %s", jsonErrText(err))
	}
	return &ps, nil
}

// Restore statuses answered by ensure-restored.
const (
	RestoreCurrent  = "current"
	RestoreRestored = "restored"
)

// EnsureRestored asks the server to make the iac-code session ready and
// returns "current" or "restored". A 404 gives ErrSessionUnavailable; a
// 409 SESSION_BACKUP_NOT_READY with retryable true gives
// ErrBackupNotReady; other answers are *HTTPError or ErrProtocol.
func (c *Client) EnsureRestored(ctx context.Context, cwd, sessionID, taskID string) (string, error) {
	body, err := json.Marshal(struct {
		Cwd       string `json:"cwd"`
		SessionID string `json:"sessionId"`
		TaskID    string `json:"taskId"`
	}{cwd, sessionID, taskID})
	if err != nil {
		return "", err
	}
	_, b, err := c.plain(ctx, http.MethodPost, "iac-code/session/ensure-restored", "/iac-code/session/ensure-restored", body)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) {
			switch {
			case he.StatusCode == http.StatusNotFound:
				return "", ErrSessionUnavailable
			case he.StatusCode == http.StatusConflict && backupNotReadyBody(he.Body):
				return "", ErrBackupNotReady
			}
		}
		return "", err
	}
	var ans struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return "", protocolError("ensure-restored: %s", jsonErrText(err))
	}
	if ans.Status != RestoreCurrent && ans.Status != RestoreRestored {
		return "", protocolError("ensure-restored: unexpected status %q", ans.Status)
	}
	return ans.Status, nil
}

// backupNotReadyBody accepts retryable inside "error" or next to it, since
// the nesting is not documented (upstream.md §5.5).
func backupNotReadyBody(body string) bool {
	var v struct {
		Error     any `json:"error"`
		Retryable any `json:"retryable"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return false
	}
	e, ok := v.Error.(map[string]any)
	if !ok {
		return false
	}
	if code, _ := e["code"].(string); code != CodeSessionBackupNotReady {
		return false
	}
	return e["retryable"] == true || v.Retryable == true
}

// jsonErrText describes a decoding error without echoing input bytes:
// syntax and type errors carry only offsets, field names and types.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "syntax error at offset " + strconv.FormatInt(se.Offset, 10)
	case errors.As(err, &te):
		return "wrong type for field " + te.Field + " (" + te.Value + ")"
	}
	return "invalid JSON"
}

// ErrHandoffUnsupported is the 404 of /iac-code/handoff/<op>: the server
// has no session-handoff service.
var ErrHandoffUnsupported = errors.New("a2a: session handoff not supported")

// Handoff calls the session-handoff route of op (upstream.md §5.5): GET
// without a body for "capabilities", POST body otherwise. It returns the
// 2xx answer, which must be a JSON object; a 404 gives
// ErrHandoffUnsupported, other statuses *HTTPError.
func (c *Client) Handoff(ctx context.Context, op string, body []byte) (map[string]any, error) {
	method := http.MethodPost
	if op == "capabilities" {
		method, body = http.MethodGet, nil
	}
	_, b, err := c.plain(ctx, method, "iac-code/handoff/"+url.PathEscape(op), "/iac-code/handoff/"+op, body)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
			return nil, ErrHandoffUnsupported
		}
		return nil, err
	}
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil || ans == nil {
		return nil, protocolError("handoff %s: the answer is not a JSON object", op)
	}
	return ans, nil
}
