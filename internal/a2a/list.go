package a2a

import (
	"context"
	"encoding/json"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// MethodListTasks is the A2A 1.0 method that lists a context's tasks.
const MethodListTasks = "ListTasks"

const (
	// listPageSize is the most tasks a ListTasks page may hold (A2A: 1–100).
	listPageSize = 100
	// listMaxPages bounds OpenTasks on a server that keeps answering pages.
	listMaxPages = 10
)

// OpenTasks returns the ids of the tasks of contextID that are in no
// terminal state, following ListTasks pages (at most listMaxPages). A
// server without ListTasks answers an *RPCError.
func (c *Client) OpenTasks(ctx context.Context, contextID string) ([]string, error) {
	var open []string
	token := ""
	for range listMaxPages {
		page, err := c.listTasks(ctx, &a2asdk.ListTasksRequest{ContextID: contextID, PageSize: listPageSize, PageToken: token})
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tasks {
			if t != nil && t.ContextID == contextID && !t.Status.State.Terminal() {
				open = append(open, string(t.ID))
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	return open, nil
}

func (c *Client) listTasks(ctx context.Context, p *a2asdk.ListTasksRequest) (*a2asdk.ListTasksResponse, error) {
	b, err := c.rpcBody(ctx, MethodListTasks, p)
	if err != nil {
		return nil, err
	}
	var env struct {
		Result *a2asdk.ListTasksResponse `json:"result"`
		Error  *RPCError                 `json:"error"` // code, message, data
	}
	switch err := json.Unmarshal(b, &env); {
	case err != nil:
		return nil, protocolError("ListTasks answer: %s", err.Error())
	case env.Error != nil:
		return nil, env.Error
	case env.Result == nil:
		return nil, protocolError("ListTasks answer without a result")
	}
	return env.Result, nil
}
