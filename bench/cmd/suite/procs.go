package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
)

// proc is one child process of the suite, logging to a file in the work
// directory and killed (with its process group) when the suite is done.
type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
}

func (e *env) start(name string, cmd *exec.Cmd) (*proc, error) {
	logf, err := os.Create(filepath.Join(e.work, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group (stop kills the whole tree), and killed with the
	// suite if it dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd}
	e.procs = append(e.procs, p)
	go func() { _ = cmd.Wait(); _ = logf.Close() }()
	return p, nil
}

// stop kills p and its children and waits a moment for the exit.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	for range 100 {
		if syscall.Kill(p.cmd.Process.Pid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// upstream starts the fake A2A server (this binary with -role upstream).
func (e *env) upstream(name string, deltas int, stall bool) (*proc, error) {
	return e.upstreamEnding(name, deltas, stall, "")
}

// upstreamEnding is upstream whose turns end in the state end ("" for
// iac-code's INPUT_REQUIRED).
func (e *env) upstreamEnding(name string, deltas int, stall bool, end string) (*proc, error) {
	port, err := suite.FreePort()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-role", "upstream", "-port", strconv.Itoa(port), "-deltas", strconv.Itoa(deltas)}
	if stall {
		args = append(args, "-stall")
	}
	if end != "" {
		args = append(args, "-end", end)
	}
	p, err := e.start(name, exec.Command(self, args...))
	if err != nil {
		return nil, err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if _, err := suite.WaitHTTP(p.url+"/.well-known/agent.json", 20*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// adapterOpts selects the adapter process's upstream and store.
type adapterOpts struct {
	upstream string
	stateDir string
	redis    string // redis:// URL, or "" for the file store
	generic  bool   // --a2a-profile generic
}

// adapter starts the real iac-code-agui binary. ready is how long it took
// to answer /health.
func (e *env) adapter(name string, o adapterOpts) (p *proc, ready time.Duration, err error) {
	port, err := suite.FreePort()
	if err != nil {
		return nil, 0, err
	}
	args := []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--a2a-url", o.upstream, "--state-dir", o.stateDir}
	if o.redis != "" {
		args = append(args, "--state-store", o.redis)
	}
	if o.generic {
		args = append(args, "--a2a-profile", "generic")
	}
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.work
	cmd.Env = append(os.Environ(), "IAC_CODE_AGUI_ALLOWED_CWDS="+e.workspace)
	start := time.Now()
	p, err = e.start(name, cmd)
	if err != nil {
		return nil, 0, err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if _, err := suite.WaitHTTP(p.url+"/health", 60*time.Second); err != nil {
		return nil, 0, err
	}
	return p, time.Since(start), nil
}

// peer starts the TypeScript peer (bench/peer/server.mjs) on upstream.
func (e *env) peer(name, upstream string) (*proc, error) {
	if e.peerDir == "" {
		return nil, nil
	}
	port, err := suite.FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(e.peerDir, "server.mjs"), upstream, strconv.Itoa(port))
	cmd.Dir = e.peerDir
	p, err := e.start(name, cmd)
	if err != nil {
		return nil, err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if _, err := suite.WaitHTTP(p.url+"/", 30*time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

// redis starts a redis-server on loopback with AOF fsync every second
// (as redistest does), or returns "" when none is installed.
func (e *env) redis() (string, *proc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, nil
	}
	port, err := suite.FreePort()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp(e.base, "redis-")
	if err != nil {
		return "", nil, err
	}
	p, err := e.start("redis", exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--appendonly", "yes", "--appendfsync", "everysec", "--dir", dir, "--save", ""))
	if err != nil {
		return "", nil, err
	}
	for range 500 {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 50*time.Millisecond); err == nil {
			_ = c.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", port), p, nil
}
