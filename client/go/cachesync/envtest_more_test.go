//go:build envtest

package cachesync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
)

// Deleting the runtime an InferenceService runs on moves it to the next one, as
// WatchSelections reports: one change, from the deleted runtime to the next.
func TestDeletingARuntimeMovesAnInferenceService(t *testing.T) {
	k := sharedKube(t)
	base := catalogAndCluster(t)
	svc := startService(t, "--wait-for-sync")
	run := startSync(t, k.cfg, svc, cachesync.Options{})
	run.waitReady(t, 60*time.Second)
	const ns = "watch"
	k.ensureNamespace(t, ns)
	first := template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", "watch-first", "")
	second := template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", "watch-second", "")
	setPriority := func(u *unstructured.Unstructured, p int64) {
		formats, _, _ := unstructured.NestedSlice(u.Object, "spec", "supportedModelFormats")
		for _, f := range formats {
			f.(map[string]any)["priority"] = p
		}
		_ = unstructured.SetNestedSlice(u.Object, formats, "spec", "supportedModelFormats")
	}
	setPriority(first, 9)
	setPriority(second, 8)
	moving := isvc(ns, "moving", "llama-3-3-70b-instruct", "")
	k.create(t, first, second, moving)
	eventually(t, 5*time.Second, "first runtime selected", func() string {
		return equalMsg(svc.selected(t, moving), "ClusterServingRuntime/watch-first")
	})
	eventually(t, 5*time.Second, "in sync", func() string { return inSync(t, k, svc, run) })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := svc.conn.Selection().WatchSelections(ctx, &selectorv1.WatchSelectionsRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	var initial []string
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if c := ev.GetCurrent(); c != nil {
			initial = append(initial, c.GetName()+" "+refString(c.GetRuntime()))
		}
		if ev.GetInitialEventsEnd() != nil {
			break
		}
	}
	if got, want := fmt.Sprint(initial), "[moving ClusterServingRuntime/watch-first]"; got != want {
		t.Fatalf("initial state %s, want %s", got, want)
	}
	deleted := time.Now()
	k.remove(t, first)
	changes := make(chan *selectorv1.SelectionChange, 1)
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				close(changes)
				return
			}
			if c := ev.GetChange(); c != nil {
				changes <- c
			}
		}
	}()
	select {
	case c, ok := <-changes:
		if !ok {
			t.Fatal("stream ended before the change")
		}
		got := fmt.Sprintf("%s/%s %s -> %s", c.GetNamespace(), c.GetName(), refString(c.GetBefore().GetRuntime()), refString(c.GetAfter().GetRuntime()))
		if want := "watch/moving ClusterServingRuntime/watch-first -> ClusterServingRuntime/watch-second"; got != want {
			t.Fatalf("change %q, want %q", got, want)
		}
		t.Logf("WatchSelections change %.0f ms after the delete", float64(time.Since(deleted).Microseconds())/1000)
	case <-time.After(time.Second):
		t.Fatal("no WatchSelections change within 1s of deleting the runtime")
	}
}

// The service killed and started again (an empty cache, NOT_SERVING) gets a full snapshot
// again, then answers as before.
func TestServiceRestartResyncs(t *testing.T) {
	k := sharedKube(t)
	objs := catalogAndCluster(t)
	svc := startService(t, "--wait-for-sync")
	run := startSync(t, k.cfg, svc, cachesync.Options{})
	run.waitReady(t, 60*time.Second)
	before := map[string]string{}
	for _, q := range inferenceServices(objs) {
		before[q.GetName()] = svc.selected(t, q)
	}
	counts := svc.counts(t)
	svc.restart()
	restarted := time.Now()
	eventually(t, 30*time.Second, "full snapshot after the restart", func() string {
		run.rec.mu.Lock()
		n := run.rec.snapshots
		run.rec.mu.Unlock()
		if n != 2 {
			return fmt.Sprintf("%d snapshots, want 2", n)
		}
		return inSync(t, k, svc, run)
	})
	t.Logf("cache full again %.2fs after the service restarted", time.Since(restarted).Seconds())
	run.waitReady(t, 5*time.Second)
	if got := svc.counts(t); fmt.Sprint(got) != fmt.Sprint(counts) {
		t.Fatalf("counts after restart %v, before %v", got, counts)
	}
	for _, q := range inferenceServices(objs) {
		if got := svc.selected(t, q); got != before[q.GetName()] {
			t.Errorf("%s: %q after the restart, %q before", q.GetName(), got, before[q.GetName()])
		}
	}
}

