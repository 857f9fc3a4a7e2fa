package selectorclient_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

// The embedded example catalog's answer (README "Quick start"): llama-3-3-70b-hopper for
// nvidia-h100 in llama-demo.
const hopper = "llama-3-3-70b-hopper"

func isvc(namespace, class string) *omev1beta1.InferenceService {
	spec := &omev1beta1.InferenceServiceSpec{Model: &omev1beta1.ModelRef{Name: "llama-3-3-70b-instruct"}}
	if class != "" {
		spec.AcceleratorSelector = &omev1beta1.AcceleratorSelector{AcceleratorClass: proto.String(class)}
	}
	return &omev1beta1.InferenceService{Metadata: &omev1beta1.ObjectMeta{Name: "llama-3-3-70b", Namespace: namespace}, Spec: spec}
}

func newClient(t *testing.T, target string, opts ...selectorclient.Option) *selectorclient.Client {
	t.Helper()
	c, err := selectorclient.New(target, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", target, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func selectHopper(t *testing.T, c *selectorclient.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitUntilServing(ctx, selectorclient.SelectionServiceName); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Selection().SelectRuntime(ctx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc("llama-demo", "nvidia-h100")})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.GetSelection().GetRuntime()
	if got.GetName() != hopper || got.GetKind() != selectorv1.RuntimeKind_RUNTIME_KIND_CLUSTER_SERVING_RUNTIME || resp.GetSelection().GetScore() != 2 {
		t.Fatalf("selection = %v, want ClusterServingRuntime %s score 2", resp.GetSelection(), hopper)
	}
}

func TestServiceConfigIsThePythonClients(t *testing.T) {
	for _, tc := range []struct {
		retries int
		backoff time.Duration
		py      string
	}{{3, 100 * time.Millisecond, "3, 0.1"}, {0, time.Second, "0, 1.0"}, {4, time.Millisecond, "4, 0.001"}} {
		out, err := exec.Command(servertest.Python(t), "-c",
			"import json, ome_selector_client as c; print(json.dumps(c.service_config("+tc.py+")))").Output()
		if err != nil {
			t.Fatalf("python service_config(%s): %v", tc.py, err)
		}
		goJSON, err := selectorclient.ServiceConfig(tc.retries, tc.backoff)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal(out, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(goJSON), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ServiceConfig(%d, %s) = %s\nPython service_config(%s) = %s", tc.retries, tc.backoff, goJSON, tc.py, out)
		}
	}
	for _, bad := range []struct {
		retries int
		backoff time.Duration
		want    string
	}{
		{5, time.Second, "selectorclient: retries must be 0 to 4 (gRPC allows at most 5 attempts), not 5"},
		{-1, time.Second, "selectorclient: retries must be 0 to 4 (gRPC allows at most 5 attempts), not -1"},
		{1, 0, "selectorclient: backoff must be more than 0, not 0s"},
	} {
		if _, err := selectorclient.ServiceConfig(bad.retries, bad.backoff); err == nil || err.Error() != bad.want {
			t.Errorf("ServiceConfig(%d, %s) error = %v, want %q", bad.retries, bad.backoff, err, bad.want)
		}
		if _, err := selectorclient.New("127.0.0.1:1", selectorclient.WithRetries(bad.retries, bad.backoff)); err == nil || err.Error() != bad.want {
			t.Errorf("New(WithRetries(%d, %s)) error = %v, want %q", bad.retries, bad.backoff, err, bad.want)
		}
	}
}

func TestHostPortTarget(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	selectHopper(t, newClient(t, srv.Address))
}

func TestUnixSocketTarget(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"unix:", "unix://"} {
		srv := servertest.StartAt(t, "unix:"+filepath.Join(t.TempDir(), "api.sock"))
		path := srv.Address[len("unix:"):]
		selectHopper(t, newClient(t, scheme+path))
	}
}

