// Command suite runs the whole performance suite of docs/benchmarks.md side
// by side in separate processes on loopback, and prints the table:
//
//	go run ./bench/cmd/suite
//
// It builds the real iac-code-agui binary, starts fake A2A upstreams
// (bench/suite.Upstream, this binary with -role upstream), the binary in
// front of them with its state on the disk under -dir, the TypeScript peer
// @ag-ui/a2a 0.0.6 (bench/peer, when node and npm are installed) and a
// redis-server (when installed), and drives them from this process. Every
// load is bounded in count and time and stays on 127.0.0.1. It is not part
// of `go test`.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
)

// config is the suite's flags.
type config struct {
	rounds     int
	runs       int
	deltas     int
	oneDeltas  int
	turns      int
	streams    int
	history    int
	only       string
	dir        string
	bin        string
	noPeer     bool
	noRedis    bool
	keep       bool
	settle     time.Duration
	roleDeltas int
	rolePort   int
	roleStall  bool
	roleEnd    string
}

// env is one invocation's shared state.
type env struct {
	cfg       config
	base      string // everything the suite writes (on -dir's file system)
	work      string // logs, the binary, the workspace
	workspace string
	bin       string
	peerDir   string
	procs     []*proc
	table     *table
}

func main() {
	var cfg config
	var role string
	flag.StringVar(&role, "role", "", "internal: run as a child (upstream)")
	flag.IntVar(&cfg.rolePort, "port", 0, "internal: the child's port")
	flag.IntVar(&cfg.roleDeltas, "deltas", 200, "internal: text deltas per upstream turn")
	flag.BoolVar(&cfg.roleStall, "stall", false, "internal: hold every upstream turn open")
	flag.StringVar(&cfg.roleEnd, "end", "", "internal: the state that ends every upstream turn (completed: a generic agent's)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per measurement (the table shows medians)")
	flag.IntVar(&cfg.runs, "runs", 1000, "(a) concurrent runs")
	flag.IntVar(&cfg.deltas, "run-deltas", 200, "(a) text deltas per run")
	flag.IntVar(&cfg.oneDeltas, "one-deltas", 100000, "(d) text deltas of the single run")
	flag.IntVar(&cfg.turns, "turns", 100, "(b) sequential runs timed")
	flag.IntVar(&cfg.streams, "streams", 10000, "(c) concurrent open streams")
	flag.IntVar(&cfg.history, "history", 100000, "(f) thread files and distinct threads")
	flag.StringVar(&cfg.only, "only", "a,b,c,d,f,g", "sections to run (a,b,c,d,f,g; the peer (e) is a column of a, b, d, g)")
	flag.StringVar(&cfg.dir, "dir", "", "parent of the state directories (default: the user cache directory, where state normally lives; it must be on the disk)")
	flag.StringVar(&cfg.bin, "bin", "", "an iac-code-agui binary to measure instead of building ./cmd/iac-code-agui (to compare two versions)")
	flag.BoolVar(&cfg.noPeer, "no-peer", false, "skip the TypeScript peer")
	flag.BoolVar(&cfg.noRedis, "no-redis", false, "skip the Redis store rows")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work directory (logs, state)")
	flag.DurationVar(&cfg.settle, "settle", 3*time.Minute, "(a) wait up to this long for a file create in the state directories to cost under 100 µs again (a run right after another creates its files among the inodes the other's clean-up freed); 0: do not wait")
	flag.Parse()
	if role == "upstream" {
		serveUpstream(cfg)
		return
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

func serveUpstream(cfg config) {
	u := &suite.Upstream{Deltas: cfg.roleDeltas, Stall: cfg.roleStall, End: cfg.roleEnd, BaseURL: fmt.Sprintf("http://127.0.0.1:%d", cfg.rolePort)}
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", cfg.rolePort), Handler: u, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(os.Stderr, srv.ListenAndServe())
	os.Exit(1)
}

func run(cfg config) error {
	raiseFileLimit()
	e := &env{cfg: cfg, table: &table{}}
	var err error
	if cfg.dir == "" {
		// Not the temp dir: on the machine of docs/benchmarks.md, /tmp's
		// ext4 block group makes every file creation 30 times slower
		// than anywhere else on the same disk.
		if cfg.dir, err = os.UserCacheDir(); err != nil {
			return err
		}
		if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
			return err
		}
	}
	if e.base, err = os.MkdirTemp(cfg.dir, "iac-code-agui-suite-"); err != nil {
		return err
	}
	defer func() {
		for _, p := range e.procs {
			p.stop()
		}
		if !cfg.keep {
			_ = os.RemoveAll(e.base)
		} else {
			fmt.Println("work directory kept:", e.base)
		}
	}()
	// Ctrl-C or a timeout: stop the children (their own process groups
	// do not get the terminal's signal) before leaving.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		for _, p := range e.procs {
			p.stop()
		}
		os.Exit(130)
	}()
	e.work = filepath.Join(e.base, "work")
	e.workspace = filepath.Join(e.work, "ws")
	if err := os.MkdirAll(e.workspace, 0o700); err != nil {
		return err
	}
	e.bin = filepath.Join(e.work, "iac-code-agui")
	if cfg.bin != "" {
		if e.bin, err = filepath.Abs(cfg.bin); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(os.Stderr, "building the binary…")
		if out, err := exec.Command("go", "build", "-o", e.bin, "./cmd/iac-code-agui").CombinedOutput(); err != nil {
			return fmt.Errorf("go build (run the suite from the repository root): %w\n%s", err, out)
		}
	}
	if !cfg.noPeer {
		e.peerDir = preparePeer()
	}
	fmt.Println(machine(e.base))
	sections := map[string]func() error{"a": e.sectionA, "b": e.sectionB, "c": e.sectionC, "d": e.sectionD, "f": e.sectionF, "g": e.sectionG}
	for _, s := range strings.Split(cfg.only, ",") {
		fn, ok := sections[strings.TrimSpace(s)]
		if !ok {
			return fmt.Errorf("unknown section %q", s)
		}
		if err := fn(); err != nil {
			e.table.print()
			return fmt.Errorf("section %s: %w", s, err)
		}
		e.stopAll()
	}
	e.table.print()
	return nil
}

