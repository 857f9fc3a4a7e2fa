// Command selectorexample shows how a Go caller (such as the OME controller) talks to
// ome-selector: it loads a small snapshot into the cache, waits until the selection service
// reports SERVING, then asks which runtime an InferenceService gets and why the others lost.
//
//	selectorexample -addr 127.0.0.1:50051 -class nvidia-h100
//	selectorexample -addr unix:/run/ome-selector/api.sock            # the sidecar's socket
//	selectorexample -addr host:50051 -ca ca.crt -cert tls.crt -key tls.key   # mTLS
//
// It connects with package selectorclient: the same gRPC service config as the Python client
// (retry on UNAVAILABLE only, exponential backoff with gRPC's jitter), keepalive pings every
// 30 s, per-call deadlines, plaintext or TLS/mTLS, host:port or unix: targets.
//
// Output, one fact per line:
//
//	selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2
//	summary: 1/2 runtimes are candidates: 1 accelerator class
//	excluded: srt-llama-3-3-70b-instruct: runtime does not support the required accelerator class
//
// or, when nothing qualifies, `selected: none` followed by `no_runtime_message: ...`.
//
// With -watch it then follows the outcomes of the cached InferenceServices of -namespace
// (WatchSelections), makes one cache write (the catalog runtime srt-llama-3-3-70b-instruct turns
// autoSelect on at priority 2) and prints the events that write causes, then ends the stream:
//
//	watch: current llama-demo/llama-3-3-70b runtime=ClusterServingRuntime/llama-3-3-70b-hopper ready=-
//	watch: initial state: 2 InferenceServices at selectorexample-1
//	upserted: ClusterServingRuntime/srt-llama-3-3-70b-instruct version=selectorexample-2
//	watch: change llama-demo/llama-3-3-70b ClusterServingRuntime/llama-3-3-70b-hopper -> ClusterServingRuntime/srt-llama-3-3-70b-instruct step=CHANGE_STEP_CHECK_PASSED
//	watch:   reason: ...
//	watch:   cause: ClusterServingRuntime srt-llama-3-3-70b-instruct: autoSelect false → true, priority 1 → 2
//	watch: write selectorexample-2 reevaluated=2 changed=1 matched=1
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

type options struct {
	addr         string
	class        string
	namespace    string
	isvcName     string
	model        string
	timeout      time.Duration
	skipSnapshot bool
	watch        bool
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
	flag.BoolVar(&o.watch, "watch", false, "then watch the namespace's cached InferenceServices, upsert a runtime and print the events it causes")
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
	var opts []selectorclient.Option
	if o.caFile != "" {
		opts = append(opts, selectorclient.WithTLSFiles(o.caFile, o.certFile, o.keyFile))
	}
	client, err := selectorclient.New(o.addr, opts...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", o.addr, err)
	}
	defer client.Close()
	cache, selection := client.Cache(), client.Selection()

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
	if err := client.WaitUntilServing(readyCtx, selectorclient.SelectionServiceName); err != nil {
		return err
	}
	fmt.Fprintln(out, "health: SERVING")

	callCtx, cancelCall := context.WithTimeout(ctx, 10*time.Second)
	defer cancelCall()
	isvc := inferenceService(o)

	// The FULL view: every excluded runtime with its primary reason (BASIC, the default, has the summary only).
	sel, err := selection.SelectRuntime(callCtx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc, View: selectorv1.SelectRuntimeView_SELECT_RUNTIME_VIEW_FULL})
	if err != nil {
		return fmt.Errorf("SelectRuntime: %w", err)
	}
	printSelection(out, sel)

	exp, err := selection.ExplainRuntimes(callCtx, &selectorv1.ExplainRuntimesRequest{InferenceService: isvc})
	if err != nil {
		return fmt.Errorf("ExplainRuntimes: %w", err)
	}
	printExplain(out, exp)
	if o.watch {
		watchCtx, cancelWatch := context.WithTimeout(ctx, o.timeout)
		defer cancelWatch()
		return watchWrite(watchCtx, o.namespace, selection, cache, out)
	}
	return nil
}

