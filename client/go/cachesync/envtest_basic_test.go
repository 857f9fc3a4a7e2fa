//go:build envtest

package cachesync_test

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
)

func inferenceServices(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "InferenceService" {
			out = append(out, u)
		}
	}
	return out
}

// The catalog runtimes and ome-cluster, created in the API server, reach the service in one
// snapshot: the same counts, and the same SelectRuntime answers, as the service loaded from the
// same files with --manifests.
func TestInitialSyncOfCatalogAndCluster(t *testing.T) {
	k := sharedKube(t)
	objs := catalogAndCluster(t)
	svc := startService(t, "--wait-for-sync")
	ref := startService(t, append([]string{"--strict", "--manifests"}, servertest.CatalogManifests(t)...)...)
	run := startSync(t, k.cfg, svc, cachesync.Options{})
	took := run.waitReady(t, 60*time.Second)
	t.Logf("first snapshot of %d objects accepted %.2fs after the manager started", len(objs), took.Seconds())

	got, want := svc.counts(t), ref.counts(t)
	wantExact := map[string]int32{"ClusterServingRuntime": 206, "ServingRuntime": 2, "ClusterBaseModel": 207, "AcceleratorClass": 4, "InferenceService": 8}
	for kind, n := range wantExact {
		if got[kind] != n {
			t.Errorf("%s: %d cached, want %d", kind, got[kind], n)
		}
	}
	for kind, n := range want {
		if got[kind] != n {
			t.Errorf("%s: %d synced, %d loaded from the same manifests", kind, got[kind], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("kinds synced %v, loaded %v", got, want)
	}
	if diff := run.rec.diff(k.clusterState(t)); diff != "" {
		t.Errorf("service state differs from the cluster: %s", diff)
	}
	if run.rec.snapshots != 1 {
		t.Errorf("%d snapshots, want 1", run.rec.snapshots)
	}
	wantSelected := map[string]string{
		"llama-demo/llama-70b":         "ClusterServingRuntime/srt-llama-3-3-70b-instruct-omenative",
		"llama-demo/llama-70b-h100":    "ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper",
		"llama-demo/llama-70b-l40s":    "none",
		"llama-demo/llama-70b-native":  "ClusterServingRuntime/srt-llama-3-3-70b-instruct-omenative",
		"team-a/llama-70b-team":        "ServingRuntime/team-a/team-llama-70b",
		"team-a/llama-70b-named-child": "ServingRuntime/team-a/team-llama-70b-child",
		"demo/qwen2-5-7b":              "none",
		"demo/deepseek-v3":             "none",
	}
	isvcs := inferenceServices(objs)
	if len(isvcs) != len(wantSelected) {
		t.Errorf("%d InferenceServices in ome-cluster, want %d", len(isvcs), len(wantSelected))
	}
	for _, isvc := range isvcs {
		id := isvc.GetNamespace() + "/" + isvc.GetName()
		g, w := svc.selected(t, isvc), ref.selected(t, isvc)
		if g != w || g != wantSelected[id] {
			t.Errorf("%s: synced service selects %q, manifests-loaded %q, want %q", id, g, w, wantSelected[id])
		}
	}
	t.Logf("counts %v", got)
}

// template is a copy of the baseline object kind/name, renamed, in namespace ns ("" keeps it
// cluster-scoped).
func template(t *testing.T, objs []*unstructured.Unstructured, kind, name, newName, ns string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			c := u.DeepCopy()
			c.SetName(newName)
			c.SetNamespace(ns)
			return c
		}
	}
	t.Fatalf("no %s %s in the catalog or ome-cluster", kind, name)
	return nil
}

