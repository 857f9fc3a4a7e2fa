//go:build envtest

package cachesync_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

func init() {
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if os.Getenv("CACHESYNC_TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
}

// kube is a real kube-apiserver + etcd started by envtest with OME's CRDs.
type kube struct {
	env     *envtest.Environment
	cfg     *rest.Config
	client  client.Client
	certDir string
}

var (
	kubeOnce sync.Once
	kubeErr  string
	shared   *kube
)

// TestMain stops the shared API server after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.env.Stop()
		_ = os.RemoveAll(shared.certDir)
	}
	os.Exit(code)
}

// sharedKube starts, once for all tests, kube-apiserver and etcd from KUBEBUILDER_ASSETS with
// OME's CRDs, and creates the catalog runtimes and ome-cluster in it. Tests label what they add
// (testLabel) and remove it when they end, so every test starts from that baseline.
func sharedKube(t *testing.T) *kube {
	t.Helper()
	kubeOnce.Do(func() { kubeErr = startKube(t) })
	if kubeErr != "" {
		t.Fatal(kubeErr)
	}
	return shared
}

func startKube(t *testing.T) string {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	fix := "at the repository root run: export KUBEBUILDER_ASSETS=\"$(scripts/kube-binaries.sh)\""
	if assets == "" {
		return "KUBEBUILDER_ASSETS is not set: these tests run a real kube-apiserver and etcd; " + fix
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return fmt.Sprintf("KUBEBUILDER_ASSETS=%s has no %s: %s", assets, bin, fix)
		}
	}
	crdDir := filepath.Join(servertest.Shared(t), "ome-catalog", "crd", "full")
	var crds []string
	for _, plural := range []string{"servingruntimes", "clusterservingruntimes", "basemodels", "clusterbasemodels", "acceleratorclasses", "inferenceservices"} {
		crds = append(crds, filepath.Join(crdDir, "ome.io_"+plural+".yaml"))
	}
	env := &envtest.Environment{
		// A busy machine: the API server's graceful stop and start take a while.
		ControlPlane:          envtest.ControlPlane{APIServer: &envtest.APIServer{StartTimeout: 3 * time.Minute, StopTimeout: 2 * time.Minute}},
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		// OME's runtime and InferenceService CRDs are large (34,000 lines each): on a busy
		// machine the API server takes a while to serve them.
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 5 * time.Minute, PollInterval: 250 * time.Millisecond},
	}
	// A certificate folder of our own survives an API server Stop, so a restarted one serves the
	// same certificate (envtest removes a folder it made itself).
	certDir, err := os.MkdirTemp("", "cachesync-apiserver")
	if err != nil {
		return err.Error()
	}
	env.ControlPlane.GetAPIServer().CertDir = certDir
	started := time.Now()
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // a half-started control plane
		_ = os.RemoveAll(certDir)
		return fmt.Sprintf("envtest start (kube-apiserver and etcd from %s): %v", assets, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		_ = env.Stop()
		return err.Error()
	}
	shared = &kube{env: env, cfg: cfg, client: c, certDir: certDir}
	t.Logf("kube-apiserver and etcd with OME's CRDs up in %.1fs", time.Since(started).Seconds())
	shared.apply(t, catalogAndCluster(t))
	return ""
}