// The standalone RBAC (deploy/standalone/rbac.yaml) applied to the API server is enough: the
// sync, impersonating its ServiceAccount, gets every kind. A ServiceAccount without the binding
// never becomes ready (the impersonation is in effect).
func TestStandaloneRBACIsEnough(t *testing.T) {
	k := sharedKube(t)
	data, err := os.ReadFile(filepath.Join(servertest.Root(), "deploy", "standalone", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k.ensureNamespace(t, "ome")
	var sa string
	for _, u := range decode(t, data) {
		if u.GetKind() == "ServiceAccount" {
			u.SetNamespace("ome")
			sa = u.GetName()
		}
		if u.GetKind() == "ClusterRoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subjects {
				if s.(map[string]any)["namespace"] == nil {
					s.(map[string]any)["namespace"] = "ome"
				}
			}
			_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		}
		k.create(t, u)
	}
	if sa == "" {
		t.Fatal("rbac.yaml has no ServiceAccount")
	}
	as := func(name string) *rest.Config {
		cfg := rest.CopyConfig(k.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:ome:" + name}
		return cfg
	}
	// The control: no binding, no list.
	denied := startService(t, "--wait-for-sync")
	deniedRun := startSync(t, as("not-bound"), denied, cachesync.Options{})
	time.Sleep(3 * time.Second)
	if err := deniedRun.syncer.ReadyzCheck(nil); err == nil {
		t.Fatal("a ServiceAccount without the ClusterRoleBinding became ready")
	}
	deniedRun.stop()

	svc := startService(t, "--wait-for-sync")
	run := startSync(t, as(sa), svc, cachesync.Options{})
	run.waitReady(t, 60*time.Second)
	if msg := inSync(t, k, svc, run); msg != "" {
		t.Fatalf("as %s: %s", sa, msg)
	}
}

// 2,000 ClusterServingRuntimes and 2,000 InferenceServices: the time to the first snapshot, and
// the lag (API write returned -> the service accepted that resourceVersion) under 100 writes/s.
// Reported, not asserted against a time.
func TestScale2000Runtimes2000InferenceServices(t *testing.T) {
	k := sharedKube(t)
	base := catalogAndCluster(t)
	const n = 2000
	k.ensureNamespace(t, "scale")
	var runtimes, isvcs []*unstructured.Unstructured
	for i := 0; i < n; i++ {
		runtimes = append(runtimes, template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", fmt.Sprintf("scale-%04d", i), ""))
		isvcs = append(isvcs, isvc("scale", fmt.Sprintf("scale-%04d", i), "llama-3-3-70b-instruct", ""))
	}
	created := time.Now()
	k.createParallel(t, append(runtimes, isvcs...), 8)
	t.Logf("created %d objects in the API server in %.1fs", 2*n, time.Since(created).Seconds())

	svc := startService(t, "--wait-for-sync")
	run := startSync(t, k.cfg, svc, cachesync.Options{StatusInterval: time.Second})
	took := run.waitReady(t, 5*time.Minute)
	t.Logf("BENCH first snapshot: %d objects (cluster total %d) accepted %.2fs after the manager started",
		2*n, len(k.clusterState(t)), took.Seconds())

	// 100 writes/s for 10 s: InferenceService label updates, each timed from the API response.
	const rate, seconds = 100, 10
	type write struct {
		id string
		at time.Time
	}
	var writes []write
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	for i := 0; i < rate*seconds; i++ {
		<-tick.C
		u := isvcs[i%n]
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(u.GroupVersionKind())
		if err := k.client.Get(context.Background(), client.ObjectKeyFromObject(u), cur); err != nil {
			t.Fatal(err)
		}
		setAnnotation(fmt.Sprint(i))(cur)
		if err := k.client.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
		key := cachesync.KeyOf(kindNamed("InferenceService"), cur)
		writes = append(writes, write{key.String() + "@" + cur.GetResourceVersion(), time.Now()})
	}
	eventually(t, 60*time.Second, "in sync after the writes", func() string { return inSync(t, k, svc, run) })
	var lags []float64
	for _, w := range writes {
		at, ok := run.rec.acceptedAt(w.id)
		if !ok {
			t.Fatalf("%s never accepted by the service", w.id)
		}
		lags = append(lags, at.Sub(w.at).Seconds()*1000)
	}
	sort.Float64s(lags)
	q := func(p float64) float64 { return lags[int(p*float64(len(lags)-1))] }
	t.Logf("BENCH lag at %d writes/s over %d runtimes + %d InferenceServices: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (%d writes)",
		rate, n, n, q(0.5), q(0.9), q(0.99), lags[len(lags)-1], len(lags))
}

// createParallel is create with workers goroutines.
func (k *kube) createParallel(t *testing.T, objs []*unstructured.Unstructured, workers int) {
	t.Helper()
	label := testName(t)
	for _, u := range objs {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[testLabel] = label
		u.SetLabels(labels)
	}
	t.Cleanup(func() {
		for _, gvkNs := range []struct{ kind, ns string }{{"ClusterServingRuntime", ""}, {"InferenceService", "scale"}} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(kindNamed(gvkNs.kind).GVK)
			opts := []client.DeleteAllOfOption{client.MatchingLabels{testLabel: label}}
			if gvkNs.ns != "" {
				opts = append(opts, client.InNamespace(gvkNs.ns))
			}
			_ = k.client.DeleteAllOf(context.Background(), u, opts...)
		}
	})
	work := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				if err := k.client.Create(context.Background(), u.DeepCopy()); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("create %s: %w", u.GetName(), err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, u := range objs {
		work <- u
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}