func TestTLSAndMTLS(t *testing.T) {
	t.Parallel()
	pki := servertest.NewPKI(t)
	tlsOnly := servertest.Start(t, pki.ServerArgs(false)...)
	selectHopper(t, newClient(t, tlsOnly.Address, selectorclient.WithTLSFiles(pki.CA, "", "")))

	mtls := servertest.Start(t, pki.ServerArgs(true)...)
	selectHopper(t, newClient(t, mtls.Address, selectorclient.WithTLSFiles(pki.CA, pki.ClientCert, pki.ClientKey)))
	config, err := selectorclient.TLSConfigFromFiles(pki.CA, pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	selectHopper(t, newClient(t, mtls.Address, selectorclient.WithTLSConfig(config)))

	// Without a client certificate, and in plaintext, the mTLS server is UNAVAILABLE (the
	// handshake fails; the retries do not help).
	noCert, err := selectorclient.TLSConfigFromFiles(pki.CA, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*selectorclient.Client{
		"no client certificate": newClient(t, mtls.Address, selectorclient.WithTLSConfig(noCert)),
		"plaintext":             newClient(t, mtls.Address),
	} {
		_, err := c.Cache().GetCacheStatus(context.Background(), &selectorv1.GetCacheStatusRequest{}, selectorclient.CallTimeout(5*time.Second))
		var se *selectorclient.Error
		if !errors.As(err, &se) || se.Code != codes.Unavailable {
			t.Errorf("%s: GetCacheStatus error = %v, want *selectorclient.Error with Unavailable", name, err)
		}
	}
	if _, err := selectorclient.TLSConfigFromFiles(pki.ClientKey, "", ""); err == nil || err.Error() != "selectorclient: CA bundle "+pki.ClientKey+": no PEM certificates" {
		t.Errorf("TLSConfigFromFiles(key as CA) error = %v", err)
	}
	if _, err := selectorclient.New(mtls.Address, selectorclient.WithTLSConfig((*tls.Config)(nil))); err == nil {
		t.Error("WithTLSConfig(nil): no error")
	}
}

func TestErrorsCarryTheFieldViolations(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	c := newClient(t, srv.Address)
	_, err := c.Selection().SelectRuntime(context.Background(), &selectorv1.SelectRuntimeRequest{InferenceService: isvc("", "nvidia-h100")})
	var se *selectorclient.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *selectorclient.Error", err, err)
	}
	want := &selectorclient.Error{
		Code:    codes.InvalidArgument,
		Message: "invalid request: inferenceService.metadata.namespace: Required value",
		FieldViolations: []selectorclient.FieldViolation{
			{Field: "inferenceService.metadata.namespace", Description: "Required value"},
		},
	}
	if se.Code != want.Code || se.Message != want.Message || !reflect.DeepEqual(se.FieldViolations, want.FieldViolations) {
		t.Errorf("error = %#v\nwant    %#v", se, want)
	}
	if se.Error() != "InvalidArgument: "+want.Message {
		t.Errorf("Error() = %q", se.Error())
	}
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != want.Message {
		t.Errorf("status.Convert(err) = %v", status.Convert(err))
	}
	// A stream's errors are *Error too.
	stream, err := c.Selection().WatchSelections(context.Background(), &selectorv1.WatchSelectionsRequest{LabelSelector: "a in ("})
	if err == nil {
		_, err = stream.Recv()
	}
	if !errors.As(err, &se) || se.Code != codes.InvalidArgument || len(se.FieldViolations) != 1 || se.FieldViolations[0] != (selectorclient.FieldViolation{
		Field:       "labelSelector",
		Description: `Invalid value: "a in (": not a label selector requirement (k=v, k!=v, k in (a,b), k notin (a,b), k, !k)`,
	}) {
		t.Errorf("WatchSelections with a bad selector: error = %#v", err)
	}
}

// attempts counts the finished attempts of the client's calls (a stats handler sees the End of
// each attempt the retry policy makes; grpc-go reports some retries with two Begins).
type attempts struct{ n atomic.Int32 }

func (a *attempts) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (a *attempts) HandleRPC(_ context.Context, s stats.RPCStats) {
	if e, ok := s.(*stats.End); ok && e.Client {
		a.n.Add(1)
	}
}
func (a *attempts) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (a *attempts) HandleConn(context.Context, stats.ConnStats)                       {}

func deadPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestRetriesOnUnavailableOnly(t *testing.T) {
	t.Parallel()
	// Nothing listens: every attempt is UNAVAILABLE, so the default policy makes 4 attempts,
	// WithRetries(0, ...) one.
	addr := deadPort(t)
	for _, tc := range []struct {
		opts []selectorclient.Option
		want int32
	}{
		{nil, 4},
		{[]selectorclient.Option{selectorclient.WithRetries(1, 10*time.Millisecond)}, 2},
		{[]selectorclient.Option{selectorclient.WithRetries(0, time.Second)}, 1},
	} {
		a := &attempts{}
		c := newClient(t, addr, append(tc.opts, selectorclient.WithDialOptions(grpc.WithStatsHandler(a)))...)
		_, err := c.Cache().GetCacheStatus(context.Background(), &selectorv1.GetCacheStatusRequest{})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("GetCacheStatus on a dead port: %v", err)
		}
		if got := a.n.Load(); got != tc.want {
			t.Errorf("%d attempts, want %d", got, tc.want)
		}
	}
	// INVALID_ARGUMENT is not retried.
	srv := servertest.Start(t)
	a := &attempts{}
	c := newClient(t, srv.Address, selectorclient.WithDialOptions(grpc.WithStatsHandler(a)))
	if _, err := c.Selection().SelectRuntime(context.Background(), &selectorv1.SelectRuntimeRequest{InferenceService: isvc("", "")}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("SelectRuntime without namespace: %v", err)
	}
	if got := a.n.Load(); got != 1 {
		t.Errorf("INVALID_ARGUMENT: %d attempts, want 1", got)
	}
}