func isvc(ns, name, model, runtime string) *unstructured.Unstructured {
	spec := map[string]any{
		"model":  map[string]any{"name": model},
		"engine": map[string]any{"minReplicas": int64(1), "maxReplicas": int64(1)},
	}
	if runtime != "" {
		spec["runtime"] = map[string]any{"name": runtime}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// inSync: "" when the service holds exactly the cluster's objects at their resourceVersions
// (as accepted by the service, and counted by it).
func inSync(t *testing.T, k *kube, svc *service, run *syncRun) string {
	want := k.clusterState(t)
	if d := run.rec.diff(want); d != "" {
		return d
	}
	counts := map[string]int32{}
	for key := range want {
		kind, _ := cachesync.KindOf(key.Kind)
		counts[kind.GVK.Kind]++
	}
	got := svc.counts(t)
	for kind, n := range counts {
		if got[kind] != n {
			return fmt.Sprintf("service counts %v, cluster %v", got, counts)
		}
	}
	if len(got) != len(counts) {
		return fmt.Sprintf("service counts %v, cluster %v", got, counts)
	}
	return ""
}

func (k *kube) update(t *testing.T, u *unstructured.Unstructured, mutate func(*unstructured.Unstructured)) {
	t.Helper()
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(u.GroupVersionKind())
	if err := k.client.Get(context.Background(), client.ObjectKeyFromObject(u), cur); err != nil {
		t.Fatal(err)
	}
	mutate(cur)
	if err := k.client.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
}

func (k *kube) remove(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	cur := u.DeepCopy()
	if err := k.client.Delete(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
}

func setDisabled(disabled bool) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, disabled, "spec", "disabled")
	}
}

func setAnnotation(value string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["cachesync-test/step"] = value
		u.SetAnnotations(a)
	}
}

