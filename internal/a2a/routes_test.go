package a2a

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestEnsureRestored(t *testing.T) {
	cases := []struct {
		name, body string
		status     int
		want       string
		wantErr    error
		wantHTTP   int
	}{
		{"current", `{"status":"current"}`, 200, "current", nil, 0},
		{"restored", `{"status":"restored"}`, 200, "restored", nil, 0},
		{"not found", `{"error":{"code":"SESSION_NOT_FOUND"}}`, 404, "", ErrSessionUnavailable, 0},
		{"409 nested", `{"error":{"code":"SESSION_BACKUP_NOT_READY","retryable":true}}`, 409, "", ErrBackupNotReady, 0},
		{"409 top level", `{"error":{"code":"SESSION_BACKUP_NOT_READY","message":"syncing"},"retryable":true}`, 409, "", ErrBackupNotReady, 0},
		{"409 not retryable", `{"error":{"code":"SESSION_BACKUP_NOT_READY","retryable":false}}`, 409, "", nil, 409},
		{"409 other code", `{"error":{"code":"CONFLICT","retryable":true}}`, 409, "", nil, 409},
		{"500", `{"error":"boom"}`, 500, "", nil, 500},
		{"2xx unknown status", `{"status":"pending"}`, 200, "", ErrProtocol, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, reqs := newUpstream(t, jsonAnswer(tc.status, tc.body))
			got, err := c.EnsureRestored(context.Background(), "/srv/iac/s1", "S", "T")
			r := <-reqs
			if r.Method != "POST" || r.Path != "/iac-code/session/ensure-restored" ||
				string(r.Body) != `{"cwd":"/srv/iac/s1","sessionId":"S","taskId":"T"}` ||
				r.Header.Get("Authorization") != "Bearer "+testToken || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("request %s %s %s %v", r.Method, r.Path, r.Body, r.Header)
			}
			if got != tc.want {
				t.Errorf("status = %q, want %q", got, tc.want)
			}
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("err = %v, want %v", err, tc.wantErr)
				}
			case tc.wantHTTP != 0:
				var he *HTTPError
				if !errors.As(err, &he) || he.StatusCode != tc.wantHTTP || he.Body != tc.body {
					t.Errorf("err = %v, want *HTTPError %d", err, tc.wantHTTP)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestPipelineState(t *testing.T) {
	c, reqs := newUpstream(t, jsonAnswer(200, `{"snapshot":{"schemaVersion":"1.1","pipelineRunId":"run-1","lastSequence":42,"status":"waiting_input"},"events":[{"eventId":"evt-1","sequence":43,"eventType":"text_delta","data":{"text":"hi"}}]}`))
	ps, err := c.PipelineState(context.Background(), "T", 41)
	if err != nil {
		t.Fatal(err)
	}
	r := <-reqs
	if r.Method != "GET" || r.Path != "/iac-code/pipeline/state" || r.Query != "afterSequence=41&taskId=T" || r.Header.Get("Authorization") != "Bearer "+testToken {
		t.Errorf("request %s %s?%s", r.Method, r.Path, r.Query)
	}
	if n, ok := Int(ps.Snapshot["lastSequence"]); !ok || n != 42 || ps.Snapshot["status"] != "waiting_input" {
		t.Errorf("snapshot = %v", ps.Snapshot)
	}
	if len(ps.Events) != 1 || ps.Events[0]["eventId"] != "evt-1" || ps.Events[0]["eventType"] != "text_delta" {
		t.Errorf("events = %v", ps.Events)
	}
	if _, err := c.PipelineState(context.Background(), "T", -1); err != nil {
		t.Fatal(err)
	}
	if r := <-reqs; r.Query != "taskId=T" {
		t.Errorf("query without afterSequence = %q", r.Query)
	}
}

func TestPipelineStateNotFound(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(404, `{"error":"A2A pipeline state not found"}`))
	ps, err := c.PipelineState(context.Background(), "T", 0)
	if ps != nil || !errors.Is(err, ErrNotFound) {
		t.Fatalf("PipelineState = %v, %v; want ErrNotFound", ps, err)
	}
}

func TestPipelineStateBadRequest(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(400, `{"error":"contextId or taskId is required"}`))
	_, err := c.PipelineState(context.Background(), "", 0)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 {
		t.Fatalf("err = %v, want *HTTPError 400", err)
	}
}

func TestHealth(t *testing.T) {
	// Mimics the server's bearer check on /health.
	c, reqs := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			jsonAnswer(401, `{"error":"Unauthorized"}`)(w, r, nil)
			return
		}
		jsonAnswer(200, `{"status":"healthy","version":"0.9.0","mode":"normal"}`)(w, r, nil)
	})
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := <-reqs; r.Method != "GET" || r.Path != "/health" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	c.token = "wrong-token"
	err := c.Health(context.Background())
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("Health with a wrong token = %v, want *HTTPError 401", err)
	}
}

func TestHealthUnreachable(t *testing.T) {
	c := New("http://127.0.0.1:1/", testToken)
	err := c.Health(context.Background())
	if err == nil {
		t.Fatal("Health on a closed port succeeded")
	}
	noToken(t, err)
}

func TestNewAddsTrailingSlash(t *testing.T) {
	if got := New("http://127.0.0.1:41242", "").BaseURL(); got != "http://127.0.0.1:41242/" {
		t.Fatalf("BaseURL = %q", got)
	}
}
