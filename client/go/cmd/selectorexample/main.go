// Command selectorexample shows how a Go caller (such as the OME controller) talks to
// ome-selector: it loads a small snapshot into the cache, waits until the selection service
// reports SERVING, then asks which runtime an InferenceService gets and why the others lost.
//
//	selectorexample -addr 127.0.0.1:50051 -class nvidia-h100
//	selectorexample -addr unix:/run/ome-selector/api.sock            # the sidecar's socket
//	selectorexample -addr host:50051 -ca ca.crt -cert tls.crt -key tls.key   # mTLS
//
// The connection uses the same gRPC service config as the Python client (retry on UNAVAILABLE
// only, exponential backoff with gRPC's jitter) and keepalive pings every 30 s. Deviation: Debian
// ships grpc-go 1.33.3, which has no grpc.NewClient, so this uses grpc.Dial (non-blocking, same
// service config); and grpc-go before 1.40 applies a retryPolicy only when the process starts
// with GRPC_GO_RETRY=on.
//
// Output, one fact per line:
//
//	selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2
//	excluded: srt-llama-3-3-70b-instruct: runtime does not support the required accelerator class
//
// or, when nothing qualifies, `selected: none` followed by `no_runtime_message: ...`.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
)

// selectionService is the health service name that turns SERVING once the cache is loaded.
const selectionService = "ome.selector.v1.SelectionService"