func TestACallBeforeTheCacheIsSyncedSucceedsOnceItIs(t *testing.T) {
	t.Parallel()
	// --wait-for-sync: SelectRuntime is UNAVAILABLE until the first ApplySnapshot. The call
	// issued before it is retried by gRPC and answers once the snapshot is in.
	srv := servertest.Start(t, "--wait-for-sync")
	writer := newClient(t, srv.Address)
	if st, err := writer.Cache().GetCacheStatus(context.Background(), &selectorv1.GetCacheStatusRequest{}, grpc.WaitForReady(true)); err != nil || st.GetStatus().GetSynced() {
		t.Fatalf("GetCacheStatus before the first snapshot: %v, %v (want synced=false)", st, err)
	}
	noRetry := newClient(t, srv.Address, selectorclient.WithRetries(0, time.Second))
	req := &selectorv1.SelectRuntimeRequest{InferenceService: isvc("llama-demo", "nvidia-h100")}
	if _, err := noRetry.Selection().SelectRuntime(context.Background(), req); status.Code(err) != codes.Unavailable {
		t.Fatalf("before the first snapshot, without retries: %v, want Unavailable", err)
	}

	firstFailed := make(chan struct{})
	a := &failures{first: firstFailed}
	c := newClient(t, srv.Address, selectorclient.WithRetries(4, time.Second), selectorclient.WithDialOptions(grpc.WithStatsHandler(a)))
	answered := make(chan error, 1)
	var resp *selectorv1.SelectRuntimeResponse
	go func() {
		var err error
		resp, err = c.Selection().SelectRuntime(context.Background(), req, selectorclient.CallTimeout(40*time.Second))
		answered <- err
	}()
	<-firstFailed
	if _, err := writer.Cache().ApplySnapshot(context.Background(), hopperSnapshot()); err != nil {
		t.Fatal(err)
	}
	if err := <-answered; err != nil {
		t.Fatalf("SelectRuntime issued before the snapshot: %v", err)
	}
	if got := resp.GetSelection().GetRuntime().GetName(); got != hopper {
		t.Errorf("selected %q, want %s", got, hopper)
	}
	if n := a.n.Load(); n < 2 {
		t.Errorf("%d attempts, want at least 2 (the first failed)", n)
	}
}

// failures closes first when the first attempt ends with an error, and counts attempts.
type failures struct {
	attempts
	first  chan struct{}
	closed atomic.Bool
}

func (f *failures) HandleRPC(ctx context.Context, s stats.RPCStats) {
	f.attempts.HandleRPC(ctx, s)
	if e, ok := s.(*stats.End); ok && e.Client && e.Error != nil && f.closed.CompareAndSwap(false, true) {
		close(f.first)
	}
}

