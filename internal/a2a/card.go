package a2a

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"time"
)

// AgentCardPath is where an A2A agent serves its card, relative to its
// base URL.
const AgentCardPath = ".well-known/agent-card.json"

// cardTimeout bounds one reading of the agent card: a call waiting for the
// card holds every other call's first use.
const cardTimeout = 10 * time.Second

// WithAgentCard makes the client read the agent card at the base URL's
// /.well-known/agent-card.json on its first JSON-RPC call and post every
// JSON-RPC request to the card's JSON-RPC interface URL instead of the base
// URL (the generic profile: SDK agents often serve JSON-RPC on a path of
// their own). A card that cannot be read or names no JSON-RPC interface
// fails the call; the next call reads it again.
func WithAgentCard() Option {
	return func(c *Client) { c.card = &cardEndpoint{} }
}

// cardEndpoint caches the JSON-RPC URL read from the card.
type cardEndpoint struct {
	mu  sync.Mutex
	url string
}

// endpoint returns the URL JSON-RPC requests are posted to.
func (c *Client) endpoint(ctx context.Context) (string, error) {
	if c.card == nil {
		return c.base, nil
	}
	c.card.mu.Lock()
	defer c.card.mu.Unlock()
	if c.card.url != "" {
		return c.card.url, nil
	}
	cctx, cancel := context.WithTimeout(ctx, cardTimeout)
	defer cancel()
	cardURL := c.base + AgentCardPath
	cl, err := c.do(cctx, "GET", cardURL, nil, false)
	if err != nil {
		return "", err
	}
	b, err := c.readAll(cl)
	cl.done()
	if err != nil {
		return "", err
	}
	u, err := JSONRPCURL(cardURL, b)
	if err != nil {
		return "", err
	}
	c.card.url = u
	return u, nil
}

// JSONRPCURL returns the JSON-RPC interface URL of an agent card read from
// cardURL. Only the members naming interfaces are read, leniently, because
// SDKs serialise the rest of a card differently: A2A 1.0
// supportedInterfaces[] with protocolBinding "JSONRPC" (an interface whose
// protocolVersion is 1.x wins over one naming another version), then the
// 0.3 shapes (additionalInterfaces[] with transport "JSONRPC", and the
// top-level url when preferredTransport is JSONRPC or absent). A relative
// URL is resolved against cardURL.
func JSONRPCURL(cardURL string, card []byte) (string, error) {
	var doc map[string]any
	if err := json.Unmarshal(card, &doc); err != nil {
		return "", protocolError("the agent card is not a JSON object")
	}
	var found, other string
	for _, list := range [...]string{"supportedInterfaces", "additionalInterfaces"} {
		items, _ := doc[list].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			u, _ := m["url"].(string)
			binding, _ := m["protocolBinding"].(string)
			if binding == "" {
				binding, _ = m["transport"].(string)
			}
			if u == "" || !isJSONRPC(binding) {
				continue
			}
			v, _ := m["protocolVersion"].(string)
			switch {
			case v == "" || strings.HasPrefix(v, "1."):
				if found == "" {
					found = u
				}
			case other == "":
				other = u
			}
		}
		if found != "" {
			break
		}
	}
	if found == "" {
		found = other
	}
	if found == "" {
		if u, _ := doc["url"].(string); u != "" {
			if t, _ := doc["preferredTransport"].(string); t == "" || isJSONRPC(t) {
				found = u
			}
		}
	}
	if found == "" {
		return "", protocolError("the agent card names no JSON-RPC interface")
	}
	base, err := url.Parse(cardURL)
	if err != nil {
		return "", protocolError("bad agent card URL")
	}
	ref, err := url.Parse(found)
	if err != nil {
		return "", protocolError("the agent card's JSON-RPC URL is not a URL")
	}
	abs := base.ResolveReference(ref)
	if abs.Scheme != "http" && abs.Scheme != "https" {
		return "", protocolError("the agent card's JSON-RPC URL is not http(s)")
	}
	return abs.String(), nil
}

// isJSONRPC reads a binding or transport name: "JSONRPC", in any case,
// with or without a dash or underscore.
func isJSONRPC(s string) bool {
	s = strings.NewReplacer("-", "", "_", "").Replace(strings.ToUpper(strings.TrimSpace(s)))
	return s == "JSONRPC"
}
