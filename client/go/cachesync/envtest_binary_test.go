//go:build envtest

package cachesync_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The ome-selector-sync binary with --kubeconfig fills the service; its /readyz turns 200 after
// the first snapshot and its /metrics carries the sync metrics.
func TestOmeSelectorSyncBinary(t *testing.T) {
	k := sharedKube(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "ome-selector-sync")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ome-selector-sync")
	build.Dir = filepath.Join(servertest.Root(), "client", "go")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// An admin user of the test API server, written out as a kubeconfig file.
	admin, err := k.env.AddUser(envtest.User{Name: "sync-binary", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	config, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, config, 0o600); err != nil {
		t.Fatal(err)
	}
	svc := startService(t, "--wait-for-sync")
	probes, metrics := freePort(t), freePort(t)
	cmd := exec.Command(bin, "--selector-address", svc.socket, "--kubeconfig", kubeconfig,
		"--health-probe-bind-address", probes, "--metrics-bind-address", metrics, "--status-interval", "500ms")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	get := func(addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	eventuallyOr(func(f string, a ...any) { t.Fatalf(f+"\n%s", append(a, logs.String())...) }, 60*time.Second, "/readyz 200", func() string {
		code, body := get(probes, "/readyz")
		return equalMsg(code, 200) + strings.TrimSpace(map[bool]string{true: "", false: " " + body}[code == 200])
	})
	want := map[string]int32{}
	for key := range k.clusterState(t) {
		kind, _ := cachesync.KindOf(key.Kind)
		want[kind.GVK.Kind]++
	}
	if got := svc.counts(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("service counts %v, cluster %v", got, want)
	}
	code, body := get(metrics, "/metrics")
	if code != 200 || !strings.Contains(body, `ome_selector_sync_writes_total{rpc="ApplySnapshot"} 1`) ||
		!strings.Contains(body, "ome_selector_sync_last_full_sync_timestamp_seconds") {
		t.Fatalf("/metrics %d without the ApplySnapshot write count:\n%.2000s", code, body)
	}
}
