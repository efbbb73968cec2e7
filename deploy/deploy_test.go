// Package deploy_test checks the packaging examples: the static build the
// Dockerfile runs, the example configuration, the systemd unit and the
// Prometheus rules. Docker itself cannot run on the CI machines.
package deploy_test

import (
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
)

// exampleKeys are the YAML keys the adapter reads, in the example's order.
var exampleKeys = []string{"host", "port", "allowed-hosts", "cors-origins", "a2a-url", "demo", "state-dir", "idle-shutdown", "debug", "log-format", "compat", "a2a-profile", "log-stdout", "auth-token", "a2a-token", "state-store", "redis-key-prefix", "redis-password", "advertise-url", "lease-ttl", "replica-urls", "replica-token", "stream-write-timeout"}

func TestExampleConfigListsEveryKeyWithItsDefault(t *testing.T) {
	raw, err := os.ReadFile("config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	m := doc.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
		if m.Content[i].HeadComment == "" {
			t.Errorf("key %s has no comment", m.Content[i].Value)
		}
	}
	if !reflect.DeepEqual(keys, exampleKeys) {
		t.Fatalf("keys = %v, want %v", keys, exampleKeys)
	}
	// Every key the help text documents is in the example.
	usage := config.Usage()
	keysLine := usage[strings.Index(usage, "\nKeys: ")+7:]
	keysLine = keysLine[:strings.Index(keysLine, "\n\n")]
	documented := regexp.MustCompile(`([a-z0-9]+(?:-[a-z0-9]+)*)(?:/[a-z_0-9]+)?\s+\(`).FindAllStringSubmatch(keysLine, -1)
	if len(documented) != len(exampleKeys) {
		t.Fatalf("found only %d keys in the help's Keys: paragraph", len(documented))
	}
	for _, k := range documented {
		if !contains(keys, k[1]) {
			t.Errorf("help documents %s; the example lacks it", k[1])
		}
	}
	env := map[string]string{"HOME": "/home/op"}
	getenv := func(k string) string { return env[k] }
	got, err := config.Load([]string{"--config", "config.example.yaml"}, getenv)
	if err != nil {
		t.Fatalf("the example is refused: %v", err)
	}
	want, err := config.Load(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	got.ConfigPath = ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the example's values are not the defaults:\n got %+v\nwant %+v", got, want)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// buildStatic runs deploy/build.sh, the Dockerfile's build command.
func buildStatic(t *testing.T, version, commit string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "iac-code-agui")
	cmd := exec.Command("sh", "deploy/build.sh", bin, version, commit)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func TestDockerfileUsesTheTestedBuild(t *testing.T) {
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	for _, want := range []string{
		"CGO_ENABLED=0 go build -trimpath",
		"internal/buildinfo.version=${VERSION}", "internal/buildinfo.commit=${COMMIT}",
		"FROM gcr.io/distroless/static-debian12:nonroot", "USER 65532:65532",
		`VOLUME ["/var/lib/iac-code-agui"]`, "IAC_CODE_AGUI_STATE_DIR=/var/lib/iac-code-agui",
		`CMD ["/usr/local/bin/iac-code-agui", "healthcheck"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	sh, _ := os.ReadFile("build.sh")
	if !strings.Contains(string(sh), `CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X $pkg.version=$version -X $pkg.commit=$commit"`) {
		t.Error("build.sh and the Dockerfile differ")
	}
}

// TestStaticBuild builds the release binary as the image does, checks that
// it is static and stamped, and serves with the example configuration.
func TestStaticBuild(t *testing.T) {
	bin := buildStatic(t, "9.8.7", "abc1234")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has a dynamic loader (PT_INTERP): not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary needs %v", libs)
	}
	f.Close()
	out, err := exec.Command(bin, "version").Output()
	if want := fmt.Sprintf("iac-code-agui 9.8.7 (commit abc1234, %s %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH); err != nil || string(out) != want {
		t.Fatalf("version = %q (%v), want %q", out, err, want)
	}

	// The example configuration starts the static binary; --port and
	// --state-dir win over it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	srv := exec.Command(bin, "--config", "config.example.yaml", "--demo", "--port", port, "--state-dir", t.TempDir())
	srv.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()}
	var logs strings.Builder
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	}()
	var probe []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		hc := exec.Command(bin, "healthcheck")
		hc.Env = []string{"IAC_CODE_AGUI_PORT=" + port}
		if probe, err = hc.Output(); err == nil {
			break
		}
	}
	if err != nil || string(probe) != "ok 9.8.7\n" {
		t.Fatalf("healthcheck = %q (%v); server log:\n%s", probe, err, logs.String())
	}
}

func TestPrometheusRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing; .ci/run installs Debian's prometheus package")
		}
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", "prometheus/alerts.yml"}, {"test", "rules", "prometheus/alerts_test.yml"}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	raw, err := os.ReadFile("systemd/iac-code-agui.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify wants ExecStart to exist: point it at a real build.
	bin := buildStatic(t, "", "")
	unit := strings.Replace(string(raw), "ExecStart=/usr/local/bin/iac-code-agui", "ExecStart="+bin, 1)
	path := filepath.Join(t.TempDir(), "iac-code-agui.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=iac-code-agui", "ProtectSystem=strict", "NoNewPrivileges=yes"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %s", want)
		}
	}
}