// serviceConfig is the Python client's service_config(retries=3, backoff=0.1): every method of
// the three services is retried on UNAVAILABLE only, up to 4 attempts, backoff from 100 ms
// doubling up to 30 s (gRPC randomises each delay).
const serviceConfig = `{"methodConfig": [{"name": [{"service": "ome.selector.v1.SelectionService"}, {"service": "ome.selector.v1.CacheService"}, {"service": "grpc.health.v1.Health"}], "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.100s", "maxBackoff": "30s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

type options struct {
	addr         string
	class        string
	namespace    string
	isvcName     string
	model        string
	timeout      time.Duration
	skipSnapshot bool
	caFile       string
	certFile     string
	keyFile      string
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:50051", "ome-selector gRPC address (host:port or unix:/path)")
	flag.StringVar(&o.caFile, "ca", "", "PEM CA bundle to verify the server with (TLS); empty: plaintext")
	flag.StringVar(&o.certFile, "cert", "", "PEM client certificate for mTLS (with -key)")
	flag.StringVar(&o.keyFile, "key", "", "PEM private key of -cert")
	flag.StringVar(&o.class, "class", "nvidia-h100", "spec.acceleratorSelector.acceleratorClass of the InferenceService; empty leaves it unset")
	flag.StringVar(&o.namespace, "namespace", "llama-demo", "namespace of the InferenceService")
	flag.StringVar(&o.isvcName, "name", "llama-3-3-70b", "name of the InferenceService")
	flag.StringVar(&o.model, "model", "llama-3-3-70b-instruct", "spec.model.name of the InferenceService")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the server to accept the snapshot and report SERVING")
	flag.BoolVar(&o.skipSnapshot, "skip-snapshot", false, "keep the server's current cache instead of applying this program's snapshot")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "selectorexample: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "selectorexample: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	conn, err := dial(o)
	if err != nil {
		return fmt.Errorf("dial %s: %w", o.addr, err)
	}
	defer conn.Close()

	cache := selectorv1.NewCacheServiceClient(conn)
	selection := selectorv1.NewSelectionServiceClient(conn)
	health := healthpb.NewHealthClient(conn)

	readyCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	// The server may already be SERVING its own catalog, so load ours first: ApplySnapshot
	// replaces the whole cache atomically, and the answers below depend only on it.
	if !o.skipSnapshot {
		resp, err := cache.ApplySnapshot(readyCtx, exampleSnapshot(), grpc.WaitForReady(true))
		if err != nil {
			return fmt.Errorf("ApplySnapshot: %w", err)
		}
		st := resp.GetStatus()
		fmt.Fprintf(out, "snapshot: version=%s synced=%t generation=%d\n", st.GetVersion(), st.GetSynced(), st.GetGeneration())
	}
	if err := waitServing(readyCtx, health); err != nil {
		return err
	}
	fmt.Fprintln(out, "health: SERVING")

	callCtx, cancelCall := context.WithTimeout(ctx, 10*time.Second)
	defer cancelCall()
	isvc := inferenceService(o)

	sel, err := selection.SelectRuntime(callCtx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc})
	if err != nil {
		return fmt.Errorf("SelectRuntime: %w", err)
	}
	printSelection(out, sel)

	exp, err := selection.ExplainRuntimes(callCtx, &selectorv1.ExplainRuntimesRequest{InferenceService: isvc})
	if err != nil {
		return fmt.Errorf("ExplainRuntimes: %w", err)
	}
	printExplain(out, exp)
	return nil
}

// dial connects as the OME controller would: the service config above, keepalive pings every
// 30 s also without calls (the server accepts pings down to 500 ms), plaintext or TLS/mTLS, and
// unix sockets (grpc-go 1.33 has no unix: resolver, so a dialer handles them). Dial does not
// block; the first call with WaitForReady waits for the connection within its deadline.
func dial(o options) (*grpc.ClientConn, error) {
	opts := []grpc.DialOption{
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
	}
	target := o.addr
	if path := strings.TrimPrefix(strings.TrimPrefix(o.addr, "unix://"), "unix:"); path != o.addr {
		target = "passthrough:///unix"
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}))
	}
	if o.caFile == "" {
		return grpc.Dial(target, append(opts, grpc.WithInsecure())...)
	}
	config, err := tlsConfig(o)
	if err != nil {
		return nil, err
	}
	return grpc.Dial(target, append(opts, grpc.WithTransportCredentials(credentials.NewTLS(config)))...)
}

func tlsConfig(o options) (*tls.Config, error) {
	ca, err := os.ReadFile(o.caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no PEM certificates", o.caFile)
	}
	config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if o.certFile != "" || o.keyFile != "" {
		pair, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, err
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// waitServing polls the standard health service until the selection service is SERVING or
// ctx ends. Polling (not Watch) keeps it working across reconnects and servers without Watch.
func waitServing(ctx context.Context, health healthpb.HealthClient) error {
	last := "no answer"
	for {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: selectionService}, grpc.WaitForReady(true))
		switch {
		case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
			return nil
		case err == nil:
			last = resp.GetStatus().String()
		default:
			last = status.Convert(err).Message()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not become SERVING (last: %s): %w", selectionService, last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func printSelection(out io.Writer, r *selectorv1.SelectRuntimeResponse) {
	if m := r.GetModel(); m.GetName() != "" {
		fmt.Fprintf(out, "model: %s/%s label=%s\n", m.GetKind(), m.GetName(), m.GetLabel())
	}
	if r.GetModelError() != "" {
		fmt.Fprintf(out, "model_error: %s\n", r.GetModelError())
	}
	if s := r.GetSelection(); s != nil {
		fmt.Fprintf(out, "selected: %s score=%d\n", refString(s.GetRuntime()), s.GetScore())
	} else {
		fmt.Fprintln(out, "selected: none")
	}
	if r.GetNoRuntimeMessage() != "" {
		fmt.Fprintf(out, "no_runtime_message: %s\n", r.GetNoRuntimeMessage())
	}
	for _, c := range r.GetCandidates() {
		fmt.Fprintf(out, "candidate: %d %s score=%d\n", c.GetRank(), refString(c.GetRuntime()), c.GetScore())
	}
	for _, e := range r.GetExclusions() {
		fmt.Fprintf(out, "excluded: %s: %s\n", e.GetRuntime().GetName(), primaryReason(e.GetReasons()))
	}
	for _, w := range r.GetWarnings() {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
}

func printExplain(out io.Writer, r *selectorv1.ExplainRuntimesResponse) {
	for _, row := range r.GetRuntimes() {
		verdict := strings.TrimPrefix(row.GetVerdict().String(), "VERDICT_")
		fmt.Fprintf(out, "explain: %s verdict=%s rank=%d score=%d reason=%s\n",
			refString(row.GetRuntime()), verdict, row.GetRank(), row.GetScore(), row.GetReason())
	}
}

// primaryReason is the text OME reports for an excluded runtime: its first failing check.
func primaryReason(reasons []*selectorv1.Reason) string {
	for _, r := range reasons {
		if r.GetPrimary() {
			return r.GetMessage()
		}
	}
	if len(reasons) > 0 {
		return reasons[0].GetMessage()
	}
	return "-"
}

func refString(r *selectorv1.RuntimeRef) string {
	kind := "ClusterServingRuntime"
	if r.GetKind() == selectorv1.RuntimeKind_RUNTIME_KIND_SERVING_RUNTIME {
		kind = "ServingRuntime"
	}
	if r.GetNamespace() != "" {
		return kind + "/" + r.GetNamespace() + "/" + r.GetName()
	}
	return kind + "/" + r.GetName()
}

// inferenceService is the docs' example InferenceService (runtime-accelerator-class-matching.md).
func inferenceService(o options) *omev1beta1.InferenceService {
	spec := &omev1beta1.InferenceServiceSpec{
		Model:  &omev1beta1.ModelRef{Name: o.model},
		Engine: &omev1beta1.EngineSpec{MinReplicas: proto.Int32(1), MaxReplicas: proto.Int32(1)},
	}
	if o.class != "" {
		spec.AcceleratorSelector = &omev1beta1.AcceleratorSelector{AcceleratorClass: proto.String(o.class)}
	}
	return &omev1beta1.InferenceService{
		ApiVersion: "ome.io/v1beta1",
		Kind:       "InferenceService",
		Metadata:   &omev1beta1.ObjectMeta{Name: o.isvcName, Namespace: o.namespace},
		Spec:       spec,
	}
}

// llamaEntry is the supportedModelFormats entry both runtimes share; only autoSelect differs.
func llamaEntry(autoSelect bool) *omev1beta1.SupportedModelFormat {
	return &omev1beta1.SupportedModelFormat{
		ModelFormat:       &omev1beta1.ModelFormat{Name: "safetensors", Version: proto.String("1.0.0")},
		ModelFramework:    &omev1beta1.ModelFrameworkSpec{Name: "transformers", Version: proto.String("4.47.0.dev0")},
		ModelArchitecture: proto.String("LlamaForCausalLM"),
		AutoSelect:        proto.Bool(autoSelect),
		Priority:          proto.Int32(1),
	}
}

func clusterRuntime(name string, created time.Time, spec *omev1beta1.ServingRuntimeSpec) *selectorv1.CacheObject {
	return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_ClusterServingRuntime{
		ClusterServingRuntime: &omev1beta1.ClusterServingRuntime{
			ApiVersion: "ome.io/v1beta1",
			Kind:       "ClusterServingRuntime",
			Metadata:   &omev1beta1.ObjectMeta{Name: name, CreationTimestamp: timestamppb.New(created)},
			Spec:       spec,
		},
	}}
}

func acceleratorClass(name, family, model string) *selectorv1.CacheObject {
	return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_AcceleratorClass{
		AcceleratorClass: &omev1beta1.AcceleratorClass{
			ApiVersion: "ome.io/v1beta1",
			Kind:       "AcceleratorClass",
			Metadata:   &omev1beta1.ObjectMeta{Name: name},
			Spec:       &omev1beta1.AcceleratorClassSpec{Vendor: "nvidia", Family: family, Model: model},
		},
	}}
}

// exampleSnapshot: the hopper runtime from the accelerator-class docs (lists nvidia-h100 and
// nvidia-h200), the catalog runtime srt-llama-3-3-70b-instruct (lists no classes), the
// ClusterBaseModel llama-3-3-70b-instruct and three AcceleratorClasses.
func exampleSnapshot() *selectorv1.ApplySnapshotRequest {
	day := func(d int) time.Time { return time.Date(2025, time.June, d, 0, 0, 0, 0, time.UTC) }
	sizeRange := func() *omev1beta1.ModelSizeRangeSpec {
		return &omev1beta1.ModelSizeRangeSpec{Min: proto.String("60B"), Max: proto.String("75B")}
	}
	return &selectorv1.ApplySnapshotRequest{
		Version: "selectorexample-1",
		Objects: []*selectorv1.CacheObject{
			clusterRuntime("llama-3-3-70b-hopper", day(2), &omev1beta1.ServingRuntimeSpec{
				SupportedModelFormats: []*omev1beta1.SupportedModelFormat{llamaEntry(true)},
				ModelSizeRange:        sizeRange(),
				AcceleratorRequirements: &omev1beta1.AcceleratorRequirements{
					AcceleratorClasses: []string{"nvidia-h100", "nvidia-h200"},
				},
			}),
			clusterRuntime("srt-llama-3-3-70b-instruct", day(1), &omev1beta1.ServingRuntimeSpec{
				SupportedModelFormats: []*omev1beta1.SupportedModelFormat{llamaEntry(false)},
				ModelSizeRange:        sizeRange(),
				Disabled:              proto.Bool(false),
				ProtocolVersions:      []string{"openAI"},
			}),
			{Object: &selectorv1.CacheObject_ClusterBaseModel{ClusterBaseModel: &omev1beta1.ClusterBaseModel{
				ApiVersion: "ome.io/v1beta1",
				Kind:       "ClusterBaseModel",
				Metadata:   &omev1beta1.ObjectMeta{Name: "llama-3-3-70b-instruct"},
				Spec: &omev1beta1.BaseModelSpec{
					ModelFormat:        &omev1beta1.ModelFormat{Name: "safetensors", Version: proto.String("1.0.0")},
					ModelFramework:     &omev1beta1.ModelFrameworkSpec{Name: "transformers", Version: proto.String("4.47.0.dev0")},
					ModelArchitecture:  proto.String("LlamaForCausalLM"),
					ModelParameterSize: proto.String("70B"),
					ModelType:          proto.String("llama"),
				},
			}}},
			acceleratorClass("nvidia-h100", "hopper", "H100-SXM5-80GB"),
			acceleratorClass("nvidia-h200", "hopper", "H200-SXM-141GB"),
			acceleratorClass("nvidia-a100", "ampere", "A100-SXM4-80GB"),
		},
	}
}
