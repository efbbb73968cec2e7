package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/metrics"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

var (
	benchStreams   = flag.Int("streams", 1000, "open streams in BenchmarkOpenStreams")
	streamsHold    = flag.Duration("streams-hold", 0, "how long BenchmarkOpenStreams holds the streams open before measuring (16s sees a heartbeat)")
	streamsProfile = flag.String("streams-profile", "", "prefix of the heap and goroutine profiles BenchmarkOpenStreams writes while the streams are open")
)

// childEnv makes the test binary the helper process of BenchmarkOpenStreams.
const childEnv = "BENCH_OPEN_STREAMS_CHILD"

// BenchmarkOpenStreams is the in-process twin of the suite's section (c),
// for profiles: -streams runs on a stalled upstream, held open. The fake
// upstream and the clients live in a child process (this test binary
// again), so this process holds only the adapter and its HTTP server, and
// its heap and goroutine profiles show the adapter's cost per stream:
//
//	go test ./bench -run '^$' -bench OpenStreams -benchtime 1x -streams 2000 -streams-profile /tmp/streams
//
// writes /tmp/streams.heap (in use, sampled every 4 KiB) and
// /tmp/streams.goroutine. Reported per stream: heap and stack in use and
// goroutines while open (after a GC), and what stays after they closed.
func BenchmarkOpenStreams(b *testing.B) {
	n := *benchStreams
	runtime.MemProfileRate = 4 << 10
	child := startStreamsChild(b)
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := metrics.New()
	ad := adapter.New(adapter.Options{
		Store:        filestore.New(b.TempDir()),
		Upstream:     adapter.A2A(a2a.New(child.upstream, "")),
		AllowedRoots: request.AllowedRoots([]string{root}),
		Logger:       logger,
		Observer:     m,
	})
	h := server.New(server.Options{Adapter: ad, Version: "bench", Logger: logger, Metrics: m})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := server.NewHTTPServer("", h, server.Timeouts{})
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })

	for i := 0; b.Loop(); i++ {
		base := snapshot()
		child.send(fmt.Sprintf("open http://%s/ %d %s s%d", ln.Addr(), n, ws, i))
		if got := child.recv(b, "opened"); got != strconv.Itoa(n) {
			b.Fatalf("only %s of %d streams opened", got, n)
		}
		time.Sleep(*streamsHold)
		open := snapshot()
		if p := *streamsProfile; p != "" {
			writeProfile(b, p+".heap", "heap")
			writeProfile(b, p+".goroutine", "goroutine")
		}
		child.send("close")
		if got := child.recv(b, "closed"); !strings.HasPrefix(got, strconv.Itoa(n)+" ") {
			b.Fatalf("streams ended cleanly / with a heartbeat: %s of %d", got, n)
		}
		// What the runs left behind once they settled: the thread
		// cache and the idle upstream connections (snapshot collects
		// twice, which empties sync.Pool). A fixed wait, as this is a
		// measurement, not a test: the runs end within it.
		time.Sleep(10 * time.Second)
		after := snapshot()
		if p := *streamsProfile; p != "" {
			writeProfile(b, p+".after.heap", "heap")
		}
		per := func(v, w uint64) float64 { return (float64(v) - float64(w)) / float64(n) / 1024 }
		b.ReportMetric(per(open.heap, base.heap), "heap-KiB/stream")
		b.ReportMetric(per(open.stack, base.stack), "stack-KiB/stream")
		b.ReportMetric(float64(open.goroutines-base.goroutines)/float64(n), "goroutines/stream")
		b.ReportMetric(per(after.heap, base.heap), "heap-after-KiB/stream")
		b.ReportMetric(float64(after.goroutines-base.goroutines), "goroutines-after")
	}
}

type memSnapshot struct {
	heap, stack uint64
	goroutines  int
}

// snapshot collects first, so that garbage does not count as in use.
func snapshot() memSnapshot {
	runtime.GC()
	runtime.GC() // sync.Pool keeps what the first one finds for one more
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnapshot{heap: ms.HeapInuse, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

func writeProfile(b *testing.B, path, name string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// streamsChild is the helper process: it prints the stalled upstream's
// URL, then answers "open <url> <n> <workspace> <prefix>" with
// "opened <k>" once k streams got their first frame, and "close" with
// "closed <clean> <heartbeats>" once they ended.
type streamsChild struct {
	upstream string
	in       io.Writer
	out      *bufio.Reader
}

func startStreamsChild(b *testing.B) *streamsChild {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenStreamsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	c := &streamsChild{in: in, out: bufio.NewReader(out)}
	c.upstream = c.recv(b, "upstream")
	return c
}

func (c *streamsChild) send(line string) { _, _ = io.WriteString(c.in, line+"\n") }

// recv returns the rest of the next line that starts with word.
func (c *streamsChild) recv(b *testing.B, word string) string {
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			b.Fatalf("helper process: %v", err)
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), word+" "); ok {
			return rest
		}
	}
}

// TestOpenStreamsChild is BenchmarkOpenStreams' helper process; it does
// nothing in a normal test run.
func TestOpenStreamsChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("helper process of BenchmarkOpenStreams")
	}
	up := &suite.Upstream{Stall: true}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = http.Serve(ln, up) }()
	fmt.Printf("upstream http://%s/\n", ln.Addr())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "open" {
			continue
		}
		n, _ := strconv.Atoi(f[2])
		target := suite.Target{URL: f[1], Workspace: f[3]}
		hc := suite.NewHTTPClient(n)
		ctx, cancel := context.WithCancel(context.Background())
		var opened, done sync.WaitGroup
		var started, clean, beats atomic.Int64
		opened.Add(n)
		sem := make(chan struct{}, 256)
		for i := range n {
			sem <- struct{}{}
			done.Go(func() {
				once := sync.OnceFunc(func() { started.Add(1); <-sem; opened.Done() })
				r := target.Run(ctx, hc, fmt.Sprintf("%s-%d-%d", f[4], time.Now().UnixNano(), i), once)
				once()
				if r.Err == nil {
					clean.Add(1)
				} else {
					fmt.Fprintln(os.Stderr, "stream:", r.Err)
				}
				if r.Heartbeats > 0 {
					beats.Add(1)
				}
			})
		}
		opened.Wait()
		fmt.Printf("opened %d\n", started.Load())
		for sc.Scan() && sc.Text() != "close" {
		}
		cancel()
		done.Wait()
		hc.CloseIdleConnections()
		fmt.Printf("closed %d %d\n", clean.Load(), beats.Load())
	}
}
