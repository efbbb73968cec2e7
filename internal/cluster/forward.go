package cluster

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// ReplicaHeader carries the replicas' shared token on a forwarded request.
const ReplicaHeader = "X-Iac-Code-Agui-Replica"

// ErrOwnerNotAllowed is Forward's answer for an owner whose URL is not one
// the operator configured (Options.ReplicaURLs): nothing is sent to it.
var ErrOwnerNotAllowed = errors.New("cluster: the owner's URL is not a configured replica URL")

// forwardedHeaders are the request headers a forwarded request keeps: the
// client's credentials and preferences, nothing else.
var forwardedHeaders = []string{"Authorization", "Content-Type", "Accept", "Accept-Language", "X-Request-Id"}

// forwardTransport has no overall timeout (an SSE stream lasts as long as
// its run) but bounds the dial and the wait for the owner's headers,
// which come right after admission.
var forwardTransport = &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	ResponseHeaderTimeout: 30 * time.Second,
	MaxIdleConnsPerHost:   64,
}

// normalURL is the form in which replica URLs are compared: scheme and
// host in lower case, one trailing slash.
func normalURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.Path, "/") + "/"
}

// Allowed reports whether requests may be forwarded to an owner URL.
func (c *Cluster) Allowed(ownerURL string) bool {
	n := normalURL(ownerURL)
	return n != "" && c.allowed[n]
}

// Forwarded reports whether r came from another replica with the shared
// token.
func (c *Cluster) Forwarded(r *http.Request) bool {
	got := r.Header.Get(ReplicaHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(c.o.Token)) == 1
}

// Forward sends r, whose body was already read, to the owner with
// httputil.ReverseProxy, which drops hop-by-hop headers both ways and
// flushes an SSE answer as it arrives. Only a configured replica URL is
// ever contacted. An error means the owner was not allowed or could not
// be reached and nothing was written: the caller answers it.
func (c *Cluster) Forward(w http.ResponseWriter, r *http.Request, body []byte, owner Owner) (err error) {
	if !c.Allowed(owner.URL) {
		return ErrOwnerNotAllowed
	}
	target, perr := url.Parse(owner.URL)
	if perr != nil {
		return ErrOwnerNotAllowed
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			in := pr.Out.Header
			pr.Out.Header = make(http.Header, len(forwardedHeaders)+1)
			for _, h := range forwardedHeaders {
				if v := in.Get(h); v != "" {
					pr.Out.Header.Set(h, v)
				}
			}
			pr.Out.Header.Set(ReplicaHeader, c.o.Token)
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			pr.Out.ContentLength = int64(len(body))
			pr.Out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		},
		Transport: c.forward,
		ErrorLog:  slog.NewLogLogger(c.o.Logger.Handler(), slog.LevelWarn),
		ErrorHandler: func(_ http.ResponseWriter, _ *http.Request, e error) {
			err = fmt.Errorf("cluster: the owner did not answer: %w", e)
		},
	}
	defer func() {
		// ReverseProxy aborts the handler when the answer breaks midway
		// (the client or the owner went away): the stream is over either
		// way, and the request's own accounting must still run.
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			panic(v)
		}
	}()
	proxy.ServeHTTP(w, r)
	return err
}