func (k *kube) ensureNamespace(t *testing.T, ns string) {
	t.Helper()
	err := k.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// apply creates every object (namespaces first).
func (k *kube) apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if ns := u.GetNamespace(); ns != "" {
			k.ensureNamespace(t, ns)
		}
	}
	ctx := context.Background()
	for _, u := range objs {
		err := k.client.Create(ctx, u.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			// Defined again later in the manifests: the later definition wins, as with kubectl apply.
			old := &unstructured.Unstructured{}
			old.SetGroupVersionKind(u.GroupVersionKind())
			if err = k.client.Get(ctx, client.ObjectKeyFromObject(u), old); err == nil {
				next := u.DeepCopy()
				next.SetResourceVersion(old.GetResourceVersion())
				err = k.client.Update(ctx, next)
			}
		}
		if err != nil {
			t.Fatalf("create %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

const testLabel = "cachesync-test"

// create creates objs labelled cachesync-test=<test name> and deletes everything of that label
// when the test ends.
func (k *kube) create(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	label := testName(t)
	type scope struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	var scopes []scope
	seen := map[scope]bool{}
	for _, u := range objs {
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[testLabel] = label
		u.SetLabels(labels)
		sc := scope{u.GroupVersionKind(), u.GetNamespace()}
		if !seen[sc] {
			seen[sc] = true
			scopes = append(scopes, sc)
		}
	}
	t.Cleanup(func() {
		for _, sc := range scopes {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(sc.gvk)
			opts := []client.DeleteAllOfOption{client.MatchingLabels{testLabel: label}}
			if sc.ns != "" {
				opts = append(opts, client.InNamespace(sc.ns))
			}
			if err := k.client.DeleteAllOf(context.Background(), u, opts...); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup %s in %q: %v", sc.gvk.Kind, sc.ns, err)
			}
		}
	})
	k.apply(t, objs)
}

func testName(t *testing.T) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.Trim(name, "-")
}

// manifests reads every YAML document of the .yaml files under roots (sorted paths), skipping
// kustomization files.
func manifests(t *testing.T, roots ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, decode(t, data)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err == io.EOF {
				return out
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func catalogAndCluster(t *testing.T) []*unstructured.Unstructured {
	return manifests(t, servertest.CatalogManifests(t)...)
}

// service is the real Python service on a unix socket (restartable at the same address).
type service struct {
	t      *testing.T
	socket string
	args   []string
	srv    *servertest.Server
	conn   *selectorclient.Client
}

func startService(t *testing.T, args ...string) *service {
	t.Helper()
	dir, err := os.MkdirTemp("", "cachesync")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &service{t: t, socket: "unix:" + filepath.Join(dir, "api.sock"), args: args}
	s.start()
	conn, err := selectorclient.New(s.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s.conn = conn
	return s
}

func (s *service) start() {
	s.srv = servertest.StartAt(s.t, s.socket, s.args...)
}

// restart stops the service (SIGTERM) and starts a new one on the same socket: an empty cache.
func (s *service) restart() {
	s.srv.Stop()
	s.start()
}

func (s *service) status(t *testing.T) *selectorv1.CacheStatus {
	t.Helper()
	r, err := s.conn.Cache().GetCacheStatus(context.Background(), &selectorv1.GetCacheStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetStatus()
}

// counts: objects per kind name in the service's cache.
func (s *service) counts(t *testing.T) map[string]int32 {
	out := map[string]int32{}
	for _, c := range s.status(t).GetCounts() {
		if c.GetCount() > 0 {
			kind, _ := cachesync.KindOf(c.GetKind())
			out[kind.GVK.Kind] = c.GetCount()
		}
	}
	return out
}

// selected is the runtime SelectRuntime picks for isvc (`<Kind>/<name>`, `<Kind>/<ns>/<name>`),
// "none" when no runtime qualifies, "error: <model_error or runtime_error>".
func (s *service) selected(t *testing.T, isvc *unstructured.Unstructured) string {
	t.Helper()
	obj, err := cachesync.Convert(kindNamed("InferenceService"), isvc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.conn.Selection().SelectRuntime(context.Background(), &selectorv1.SelectRuntimeRequest{InferenceService: obj.GetInferenceService()})
	if err != nil {
		return "error: " + err.Error()
	}
	if sel := r.GetSelection(); sel != nil {
		return refString(sel.GetRuntime())
	}
	if r.GetModelError() != "" {
		return "error: " + r.GetModelError()
	}
	if r.GetRuntimeError() != "" {
		return "error: " + r.GetRuntimeError()
	}
	return "none"
}

func refString(ref *selectorv1.RuntimeRef) string {
	if ref == nil {
		return "<none>"
	}
	kind := "ClusterServingRuntime"
	if ref.GetKind() == selectorv1.RuntimeKind_RUNTIME_KIND_SERVING_RUNTIME {
		return "ServingRuntime/" + ref.GetNamespace() + "/" + ref.GetName()
	}
	return kind + "/" + ref.GetName()
}

func kindNamed(name string) cachesync.Kind {
	for _, k := range cachesync.Kinds {
		if k.GVK.Kind == name {
			return k
		}
	}
	panic(name)
}

// recorder is a CacheServiceClient that forwards to the service and keeps what the service
// accepted: every cached key with its resourceVersion, and when each (key, resourceVersion)
// was first accepted.
type recorder struct {
	next selectorv1.CacheServiceClient
	mu   sync.Mutex
	// state: key -> resourceVersion as last accepted.
	state     map[cachesync.Key]string
	accepted  map[string]time.Time // "<key>@<rv>" -> first accepted
	snapshots int
}

func newRecorder(next selectorv1.CacheServiceClient) *recorder {
	return &recorder{next: next, state: map[cachesync.Key]string{}, accepted: map[string]time.Time{}}
}

func cacheKey(o *selectorv1.CacheObject) (cachesync.Key, string) {
	var meta *omev1beta1.ObjectMeta
	var kind selectorv1.ObjectKind
	switch x := o.GetObject().(type) {
	case *selectorv1.CacheObject_ServingRuntime:
		meta, kind = x.ServingRuntime.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_SERVING_RUNTIME
	case *selectorv1.CacheObject_ClusterServingRuntime:
		meta, kind = x.ClusterServingRuntime.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_CLUSTER_SERVING_RUNTIME
	case *selectorv1.CacheObject_BaseModel:
		meta, kind = x.BaseModel.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_BASE_MODEL
	case *selectorv1.CacheObject_ClusterBaseModel:
		meta, kind = x.ClusterBaseModel.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_CLUSTER_BASE_MODEL
	case *selectorv1.CacheObject_AcceleratorClass:
		meta, kind = x.AcceleratorClass.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_ACCELERATOR_CLASS
	case *selectorv1.CacheObject_InferenceService:
		meta, kind = x.InferenceService.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_INFERENCE_SERVICE
	case *selectorv1.CacheObject_ControllerRevision:
		meta, kind = x.ControllerRevision.GetMetadata(), selectorv1.ObjectKind_OBJECT_KIND_CONTROLLER_REVISION
	}
	return cachesync.Key{Kind: kind, Namespace: meta.GetNamespace(), Name: meta.GetName()}, meta.GetResourceVersion()
}

func (r *recorder) record(objs []*selectorv1.CacheObject, reset bool) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if reset {
		r.state = map[cachesync.Key]string{}
		r.snapshots++
	}
	for _, o := range objs {
		k, rv := cacheKey(o)
		r.state[k] = rv
		id := k.String() + "@" + rv
		if _, ok := r.accepted[id]; !ok {
			r.accepted[id] = now
		}
	}
}

func (r *recorder) ApplySnapshot(ctx context.Context, in *selectorv1.ApplySnapshotRequest, opts ...grpc.CallOption) (*selectorv1.ApplySnapshotResponse, error) {
	out, err := r.next.ApplySnapshot(ctx, in, opts...)
	if err == nil {
		r.record(in.GetObjects(), true)
	}
	return out, err
}

func (r *recorder) UpsertObjects(ctx context.Context, in *selectorv1.UpsertObjectsRequest, opts ...grpc.CallOption) (*selectorv1.UpsertObjectsResponse, error) {
	out, err := r.next.UpsertObjects(ctx, in, opts...)
	if err == nil {
		r.record(in.GetObjects(), false)
	}
	return out, err
}

func (r *recorder) DeleteObjects(ctx context.Context, in *selectorv1.DeleteObjectsRequest, opts ...grpc.CallOption) (*selectorv1.DeleteObjectsResponse, error) {
	out, err := r.next.DeleteObjects(ctx, in, opts...)
	if err == nil {
		r.mu.Lock()
		for _, k := range in.GetKeys() {
			delete(r.state, cachesync.Key{Kind: k.GetKind(), Namespace: k.GetNamespace(), Name: k.GetName()})
		}
		r.mu.Unlock()
	}
	return out, err
}

func (r *recorder) GetCacheStatus(ctx context.Context, in *selectorv1.GetCacheStatusRequest, opts ...grpc.CallOption) (*selectorv1.GetCacheStatusResponse, error) {
	return r.next.GetCacheStatus(ctx, in, opts...)
}

func (r *recorder) acceptedAt(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.accepted[id]
	return at, ok
}

// diff compares the accepted state with want (key -> resourceVersion); "" when equal.
func (r *recorder) diff(want map[cachesync.Key]string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k, rv := range want {
		if got, ok := r.state[k]; !ok {
			out = append(out, "missing "+k.String())
		} else if got != rv {
			out = append(out, fmt.Sprintf("%s at resourceVersion %s, want %s", k, got, rv))
		}
	}
	for k := range r.state {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k.String())
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return strings.Join(out, "; ")
}

// clusterState lists every synced kind from the API server: key -> resourceVersion.
func (k *kube) clusterState(t *testing.T) map[cachesync.Key]string {
	t.Helper()
	out := map[cachesync.Key]string{}
	for _, kind := range cachesync.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.GVK.GroupVersion().WithKind(kind.GVK.Kind + "List"))
		if err := k.client.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if kind.GVK.Kind == "ControllerRevision" {
				if _, ok := u.GetLabels()[cachesync.RuntimeOfLabel]; !ok {
					continue
				}
			}
			out[cachesync.KeyOf(kind, u)] = u.GetResourceVersion()
		}
	}
	return out
}

// syncRun is a manager with a Syncer, running until the test ends (or stop).
type syncRun struct {
	syncer *cachesync.Syncer
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
	start  time.Time
}

func startSync(t *testing.T, cfg *rest.Config, svc *service, opts cachesync.Options) *syncRun {
	t.Helper()
	if opts.StatusInterval == 0 {
		opts.StatusInterval = 200 * time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 500 * time.Millisecond
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(svc.conn.Cache())
	s, err := cachesync.Add(mgr, rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &syncRun{syncer: s, rec: rec, cancel: cancel, done: make(chan error, 1), start: time.Now()}
	go func() { run.done <- mgr.Start(ctx) }()
	t.Cleanup(run.stop)
	return run
}

func (r *syncRun) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}

// waitReady waits until the Syncer's readyz passes; how long it took since the manager started.
func (r *syncRun) waitReady(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := r.syncer.ReadyzCheck(nil)
		if err == nil {
			return time.Since(r.start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync not ready within %s: %v", within, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventuallyOr is eventually reporting through fail (t.Errorf: the test goes on).
func eventuallyOr(fail func(string, ...any), within time.Duration, what string, f func() string) {
	deadline := time.Now().Add(within)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			fail("%s: not within %s: %s", what, within, msg)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventually polls f until it returns "" or within passes; the last message fails the test.
func eventually(t *testing.T, within time.Duration, what string, f func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, within, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equalMsg[T comparable](got, want T) string {
	if got == want {
		return ""
	}
	return fmt.Sprintf("got %v, want %v", got, want)
}

var _ = proto.Equal