func hopperSnapshot() *selectorv1.ApplySnapshotRequest {
	entry := &omev1beta1.SupportedModelFormat{
		ModelFormat:       &omev1beta1.ModelFormat{Name: "safetensors", Version: proto.String("1.0.0")},
		ModelFramework:    &omev1beta1.ModelFrameworkSpec{Name: "transformers", Version: proto.String("4.47.0.dev0")},
		ModelArchitecture: proto.String("LlamaForCausalLM"),
		AutoSelect:        proto.Bool(true),
	}
	return &selectorv1.ApplySnapshotRequest{Version: "v1", Objects: []*selectorv1.CacheObject{
		{Object: &selectorv1.CacheObject_ClusterServingRuntime{ClusterServingRuntime: &omev1beta1.ClusterServingRuntime{
			Metadata: &omev1beta1.ObjectMeta{Name: hopper},
			Spec: &omev1beta1.ServingRuntimeSpec{
				SupportedModelFormats:   []*omev1beta1.SupportedModelFormat{entry},
				AcceleratorRequirements: &omev1beta1.AcceleratorRequirements{AcceleratorClasses: []string{"nvidia-h100"}},
			},
		}}},
		{Object: &selectorv1.CacheObject_ClusterBaseModel{ClusterBaseModel: &omev1beta1.ClusterBaseModel{
			Metadata: &omev1beta1.ObjectMeta{Name: "llama-3-3-70b-instruct"},
			Spec: &omev1beta1.BaseModelSpec{
				ModelFormat:       &omev1beta1.ModelFormat{Name: "safetensors", Version: proto.String("1.0.0")},
				ModelFramework:    &omev1beta1.ModelFrameworkSpec{Name: "transformers", Version: proto.String("4.47.0.dev0")},
				ModelArchitecture: proto.String("LlamaForCausalLM"),
			},
		}}},
	}}
}

// deadlines records the deadline each call's context carries (after the client's own
// interceptor, which sets it).
type deadlines struct{ last time.Duration }

func (d *deadlines) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	d.last = -1
	if dl, ok := ctx.Deadline(); ok {
		d.last = time.Until(dl)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func TestPerCallDeadlines(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	d := &deadlines{}
	c := newClient(t, srv.Address, selectorclient.WithDialOptions(grpc.WithChainUnaryInterceptor(d.intercept)))
	approx := func(what string, want time.Duration) {
		t.Helper()
		if d.last > want || d.last < want-5*time.Second {
			t.Errorf("%s: deadline in %s, want about %s", what, d.last, want)
		}
	}
	ctx := context.Background()
	req := &selectorv1.SelectRuntimeRequest{InferenceService: isvc("llama-demo", "nvidia-h100")}
	if _, err := c.Selection().SelectRuntime(ctx, req); err != nil {
		t.Fatal(err)
	}
	approx("SelectRuntime (DefaultTimeout)", selectorclient.DefaultTimeout)
	if _, err := c.Selection().ExplainRuntimes(ctx, &selectorv1.ExplainRuntimesRequest{InferenceService: req.InferenceService}); err != nil {
		t.Fatal(err)
	}
	approx("ExplainRuntimes (MethodTimeouts)", 60*time.Second)
	if _, err := c.Selection().SelectRuntime(ctx, req, selectorclient.CallTimeout(7*time.Second)); err != nil {
		t.Fatal(err)
	}
	approx("CallTimeout(7s)", 7*time.Second)
	own, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Selection().SelectRuntime(own, req, selectorclient.CallTimeout(time.Second)); err != nil {
		t.Fatal(err)
	}
	approx("the context's own deadline", 30*time.Second)

	c2 := newClient(t, srv.Address, selectorclient.WithTimeout(20*time.Second), selectorclient.WithDialOptions(grpc.WithChainUnaryInterceptor(d.intercept)))
	if _, err := c2.Selection().ExplainRuntimes(ctx, &selectorv1.ExplainRuntimesRequest{InferenceService: req.InferenceService}); err != nil {
		t.Fatal(err)
	}
	approx("WithTimeout(20s)", 20*time.Second)
	_, err := c.Selection().SelectRuntime(ctx, req, selectorclient.CallTimeout(time.Nanosecond))
	var se *selectorclient.Error
	if !errors.As(err, &se) || se.Code != codes.DeadlineExceeded {
		t.Errorf("CallTimeout(1ns): %v, want DeadlineExceeded", err)
	}
}

func TestKeepaliveIsAccepted(t *testing.T) {
	t.Parallel()
	// grpc-go's shortest keepalive (10 s) with no call in flight, for 25 s: the server accepts
	// the pings (a GOAWAY too_many_pings would move the connection out of READY).
	srv := servertest.Start(t)
	c := newClient(t, srv.Address, selectorclient.WithKeepalive(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}))
	selectHopper(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if c.Conn().WaitForStateChange(ctx, connectivity.Ready) {
		t.Fatalf("connection left READY (now %s) while idle with 10 s keepalive pings:\n%s", c.Conn().GetState(), srv.Log(20))
	}
	selectHopper(t, c)
}
