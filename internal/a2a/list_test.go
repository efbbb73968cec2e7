package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestOpenTasks: the open tasks of the context over two ListTasks pages;
// terminal tasks and other contexts' tasks are left out, and a server
// without the method answers its JSON-RPC error.
func TestOpenTasks(t *testing.T) {
	pages := map[string]string{
		"": `{"tasks":[{"id":"t-working","contextId":"ctx","status":{"state":"TASK_STATE_WORKING"}},
			{"id":"t-done","contextId":"ctx","status":{"state":"TASK_STATE_COMPLETED"}}],"nextPageToken":"p2","pageSize":2,"totalSize":4}`,
		"p2": `{"tasks":[{"id":"t-other","contextId":"ctx-2","status":{"state":"TASK_STATE_WORKING"}},
			{"id":"t-input","contextId":"ctx","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}],"nextPageToken":"","pageSize":2,"totalSize":4}`,
	}
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     string         `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		_ = json.Unmarshal(b, &req)
		seen = append(seen, req.Params)
		w.Header().Set("Content-Type", "application/json")
		if req.Params["contextId"] == "missing" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"`+req.ID+`","error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		token, _ := req.Params["pageToken"].(string)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":`+pages[token]+`}`)
	}))
	defer srv.Close()
	c := New(srv.URL, "")
	got, err := c.OpenTasks(context.Background(), "ctx")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t-working", "t-input"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("open tasks %v, want %v", got, want)
	}
	if len(seen) != 2 || seen[0]["contextId"] != "ctx" || seen[0]["pageSize"] != float64(100) || seen[1]["pageToken"] != "p2" {
		t.Fatalf("requests %v", seen)
	}
	_, err = c.OpenTasks(context.Background(), "missing")
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("error %v, want the JSON-RPC error -32601", err)
	}
}
