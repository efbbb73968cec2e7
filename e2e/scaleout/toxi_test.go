package scaleout

import (
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/gorilla/mux"
	"github.com/rs/zerolog"
)

// toxi is a toxiproxy server in the test process, driven through its own
// Go client over its HTTP API.
type toxi struct {
	server *toxiproxy.ApiServer
	api    *httptest.Server
	client *toxiclient.Client
}

// startToxiproxy starts toxiproxy's API server on a free loopback port.
// ApiServer.Listen can neither be stopped nor report the port it bound,
// so its routes (the ones this suite uses, as Listen registers them) are
// served here by an httptest server. When the test ends every proxy is
// stopped and the test waits until none of toxiproxy's goroutines is left.
func startToxiproxy(t testing.TB) *toxi {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	r := mux.NewRouter()
	r.HandleFunc("/reset", srv.ResetState).Methods("POST")
	r.HandleFunc("/proxies", srv.ProxyIndex).Methods("GET")
	r.HandleFunc("/proxies", srv.ProxyCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", srv.ProxyShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}", srv.ProxyUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", srv.ProxyDelete).Methods("DELETE")
	r.HandleFunc("/proxies/{proxy}/toxics", srv.ToxicIndex).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics", srv.ToxicCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", srv.ToxicShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", srv.ToxicUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", srv.ToxicDelete).Methods("DELETE")
	api := httptest.NewServer(r)
	x := &toxi{server: srv, api: api, client: toxiclient.NewClient(api.URL)}
	t.Cleanup(func() {
		api.Close()
		_ = srv.Collection.Clear()
		waitGoroutinesGone(t, "github.com/Shopify/toxiproxy/", 10*time.Second)
	})
	return x
}

// proxy creates a proxy from a free loopback port to upstream (host:port)
// and returns it with the address it listens on.
func (x *toxi) proxy(t testing.TB, name, upstream string) *toxiclient.Proxy {
	t.Helper()
	p, err := x.client.CreateProxy(name, "127.0.0.1:0", upstream)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitGoroutinesGone polls until no goroutine of this process runs code
// whose frames name pkg.
func waitGoroutinesGone(t testing.TB, pkg string, within time.Duration) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(within)
	for {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), pkg) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines of %s still running after %v", pkg, within)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
