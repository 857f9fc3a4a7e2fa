package omeadapter_test

import (
	"context"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	omev1beta1 "github.com/sgl-project/ome/pkg/apis/ome/v1beta1"
	"github.com/sgl-project/ome/pkg/runtimeselector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	"github.com/ome-selector/ome-selector/client/go/omeadapter"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

// The differential: OME v0.1.5's in-process Selector (over controller-runtime's fake client)
// against omeadapter over the real service, both holding the same objects. Every difference
// must fall in a class of allowed, each a v1.3 rule the README's deviations list names
// (section "Where we deviate from, or add to, the docs", bullet "OME v0.1.5's in-process
// Selector"); any other difference fails.
var allowed = map[string]string{
	"size-range: v0.1.5 panics on a range with one bound":    "facts 8.9 / model-size-range-matching.md: a missing min or max is an open bound",
	"no-runtime-message: excluded runtimes in another order": "README deviations: order of excluded runtimes in `no runtime found ...` (OME's comes from a Go map)",
}

// outcome is one Selector's answer for one case, as comparable text.
type outcome struct {
	selected   string   // "CSR/name score=N", or the error's type and text
	compatible []string // GetCompatibleRuntimes: "CSR/name score=N" in order, or the error
}

func selectionText(sel *runtimeselector.RuntimeSelection) string {
	kind := "SR"
	if sel.IsCluster {
		kind = "CSR"
	}
	return fmt.Sprintf("%s/%s score=%d", kind, sel.Name, sel.Score)
}

func errorText(err error) string {
	switch err.(type) {
	case *runtimeselector.NoRuntimeFoundError:
		return "NoRuntimeFoundError: " + err.Error()
	case *runtimeselector.ModelValidationError:
		return "ModelValidationError: " + err.Error()
	case *runtimeselector.RuntimeNotFoundError:
		return "RuntimeNotFoundError: " + err.Error()
	case *runtimeselector.RuntimeDisabledError:
		return "RuntimeDisabledError: " + err.Error()
	case *runtimeselector.RuntimeCompatibilityError:
		return "RuntimeCompatibilityError: " + err.Error()
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// run asks s, turning a panic into an outcome.
func run(ctx context.Context, s runtimeselector.Selector, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{selected: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if sel, err := s.SelectRuntime(ctx, model, isvc); err != nil {
		o.selected = errorText(err)
	} else {
		o.selected = selectionText(sel)
	}
	matches, err := s.GetCompatibleRuntimes(ctx, model, isvc, isvc.Namespace)
	if err != nil {
		o.compatible = []string{errorText(err)}
	}
	for _, m := range matches {
		o.compatible = append(o.compatible, selectionText(&m.RuntimeSelection))
	}
	return o
}

var excludedList = regexp.MustCompile(`^(NoRuntimeFoundError: .*?\. Excluded runtimes: )(.*)$`)

// sameExcludedSet: both texts are NoRuntimeFoundErrors that list the same exclusions.
func sameExcludedSet(a, b string) bool {
	ma, mb := excludedList.FindStringSubmatch(a), excludedList.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] != mb[1] {
		return false
	}
	la, lb := strings.Split(ma[2], "; "), strings.Split(mb[2], "; ")
	sort.Strings(la)
	sort.Strings(lb)
	return strings.Join(la, "; ") == strings.Join(lb, "; ")
}

// classify names the allowed class of a difference, or "" when none explains it.
func classify(objs []client.Object, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService, ome, svc outcome) string {
	if sameExcludedSet(ome.selected, svc.selected) && strings.Join(ome.compatible, ",") == strings.Join(svc.compatible, ",") {
		return "no-runtime-message: excluded runtimes in another order"
	}
	return ""
}

func runtimeSpec(o client.Object) *omev1beta1.ServingRuntimeSpec {
	switch r := o.(type) {
	case *omev1beta1.ServingRuntime:
		return &r.Spec
	case *omev1beta1.ClusterServingRuntime:
		return &r.Spec
	}
	return nil
}

func kindName(o client.Object) string {
	if _, ok := o.(*omev1beta1.ServingRuntime); ok {
		return "SR/" + o.GetName()
	}
	return "CSR/" + o.GetName()
}

type difference struct {
	cluster, model, class string
	ome, svc              outcome
	kind                  string
}

// compare runs every model with no class and with each AcceleratorClass of objs, in namespace.
func compare(t *testing.T, ctx context.Context, cluster string, objs []client.Object, models []namedModel, namespace string, adapter runtimeselector.Selector) (cases int, diffs []difference) {
	ome := runtimeselector.New(fakeClient(t, objs))
	classes := []string{""}
	for _, o := range objs {
		if _, ok := o.(*omev1beta1.AcceleratorClass); ok {
			classes = append(classes, o.GetName())
		}
	}
	for _, m := range models {
		for _, class := range classes {
			isvc := &omev1beta1.InferenceService{
				ObjectMeta: metav1.ObjectMeta{Name: "differential", Namespace: namespace},
				Spec:       omev1beta1.InferenceServiceSpec{Model: &omev1beta1.ModelRef{Name: m.name[strings.LastIndex(m.name, "/")+1:]}},
			}
			if class != "" {
				isvc.Spec.AcceleratorSelector = &omev1beta1.AcceleratorSelector{AcceleratorClass: ptr.To(class)}
			}
			spec := m.spec
			a, b := run(ctx, ome, &spec, isvc), run(ctx, adapter, &spec, isvc)
			cases++
			if a.selected == b.selected && strings.Join(a.compatible, ",") == strings.Join(b.compatible, ",") {
				continue
			}
			diffs = append(diffs, difference{cluster, m.source + ":" + m.name, class, a, b, classify(objs, &spec, isvc, a, b)})
		}
	}
	return cases, diffs
}

func applySnapshot(t *testing.T, c *selectorclient.Client, version string, objs []client.Object) {
	t.Helper()
	req := &selectorv1.ApplySnapshotRequest{Version: version}
	for _, o := range objs {
		req.Objects = append(req.Objects, cacheObject(t, o))
	}
	if _, err := c.Cache().ApplySnapshot(context.Background(), req); err != nil {
		t.Fatalf("ApplySnapshot %s: %v", version, err)
	}
}

func TestDifferentialAgainstOMEsSelector(t *testing.T) {
	log.SetLogger(logr.Discard()) // OME's Selector logs every call
	ctx := context.Background()
	// No cap on the no-runtime message: OME prints every exclusion, and the 8 KiB cap is a
	// documented deviation (README, "Where we deviate"), so the texts compare whole.
	srv := servertest.Start(t, "--wait-for-sync", "--max-message-bytes", "0")
	c, err := selectorclient.New(srv.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var all []difference
	total := 0
	cat := loadCatalog(t)
	applySnapshot(t, c, "catalog", cat.objects)
	for _, ns := range []string{"team-a"} { // ome-cluster's namespace with a ServingRuntime
		n, d := compare(t, ctx, "catalog/"+ns, cat.objects, cat.models, ns, omeadapter.NewWithClient(c, fakeClient(t, cat.objects)))
		total += n
		all = append(all, d...)
	}
	rng := rand.New(rand.NewSource(20261201))
	for i := 0; i < 16; i++ {
		objs, models := randomCluster(rng)
		name := fmt.Sprintf("random-%d", i)
		applySnapshot(t, c, name, objs)
		n, d := compare(t, ctx, name, objs, models, "team-r", omeadapter.NewWithClient(c, fakeClient(t, objs)))
		total += n
		all = append(all, d...)
	}

	// Size ranges with one bound (model-size-range-matching.md): a 70B model against a min-only
	// and a max-only range.
	entry := omev1beta1.SupportedModelFormat{
		ModelFormat:       &omev1beta1.ModelFormat{Name: "safetensors", Operator: (*omev1beta1.RuntimeSelectorOperator)(ptr.To("Equal")), Weight: 1},
		ModelFramework:    &omev1beta1.ModelFrameworkSpec{Name: "transformers", Operator: (*omev1beta1.RuntimeSelectorOperator)(ptr.To("Equal")), Weight: 1},
		AutoSelect:        ptr.To(true),
		ModelArchitecture: ptr.To("LlamaForCausalLM"),
	}
	open := []client.Object{
		&omev1beta1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "min-only"}, Spec: omev1beta1.ServingRuntimeSpec{
			SupportedModelFormats: []omev1beta1.SupportedModelFormat{entry}, ModelSizeRange: &omev1beta1.ModelSizeRangeSpec{Min: ptr.To("7B")}}},
		&omev1beta1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "max-only"}, Spec: omev1beta1.ServingRuntimeSpec{
			SupportedModelFormats: []omev1beta1.SupportedModelFormat{entry}, ModelSizeRange: &omev1beta1.ModelSizeRangeSpec{Max: ptr.To("80B")}}},
	}
	applySnapshot(t, c, "open-ranges", open)
	n, d := compare(t, ctx, "open-ranges", open, []namedModel{{"fixed", "llama-70b", *llamaModel()}}, "team-r", omeadapter.NewWithClient(c, fakeClient(t, open)))
	total += n
	all = append(all, d...)

	counts := map[string]int{}
	var table strings.Builder
	fmt.Fprintf(&table, "%d cases, %d differences\n", total, len(all))
	fmt.Fprintf(&table, "%-14s | %-44s | %-12s | %-10s | OME v0.1.5 | service\n", "cluster", "model", "class", "kind")
	for _, d := range all {
		counts[d.kind]++
		kind := d.kind
		if kind == "" {
			kind = "UNEXPLAINED"
		}
		fmt.Fprintf(&table, "%-14s | %-44s | %-12s | %.10s | %s %v | %s %v\n", d.cluster, d.model, d.class, kind, d.ome.selected, d.ome.compatible, d.svc.selected, d.svc.compatible)
		if d.kind == "" {
			t.Errorf("unexplained difference: %s %s class=%q\n  OME:     %s %v\n  service: %s %v", d.cluster, d.model, d.class, d.ome.selected, d.ome.compatible, d.svc.selected, d.svc.compatible)
		}
	}
	for kind, rule := range allowed {
		fmt.Fprintf(&table, "class %q: %d (%s)\n", kind, counts[kind], rule)
	}
	t.Log(table.String())
	if total < 3000 {
		t.Errorf("only %d cases", total)
	}
}

