//go:build envtest

package cachesync_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
)

// Runs last (file order): it restarts the shared API server.

// The API server stopped and started again: the informers relist (their resourceVersions are
// older than the new watch cache: 410 Gone) and every change made right after the restart
// reaches the service.
func TestAPIServerRestartLosesNoEvent(t *testing.T) {
	k := sharedKube(t)
	base := catalogAndCluster(t)
	svc := startService(t, "--wait-for-sync")
	run := startSync(t, k.cfg, svc, cachesync.Options{})
	run.waitReady(t, 60*time.Second)
	k.ensureNamespace(t, "relist")
	var early []*unstructured.Unstructured
	for i := 0; i < 20; i++ {
		early = append(early, template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", fmt.Sprintf("relist-early-%d", i), ""))
	}
	k.create(t, early...)
	eventually(t, 5*time.Second, "in sync before the restart", func() string { return inSync(t, k, svc, run) })

	apiserver := k.env.ControlPlane.GetAPIServer()
	stopping := time.Now()
	// SIGTERM; envtest sends SIGKILL when the graceful stop takes longer than its timeout.
	if err := apiserver.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process kube-apiserver to stop") {
		t.Fatal(err)
	} else if err != nil {
		t.Logf("API server killed after %.1fs (%v)", time.Since(stopping).Seconds(), err)
	} else {
		t.Logf("API server stopped in %.1fs", time.Since(stopping).Seconds())
	}
	time.Sleep(2 * time.Second) // the informers' watches fail meanwhile
	starting := time.Now()
	if err := apiserver.Start(); err != nil {
		t.Fatalf("API server restart: %v", err)
	}
	t.Logf("API server started again in %.1fs", time.Since(starting).Seconds())
	var late []*unstructured.Unstructured
	for i := 0; i < 20; i++ {
		late = append(late, isvc("relist", fmt.Sprintf("late-%d", i), "llama-3-3-70b-instruct", ""))
	}
	k.create(t, late...)
	for i, u := range early {
		switch i % 3 {
		case 0:
			k.remove(t, u)
		case 1:
			k.update(t, u, setDisabled(true))
		}
	}
	eventually(t, 30*time.Second, "every change after the API server restart", func() string { return inSync(t, k, svc, run) })
}
