package cluster

import (
	"bytes"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"
)

// ReplicaHeader carries the replicas' shared token on a forwarded request.
const ReplicaHeader = "X-Iac-Code-Agui-Replica"

// forwardedHeaders are the request headers a forwarded request keeps: the
// client's credentials and preferences, nothing else.
var forwardedHeaders = []string{"Authorization", "Content-Type", "Accept", "Accept-Language", "X-Request-Id"}

// relayedHeaders are the response headers relayed back to the client.
var relayedHeaders = []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", "Retry-After", "X-Request-Id", "Connection"}

// forwardClient has no overall timeout (an SSE stream lasts as long as its
// run) but bounds the dial and the wait for the owner's headers, which
// come right after admission.
var forwardClient = &http.Client{Transport: &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	ResponseHeaderTimeout: 30 * time.Second,
	MaxIdleConnsPerHost:   64,
}}

// Forwarded reports whether r came from another replica with the shared
// token.
func (c *Cluster) Forwarded(r *http.Request) bool {
	got := r.Header.Get(ReplicaHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(c.o.Token)) == 1
}

// Forward sends r, whose body was already read, to the owner and relays
// the answer as it arrives, flushing after every read so that SSE events
// and heartbeats pass at once. An error means the owner could not be
// reached and nothing was written: the caller answers it.
func (c *Cluster) Forward(w http.ResponseWriter, r *http.Request, body []byte, owner Owner) error {
	target := strings.TrimSuffix(owner.URL, "/") + r.URL.RequestURI()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range forwardedHeaders {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set(ReplicaHeader, c.o.Token)
	res, err := forwardClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	for _, h := range relayedHeaders {
		if v := res.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client left; the request context ends the owner's side
			}
			_ = rc.Flush()
		}
		if err != nil {
			return nil
		}
	}
}