// randomCluster: a seeded cluster of runtimes (SRs in team-r and CSRs) and models drawn from a
// small vocabulary, so formats, frameworks, versions, operators, architectures, quantizations,
// priorities, autoSelect, disabled, size ranges (with one bound too) and accelerator classes
// collide often.
func randomCluster(rng *rand.Rand) ([]client.Object, []namedModel) {
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	maybe := func(p float64) bool { return rng.Float64() < p }
	opt := func(p float64, xs ...string) *string {
		if maybe(p) {
			return ptr.To(pick(xs...))
		}
		return nil
	}
	formats := []string{"safetensors", "gguf"}
	frameworks := []string{"transformers", "vllm"}
	versions := []string{"1", "1.0", "1.0.0", "2.0.0", "4.47.0", "4.48.1.dev0"}
	archs := []string{"LlamaForCausalLM", "Qwen2ForCausalLM"}
	quants := []string{"fp8", "int4"}
	sizes := []string{"1B", "7B", "8B", "32B", "70B", "405B"}
	classes := []string{"nvidia-h100", "nvidia-a100", "amd-mi300"}
	var objs []client.Object
	for _, c := range classes {
		objs = append(objs, &omev1beta1.AcceleratorClass{ObjectMeta: metav1.ObjectMeta{Name: c}, Spec: omev1beta1.AcceleratorClassSpec{Vendor: "v", Family: "f", Model: c}})
	}
	for i := 0; i < 6+rng.Intn(10); i++ {
		spec := omev1beta1.ServingRuntimeSpec{}
		for j := 0; j < 1+rng.Intn(3); j++ {
			f := omev1beta1.SupportedModelFormat{
				ModelFormat:       &omev1beta1.ModelFormat{Name: pick(formats...), Version: opt(0.6, versions...), Operator: (*omev1beta1.RuntimeSelectorOperator)(ptr.To(pick("Equal", "GreaterThan", "GreaterThanOrEqual"))), Weight: int64(1 + rng.Intn(3))},
				ModelArchitecture: opt(0.3, archs...),
				Quantization:      (*omev1beta1.ModelQuantization)(opt(0.2, quants...)),
			}
			// The CRD requires modelFramework on an entry.
			f.ModelFramework = &omev1beta1.ModelFrameworkSpec{Name: pick(frameworks...), Version: opt(0.5, versions...), Operator: (*omev1beta1.RuntimeSelectorOperator)(ptr.To(pick("Equal", "GreaterThanOrEqual"))), Weight: int64(1 + rng.Intn(2))}
			if maybe(0.8) {
				f.AutoSelect = ptr.To(maybe(0.8))
			}
			if maybe(0.5) {
				f.Priority = ptr.To(int32(1 + rng.Intn(3)))
			}
			spec.SupportedModelFormats = append(spec.SupportedModelFormats, f)
		}
		if maybe(0.5) {
			r := &omev1beta1.ModelSizeRangeSpec{Min: opt(0.9, sizes[:3]...), Max: opt(0.9, sizes[3:]...)}
			spec.ModelSizeRange = r
		}
		if maybe(0.4) {
			spec.AcceleratorRequirements = &omev1beta1.AcceleratorRequirements{AcceleratorClasses: []string{pick(classes...)}}
		}
		if maybe(0.1) {
			spec.Disabled = ptr.To(true)
		}
		name := fmt.Sprintf("rt-%02d", i)
		if maybe(0.3) {
			objs = append(objs, &omev1beta1.ServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-r"}, Spec: spec})
		} else {
			objs = append(objs, &omev1beta1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
		}
	}
	var models []namedModel
	for i := 0; i < 16; i++ {
		m := omev1beta1.BaseModelSpec{
			ModelFormat:        omev1beta1.ModelFormat{Name: pick(formats...), Version: opt(0.7, versions...)},
			ModelArchitecture:  opt(0.7, archs...),
			Quantization:       (*omev1beta1.ModelQuantization)(opt(0.2, quants...)),
			ModelParameterSize: opt(0.7, sizes...),
		}
		if maybe(0.8) {
			m.ModelFramework = &omev1beta1.ModelFrameworkSpec{Name: pick(frameworks...), Version: opt(0.6, versions...)}
		}
		models = append(models, namedModel{"random", fmt.Sprintf("m-%02d", i), m})
	}
	return objs, models
}
