// Package servertest starts the real ome-selector server (the Python service, from the
// repository's .venv) for Go tests, on 127.0.0.1 or a unix socket. A missing server binary fails
// the test with the command that builds it; it never skips.
package servertest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout is how long Start waits for the server's `listening on ADDR` log line.
const StartTimeout = 60 * time.Second

var listening = regexp.MustCompile(`listening on ([^\s"]+)`)

// Root is the repository root (client/go/internal/servertest/../../../..).
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("servertest: no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
}

// Shared is ../shared beside the repository (the specification and the OME catalog), or
// $OME_SELECTOR_SHARED.
func Shared(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("OME_SELECTOR_SHARED")
	if dir == "" {
		dir = filepath.Join(Root(), "..", "shared")
	}
	if st, err := os.Stat(filepath.Join(dir, "ome-catalog")); err != nil || !st.IsDir() {
		t.Fatalf("%s/ome-catalog is missing: the shared data must sit next to the repository (or set OME_SELECTOR_SHARED)", dir)
	}
	return dir
}

// CatalogManifests are the --manifests of OME's catalog runtimes and the test cluster
// (ome-cluster/README.md: `--manifests ../shared/ome-catalog/runtimes ../shared/ome-cluster`).
func CatalogManifests(t testing.TB) []string {
	shared := Shared(t)
	return []string{filepath.Join(shared, "ome-catalog", "runtimes"), filepath.Join(shared, "ome-cluster")}
}

// Binary is the ome-selector command of the repository's .venv, or $OME_SELECTOR_BIN.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("OME_SELECTOR_BIN")
	if bin == "" {
		bin = filepath.Join(Root(), ".venv", "bin", "ome-selector")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: build the Python service first, at the repository root: "+
			"python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' (or set OME_SELECTOR_BIN)", bin)
	}
	return bin
}

// Python is the .venv's python (for the Python client's reference values).
func Python(t testing.TB) string {
	t.Helper()
	py := filepath.Join(filepath.Dir(Binary(t)), "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s is missing next to the server binary", py)
	}
	return py
}

// Server is a running `ome-selector serve`.
type Server struct {
	// Address is the gRPC target it listens on (`127.0.0.1:PORT` or `unix:/path`).
	Address string
	cmd     *exec.Cmd
	mu      sync.Mutex
	lines   []string
	done    chan struct{}
}

// Start runs `ome-selector serve --listen 127.0.0.1:0 ARGS...` and waits until it listens.
// The server is stopped when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return StartAt(t, "127.0.0.1:0", args...)
}

// StartAt is Start with another --listen (127.0.0.1:PORT or unix:/path only).
func StartAt(t testing.TB, listen string, args ...string) *Server {
	t.Helper()
	if !strings.HasPrefix(listen, "127.0.0.1:") && !strings.HasPrefix(listen, "unix:") {
		t.Fatalf("test servers listen on 127.0.0.1 or a unix socket only, not %q", listen)
	}
	cmd := exec.Command(Binary(t), append([]string{"serve", "--listen", listen, "--log-format", "text"}, args...)...)
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	// The server ends with the test binary too (a timed-out test runs no cleanups).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd, err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(s.Stop)
	select {
	case s.Address = <-found:
		return s
	case <-s.done:
		_ = cmd.Wait()
		t.Fatalf("server exited (%v) before listening:\n%s", cmd.ProcessState, strings.Join(s.Lines(), "\n"))
	case <-time.After(StartTimeout):
		t.Fatalf("server did not listen within %s:\n%s", StartTimeout, strings.Join(s.Lines(), "\n"))
	}
	return nil
}

// Lines are the server's stderr lines so far.
func (s *Server) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// Log is the last n stderr lines, for failure messages.
func (s *Server) Log(n int) string {
	lines := s.Lines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop sends SIGTERM and waits (SIGKILL after 15 s). Safe to call twice.
func (s *Server) Stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { <-s.done; _ = s.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-exited
	}
}