// stopAll ends every child between sections, so one section's processes
// never compete with the next one's.
func (e *env) stopAll() {
	for _, p := range e.procs {
		p.stop()
	}
	e.procs = nil
}

// preparePeer installs bench/peer's pinned packages when needed and
// returns its directory, or "" (with a note) when it cannot be run.
func preparePeer() string {
	dir, err := filepath.Abs(filepath.Join("bench", "peer"))
	if err != nil {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		fmt.Fprintln(os.Stderr, "no node: the peer column is left out")
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "a2a")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "npm ci in bench/peer failed, the peer column is left out: %v\n%s", err, out)
			return ""
		}
	}
	return dir
}

// raiseFileLimit lifts RLIMIT_NOFILE for the 10,000-stream test: the
// adapter holds two sockets per stream, and children inherit the limit.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return
	}
	want := uint64(65536)
	if l.Max < want {
		l.Max = want // allowed for root; harmless to fail otherwise
	}
	l.Cur = l.Max
	if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// machine describes where the suite runs.
func machine(base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine: %d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if m, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(m), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				fmt.Fprintf(&b, ", %s", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")))
				break
			}
		}
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "\nload average at start: %s", strings.Join(strings.Fields(string(la))[:3], " "))
	}
	var st syscall.Statfs_t
	if syscall.Statfs(base, &st) == nil {
		fs := fmt.Sprintf("0x%x", st.Type)
		switch st.Type {
		case 0xef53:
			fs = "ext4"
		case 0x01021994:
			fs = "tmpfs (NOT a disk: durable-write figures mean nothing)"
		case 0x58465342:
			fs = "xfs"
		case 0x9123683e:
			fs = "btrfs"
		}
		fmt.Fprintf(&b, "\nstate directories under %s (%s)", base, fs)
	}
	return b.String()
}