// watchedVersion is the cache version of the write -watch makes.
const watchedVersion = "selectorexample-2"

// watchWrite follows the outcomes of the cached InferenceServices of namespace as a controller's
// informer would: it lists them (the stream's current outcomes up to its initial-events-end
// marker, then the events of any write the server had not processed yet, up to the cache's
// generation when the watch began), prints that state, upserts watchedRuntime, prints each change
// event of that write (both runtimes, the step, the reason, the causes) and its stats, then ends
// the stream (cancelling ctx, as a controller that stops watching does).
func watchWrite(ctx context.Context, namespace string, selection selectorv1.SelectionServiceClient, cache selectorv1.CacheServiceClient, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	status, err := cache.GetCacheStatus(ctx, &selectorv1.GetCacheStatusRequest{})
	if err != nil {
		return fmt.Errorf("GetCacheStatus: %w", err)
	}
	listed := status.GetStatus().GetGeneration() // the cache generation to list before writing
	stream, err := selection.WatchSelections(ctx, &selectorv1.WatchSelectionsRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("WatchSelections: %w", err)
	}
	state := map[string]*selectorv1.SelectionOutcome{}
	wrote := false
	// write prints the listed state, then makes the cache write.
	write := func(version string) error {
		keys := make([]string, 0, len(state))
		for key := range state {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			fmt.Fprintf(out, "watch: current %s %s\n", key, outcomeString(state[key]))
		}
		fmt.Fprintf(out, "watch: initial state: %d InferenceServices at %s\n", len(keys), version)
		resp, err := cache.UpsertObjects(ctx, &selectorv1.UpsertObjectsRequest{Version: watchedVersion, Objects: []*selectorv1.CacheObject{watchedRuntime()}})
		if err != nil {
			return fmt.Errorf("UpsertObjects: %w", err)
		}
		wrote = true
		fmt.Fprintf(out, "upserted: ClusterServingRuntime/srt-llama-3-3-70b-instruct version=%s\n", resp.GetStatus().GetVersion())
		return nil
	}
	for {
		event, err := stream.Recv()
		if err != nil {
			return fmt.Errorf("WatchSelections: %w", err)
		}
		switch {
		case event.GetCurrent() != nil:
			o := event.GetCurrent()
			if wrote {
				fmt.Fprintf(out, "watch: current %s/%s %s\n", o.GetNamespace(), o.GetName(), outcomeString(o))
			} else {
				state[o.GetNamespace()+"/"+o.GetName()] = o
			}
		case event.GetInitialEventsEnd() != nil:
			end := event.GetInitialEventsEnd()
			if !wrote && end.GetGeneration() >= listed {
				if err := write(end.GetCacheVersion()); err != nil {
					return err
				}
			} else if wrote {
				fmt.Fprintf(out, "watch: initial state: %d InferenceServices at %s\n", end.GetInferenceServices(), end.GetCacheVersion())
			}
		case event.GetChange() != nil:
			c := event.GetChange()
			key := c.GetNamespace() + "/" + c.GetName()
			if !wrote { // a write the server processed after the watch began: it updates the list
				if c.GetAfter() != nil {
					state[key] = c.GetAfter()
				} else {
					delete(state, key)
				}
				continue
			}
			fmt.Fprintf(out, "watch: change %s %s -> %s step=%s\n", key,
				runtimeOrNone(c.GetBefore()), runtimeOrNone(c.GetAfter()), c.GetReason().GetStep())
			fmt.Fprintf(out, "watch:   reason: %s\n", c.GetReason().GetText())
			for _, cause := range c.GetCauses() {
				fmt.Fprintf(out, "watch:   cause: %s\n", cause.GetText())
			}
		case event.GetResync() != nil:
			fmt.Fprintf(out, "watch: resync: %s\n", event.GetResync().GetReason())
			if !wrote {
				state = map[string]*selectorv1.SelectionOutcome{}
			}
		case event.GetWrite() != nil:
			w := event.GetWrite()
			switch {
			case !wrote && w.GetGeneration() >= listed:
				if err := write(w.GetCacheVersion()); err != nil {
					return err
				}
			case wrote:
				fmt.Fprintf(out, "watch: write %s reevaluated=%d changed=%d matched=%d\n", w.GetCacheVersion(), w.GetReevaluated(), w.GetChanged(), w.GetMatched())
				if w.GetCacheVersion() == watchedVersion {
					return nil
				}
			}
		}
	}
}

