package a2a

import (
	"net"
	"net/http"
	"time"
)

// The default HTTP client: every upstream call, streaming or unary, plain
// HTTP or HTTPS, goes through one net/http Transport.
const (
	// The adapter has one upstream host, and each concurrent run holds a
	// connection for its stream and borrows one for every unary call
	// (CancelTask, GetTask, the side routes). The idle pool is sized for a
	// thousand concurrent runs, so that a new round of runs reuses the last
	// round's connections instead of dialling for most of them.
	maxIdleConns    = 1024
	idleConnTimeout = 90 * time.Second
	// The read buffer bounds how many of the upstream's one-chunk frames
	// one read brings in a burst; the write buffer only carries the
	// request head and then sits idle for the whole stream (a larger body,
	// an inline image, is written through it in pieces).
	readBufferSize  = 1 << 10
	writeBufferSize = 1 << 10
)

// newHTTPClient has no Timeout and the Transport no response-header
// timeout: a stream lasts hours, and the upstream answers a streaming
// call's head only with its first event, which may be slow to come. The
// idle watchdog (WithIdleTimeout) bounds every wait instead, for the head
// as for each byte of the body. Redirects are not followed: a JSON-RPC POST
// turned into a GET cannot succeed, so a 3xx is reported as an *HTTPError.
func newHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: dialTimeout,
			MaxIdleConns:        maxIdleConns,
			MaxIdleConnsPerHost: maxIdleConns,
			IdleConnTimeout:     idleConnTimeout,
			// Compression would make the server buffer SSE frames.
			DisableCompression: true,
			ForceAttemptHTTP2:  true,
			ReadBufferSize:     readBufferSize,
			WriteBufferSize:    writeBufferSize,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
