package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

// The example against the real server. It applies its own snapshot (the docs' hopper runtime,
// the catalog runtime srt-llama-3-3-70b-instruct that lists no classes, the ClusterBaseModel
// llama-3-3-70b-instruct, three AcceleratorClasses, two InferenceServices of llama-demo), so
// nothing here depends on the embedded example catalog.

const acceleratorReason = "runtime does not support the required accelerator class"

// runtime-accelerator-class-matching.md, with both runtimes of the snapshot (listed newest
// first: the hopper runtime is the newer one).
const a100NoRuntimeMessage = "no runtime found to support model safetensors with format safetensors in namespace llama-demo. " +
	"Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: " +
	"llama-3-3-70b-hopper (" + acceleratorReason + "); srt-llama-3-3-70b-instruct (" + acceleratorReason + ")"

func defaults(addr string) options {
	return options{addr: addr, class: "nvidia-h100", namespace: "llama-demo", isvcName: "llama-3-3-70b", model: "llama-3-3-70b-instruct", timeout: 20 * time.Second}
}

func lines(t *testing.T, srv *servertest.Server, o options) []string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatalf("run: %v\noutput:\n%s\nserver log:\n%s", err, out.String(), srv.Log(40))
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func withPrefix(ls []string, prefix string) []string {
	var out []string
	for _, l := range ls {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestH100SelectsTheHopperRuntime(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	ls := lines(t, srv, defaults(srv.Address))
	for _, want := range []string{
		"health: SERVING",
		"model: ClusterBaseModel/llama-3-3-70b-instruct label=mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0",
		"selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2",
		"explain: ClusterServingRuntime/llama-3-3-70b-hopper verdict=CANDIDATE rank=1 score=2 reason=-",
		"explain: ClusterServingRuntime/srt-llama-3-3-70b-instruct verdict=EXCLUDED rank=0 score=0 reason=" + acceleratorReason,
	} {
		if !slices.Contains(ls, want) {
			t.Errorf("no line %q in\n%s", want, strings.Join(ls, "\n"))
		}
	}
	if got := withPrefix(ls, "summary: "); !slices.Equal(got, []string{"summary: 1/2 runtimes are candidates: 1 accelerator class"}) {
		t.Errorf("summary lines %q", got)
	}
	if got := withPrefix(ls, "excluded: "); !slices.Equal(got, []string{"excluded: srt-llama-3-3-70b-instruct: " + acceleratorReason}) {
		t.Errorf("excluded lines %q", got)
	}
	if got := withPrefix(ls, "no_runtime_message: "); len(got) != 0 {
		t.Errorf("no_runtime_message lines %q", got)
	}
}

func TestA100SelectsNothingAndReportsOMEsMessage(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	o := defaults(srv.Address)
	o.class = "nvidia-a100"
	ls := lines(t, srv, o)
	for _, want := range []string{"selected: none", "no_runtime_message: " + a100NoRuntimeMessage} {
		if !slices.Contains(ls, want) {
			t.Errorf("no line %q in\n%s", want, strings.Join(ls, "\n"))
		}
	}
	if got := withPrefix(ls, "summary: "); !slices.Equal(got, []string{"summary: 0/2 runtimes are candidates: 2 accelerator class"}) {
		t.Errorf("summary lines %q", got)
	}
	want := []string{"excluded: llama-3-3-70b-hopper: " + acceleratorReason, "excluded: srt-llama-3-3-70b-instruct: " + acceleratorReason}
	if got := withPrefix(ls, "excluded: "); !slices.Equal(got, want) {
		t.Errorf("excluded lines %q, want %q", got, want)
	}
}

func TestUnreachableServerFailsWithinTheTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	o := defaults(addr)
	o.timeout = 2 * time.Second
	var out bytes.Buffer
	started := time.Now()
	err = run(context.Background(), o, &out)
	if err == nil || !strings.HasPrefix(err.Error(), "ApplySnapshot: ") {
		t.Fatalf("run against %s: %v, want an ApplySnapshot error", addr, err)
	}
	if strings.Contains(out.String(), "selected:") {
		t.Errorf("output %q", out.String())
	}
	if elapsed := time.Since(started); elapsed > 30*time.Second {
		t.Errorf("took %s with -timeout 2s", elapsed)
	}
}

func TestWaitsForServingAndGivesUpOnAnUnsyncedCache(t *testing.T) {
	t.Parallel()
	// -skip-snapshot: only health is waited for, which stays NOT_SERVING on a server that waits
	// for a controller's first ApplySnapshot.
	srv := servertest.Start(t, "--wait-for-sync")
	// The server answers health (NOT_SERVING) before the timed run starts.
	c, err := selectorclient.New(srv.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Health().Check(context.Background(), &healthpb.HealthCheckRequest{Service: selectorclient.SelectionServiceName}, grpc.WaitForReady(true), selectorclient.CallTimeout(30*time.Second))
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health before the first snapshot: %v, %v", resp, err)
	}
	o := defaults(srv.Address)
	o.skipSnapshot, o.timeout = true, 3*time.Second
	var out bytes.Buffer
	started := time.Now()
	err = run(context.Background(), o, &out)
	if err == nil || !strings.HasPrefix(err.Error(), "ome.selector.v1.SelectionService did not become SERVING (last: NOT_SERVING)") {
		t.Fatalf("run: %v", err)
	}
	if strings.Contains(out.String(), "selected:") {
		t.Errorf("output %q", out.String())
	}
	if elapsed := time.Since(started); elapsed < 2500*time.Millisecond || elapsed > 30*time.Second {
		t.Errorf("took %s with -timeout 3s", elapsed)
	}
}

func TestTheWatcherPrintsTheEventsOfItsRuntimeWrite(t *testing.T) {
	t.Parallel()
	// -watch: the two cached InferenceServices of the snapshot, then its one write
	// (srt-llama-3-3-70b-instruct auto-selectable at priority 2) moves the one that asks for no
	// accelerator class, and the stream ends after that write's stats.
	srv := servertest.Start(t)
	o := defaults(srv.Address)
	o.watch = true
	ls := lines(t, srv, o)
	hopper, srt := "ClusterServingRuntime/llama-3-3-70b-hopper", "ClusterServingRuntime/srt-llama-3-3-70b-instruct"
	want := []string{
		"watch: current llama-demo/llama-3-3-70b runtime=" + hopper + " ready=-",      // no RuntimeReady until a selection failed
		"watch: current llama-demo/llama-3-3-70b-h100 runtime=" + hopper + " ready=-", // no RuntimeReady until a selection failed
		"watch: initial state: 2 InferenceServices at selectorexample-1",
		"upserted: " + srt + " version=selectorexample-2",
		"watch: change llama-demo/llama-3-3-70b " + hopper + " -> " + srt + " step=CHANGE_STEP_CHECK_PASSED",
		"watch:   reason: ClusterServingRuntime srt-llama-3-3-70b-instruct passes the autoSelect check now (before: " +
			"supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips " +
			"it (pin it explicitly via spec.runtime.name instead))",
		"watch:   cause: ClusterServingRuntime srt-llama-3-3-70b-instruct: autoSelect false → true, priority 1 → 2",
		"watch: write selectorexample-2 reevaluated=2 changed=1 matched=1",
	}
	if got := ls[max(0, len(ls)-8):]; !slices.Equal(got, want) {
		t.Errorf("last lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Another namespace sees the write's stats and none of its changes.
	o.namespace = "team-b"
	var got []string
	for _, l := range lines(t, srv, o) {
		if strings.HasPrefix(l, "watch:") || strings.HasPrefix(l, "upserted:") {
			got = append(got, l)
		}
	}
	want = []string{
		"watch: initial state: 0 InferenceServices at selectorexample-1",
		"upserted: " + srt + " version=selectorexample-2",
		"watch: write selectorexample-2 reevaluated=2 changed=1 matched=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("team-b lines %q, want %q", got, want)
	}
}

const selected = "selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2"

func TestOverTheUnixSocket(t *testing.T) {
	t.Parallel()
	srv := servertest.StartAt(t, "unix:"+filepath.Join(t.TempDir(), "api.sock"))
	if ls := lines(t, srv, defaults(srv.Address)); !slices.Contains(ls, selected) {
		t.Errorf("no %q in %q", selected, ls)
	}
}

func TestOverMTLS(t *testing.T) {
	t.Parallel()
	pki := servertest.NewPKI(t)
	srv := servertest.Start(t, pki.ServerArgs(true)...)
	o := defaults(srv.Address)
	o.caFile, o.certFile, o.keyFile = pki.CA, pki.ClientCert, pki.ClientKey
	if ls := lines(t, srv, o); !slices.Contains(ls, selected) {
		t.Errorf("no %q in %q", selected, ls)
	}
}