// outcomeString: `runtime=<kind>/<name> ready=<status>/<reason>` (none and - when absent).
func outcomeString(o *selectorv1.SelectionOutcome) string {
	ready := "-"
	if c := o.GetRuntimeReady(); c != nil {
		ready = c.GetStatus() + "/" + c.GetReason()
	}
	return "runtime=" + runtimeOrNone(o) + " ready=" + ready
}

// runtimeOrNone: the outcome's runtime, `none` without one, `-` for no outcome (created or deleted).
func runtimeOrNone(o *selectorv1.SelectionOutcome) string {
	switch {
	case o == nil:
		return "-"
	case o.GetRuntime() == nil:
		return "none"
	default:
		return refString(o.GetRuntime())
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
	if summary := r.GetExclusionSummary(); summary != nil {
		fmt.Fprintf(out, "summary: %s\n", summary.GetText())
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

func day(d int) time.Time { return time.Date(2025, time.June, d, 0, 0, 0, 0, time.UTC) }

// srtRuntime is the catalog runtime srt-llama-3-3-70b-instruct (lists no classes) with its
// entry's autoSelect and priority.
func srtRuntime(autoSelect bool, priority int32) *selectorv1.CacheObject {
	entry := llamaEntry(autoSelect)
	entry.Priority = proto.Int32(priority)
	return clusterRuntime("srt-llama-3-3-70b-instruct", day(1), &omev1beta1.ServingRuntimeSpec{
		SupportedModelFormats: []*omev1beta1.SupportedModelFormat{entry},
		ModelSizeRange:        &omev1beta1.ModelSizeRangeSpec{Min: proto.String("60B"), Max: proto.String("75B")},
		Disabled:              proto.Bool(false),
		ProtocolVersions:      []string{"openAI"},
	})
}

// watchedRuntime is the write -watch makes: srt-llama-3-3-70b-instruct auto-selectable at
// priority 2, so it outranks the hopper runtime wherever no accelerator class is asked for.
func watchedRuntime() *selectorv1.CacheObject { return srtRuntime(true, 2) }

// cachedInferenceService is one of the InferenceServices the snapshot caches (in llama-demo).
func cachedInferenceService(name, class string) *selectorv1.CacheObject {
	return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_InferenceService{
		InferenceService: inferenceService(options{namespace: "llama-demo", isvcName: name, model: "llama-3-3-70b-instruct", class: class}),
	}}
}

// exampleSnapshot: the hopper runtime from the accelerator-class docs (lists nvidia-h100 and
// nvidia-h200), the catalog runtime srt-llama-3-3-70b-instruct (lists no classes), the
// ClusterBaseModel llama-3-3-70b-instruct, three AcceleratorClasses, and two InferenceServices
// of llama-demo for -watch (one asks for nvidia-h100, one for no class).
func exampleSnapshot() *selectorv1.ApplySnapshotRequest {
	return &selectorv1.ApplySnapshotRequest{
		Version: "selectorexample-1",
		Objects: []*selectorv1.CacheObject{
			clusterRuntime("llama-3-3-70b-hopper", day(2), &omev1beta1.ServingRuntimeSpec{
				SupportedModelFormats: []*omev1beta1.SupportedModelFormat{llamaEntry(true)},
				ModelSizeRange:        &omev1beta1.ModelSizeRangeSpec{Min: proto.String("60B"), Max: proto.String("75B")},
				AcceleratorRequirements: &omev1beta1.AcceleratorRequirements{
					AcceleratorClasses: []string{"nvidia-h100", "nvidia-h200"},
				},
			}),
			srtRuntime(false, 1),
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
			cachedInferenceService("llama-3-3-70b", ""),
			cachedInferenceService("llama-3-3-70b-h100", "nvidia-h100"),
		},
	}
}