// A create, an update and a delete of each synced kind reach the service within 1 s: the
// service holds exactly the cluster's objects, and SelectRuntime answers for the new state.
func TestCreateUpdateDeleteOfEachKind(t *testing.T) {
	k := sharedKube(t)
	base := catalogAndCluster(t)
	svc := startService(t, "--wait-for-sync")
	run := startSync(t, k.cfg, svc, cachesync.Options{})
	run.waitReady(t, 60*time.Second)
	const ns = "crud"
	k.ensureNamespace(t, ns)
	k.ensureNamespace(t, "ome")

	csrNamed := isvc(ns, "named-csr", "llama-3-3-70b-instruct", "crud-csr")
	srNamed := isvc(ns, "named-sr", "llama-3-3-70b-instruct", "crud-sr")
	cbmNamed := isvc(ns, "named-cbm", "crud-cbm", "srt-llama-3-3-70b-instruct-omenative")
	bmNamed := isvc(ns, "named-bm", "crud-bm", "srt-llama-3-3-70b-instruct-omenative")
	check := func(step string, want map[*unstructured.Unstructured]string) {
		t.Helper()
		eventuallyOr(t.Errorf, time.Second, step, func() string {
			if msg := inSync(t, k, svc, run); msg != "" {
				return msg
			}
			for q, w := range want {
				if got := svc.selected(t, q); got != w {
					return fmt.Sprintf("%s selects %q, want %q", q.GetName(), got, w)
				}
			}
			return ""
		})
	}

	csr := template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", "crud-csr", "")
	sr := template(t, base, "ClusterServingRuntime", "srt-llama-3-3-70b-instruct-omenative", "crud-sr", ns)
	sr.SetKind("ServingRuntime")
	cbm := template(t, base, "ClusterBaseModel", "llama-3-3-70b-instruct", "crud-cbm", "")
	bm := template(t, base, "ClusterBaseModel", "llama-3-3-70b-instruct", "crud-bm", ns)
	bm.SetKind("BaseModel")
	ac := template(t, base, "AcceleratorClass", "nvidia-h100-80gb", "crud-ac", "")
	rev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{"name": "cr-crud-csr-abc12", "namespace": "ome", "labels": map[string]any{
			"ome.io/runtime-of": "crud-csr", "ome.io/runtime-of-kind": "ClusterServingRuntime",
			"ome.io/runtime-of-namespace": "", "ome.io/revision-hash": "abc12",
		}},
		"data":     csr.Object["spec"],
		"revision": int64(1),
	}}
	// Not a runtime revision (no ome.io/runtime-of label): never synced.
	other := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{"name": "statefulset-abc", "namespace": "ome"},
		"data":     map[string]any{"spec": map[string]any{}}, "revision": int64(1),
	}}
	listener := isvc(ns, "plain", "llama-3-3-70b-instruct", "")

	missingCSR := `error: NotFound: runtime crud-csr not found in namespace crud or at cluster scope`
	check("before", map[*unstructured.Unstructured]string{csrNamed: missingCSR})

	// Runtimes.
	k.create(t, csr)
	check("create ClusterServingRuntime", map[*unstructured.Unstructured]string{csrNamed: "ClusterServingRuntime/crud-csr"})
	k.update(t, csr, setDisabled(true))
	check("update ClusterServingRuntime", map[*unstructured.Unstructured]string{csrNamed: "error: cluster-scoped runtime crud-csr is disabled"})
	k.remove(t, csr)
	check("delete ClusterServingRuntime", map[*unstructured.Unstructured]string{csrNamed: missingCSR})

	k.create(t, sr)
	check("create ServingRuntime", map[*unstructured.Unstructured]string{srNamed: "ServingRuntime/crud/crud-sr"})
	k.update(t, sr, setDisabled(true))
	check("update ServingRuntime", map[*unstructured.Unstructured]string{srNamed: "error: namespace-scoped runtime crud-sr is disabled"})
	k.remove(t, sr)
	check("delete ServingRuntime", map[*unstructured.Unstructured]string{srNamed: `error: NotFound: runtime crud-sr not found in namespace crud or at cluster scope`})

	// Models.
	k.create(t, cbm)
	check("create ClusterBaseModel", map[*unstructured.Unstructured]string{cbmNamed: "ClusterServingRuntime/srt-llama-3-3-70b-instruct-omenative"})
	k.update(t, cbm, setDisabled(true))
	check("update ClusterBaseModel", map[*unstructured.Unstructured]string{cbmNamed: "error: model crud-cbm is disabled"})
	k.remove(t, cbm)
	check("delete ClusterBaseModel", map[*unstructured.Unstructured]string{cbmNamed: `error: NotFound: referenced model "crud-cbm" not found in namespace "crud": ensure a BaseModel exists in this namespace or a ClusterBaseModel exists cluster-wide with this name`})

	k.create(t, bm)
	check("create BaseModel", map[*unstructured.Unstructured]string{bmNamed: "ClusterServingRuntime/srt-llama-3-3-70b-instruct-omenative"})
	k.update(t, bm, setDisabled(true))
	check("update BaseModel", map[*unstructured.Unstructured]string{bmNamed: "error: model crud-bm is disabled"})
	k.remove(t, bm)
	check("delete BaseModel", map[*unstructured.Unstructured]string{bmNamed: `error: NotFound: referenced model "crud-bm" not found in namespace "crud": ensure a BaseModel exists in this namespace or a ClusterBaseModel exists cluster-wide with this name`})

	// AcceleratorClass, InferenceService, runtime revision: the service holds exactly them.
	for _, obj := range []*unstructured.Unstructured{ac, listener, rev} {
		k.create(t, obj)
		check("create "+obj.GetKind(), nil)
		k.update(t, obj, setAnnotation("updated"))
		check("update "+obj.GetKind(), nil)
		k.remove(t, obj)
		check("delete "+obj.GetKind(), nil)
	}
	k.create(t, other)
	check("a ControllerRevision that is not a runtime revision", nil)
	if n := svc.counts(t)["ControllerRevision"]; n != 0 {
		t.Fatalf("%d ControllerRevisions cached, want 0 (only runtime revisions are synced)", n)
	}
}
