package omeadapter_test

import (
	"context"
	"testing"

	omev1beta1 "github.com/sgl-project/ome/pkg/apis/ome/v1beta1"
	"github.com/sgl-project/ome/pkg/constants"
	"github.com/sgl-project/ome/pkg/runtimeselector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	pb "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/omeadapter"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

const accelReason = "runtime does not support the required accelerator class"

func llamaModel() *omev1beta1.BaseModelSpec {
	return &omev1beta1.BaseModelSpec{
		ModelFormat:        omev1beta1.ModelFormat{Name: "safetensors", Version: ptr.To("1.0.0")},
		ModelFramework:     &omev1beta1.ModelFrameworkSpec{Name: "transformers", Version: ptr.To("4.47.0.dev0")},
		ModelArchitecture:  ptr.To("LlamaForCausalLM"),
		ModelParameterSize: ptr.To("70B"),
	}
}

func llamaISVC(class string) *omev1beta1.InferenceService {
	isvc := &omev1beta1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: "llama-3-3-70b", Namespace: "llama-demo"},
		Spec:       omev1beta1.InferenceServiceSpec{Model: &omev1beta1.ModelRef{Name: "llama-3-3-70b-instruct"}},
	}
	if class != "" {
		isvc.Spec.AcceleratorSelector = &omev1beta1.AcceleratorSelector{AcceleratorClass: ptr.To(class)}
	}
	return isvc
}

// The embedded example catalog, plus a disabled runtime, through the adapter: OME's error
// types, each Error() the service's text.
func TestErrorsAreOMEsTypesWithTheServicesTexts(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t)
	c, err := selectorclient.New(srv.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitUntilServing(ctx, selectorclient.SelectionServiceName); err != nil {
		t.Fatal(err)
	}
	disabled := &omev1beta1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "llama-disabled"}, Spec: omev1beta1.ServingRuntimeSpec{
		Disabled:              ptr.To(true),
		SupportedModelFormats: []omev1beta1.SupportedModelFormat{{ModelFormat: &omev1beta1.ModelFormat{Name: "safetensors", Weight: 1}, ModelFramework: &omev1beta1.ModelFrameworkSpec{Name: "transformers", Weight: 1}}},
	}}
	if _, err := c.Cache().UpsertObjects(ctx, &selectorv1.UpsertObjectsRequest{Objects: []*selectorv1.CacheObject{cacheObject(t, disabled)}}); err != nil {
		t.Fatal(err)
	}
	s := omeadapter.NewWithClient(c, nil)

	// SelectRuntime: the hopper runtime for nvidia-h100; nothing for nvidia-a100.
	sel, err := s.SelectRuntime(ctx, llamaModel(), llamaISVC("nvidia-h100"))
	if err != nil {
		t.Fatal(err)
	}
	if sel.Name != "llama-3-3-70b-hopper" || !sel.IsCluster || sel.Score != 2 || sel.Spec.AcceleratorRequirements == nil ||
		len(sel.Spec.AcceleratorRequirements.AcceleratorClasses) != 2 {
		t.Errorf("SelectRuntime = %+v", sel)
	}
	_, err = s.SelectRuntime(ctx, llamaModel(), llamaISVC("nvidia-a100"))
	m := &pb.BaseModelSpec{}
	if err := omeadapter.ToProto(llamaModel(), m); err != nil {
		t.Fatal(err)
	}
	isvc := &pb.InferenceService{}
	if err := omeadapter.ToProto(llamaISVC("nvidia-a100"), isvc); err != nil {
		t.Fatal(err)
	}
	direct, err2 := c.Selection().SelectRuntime(ctx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc, ModelSpec: m})
	if err2 != nil {
		t.Fatal(err2)
	}
	if !runtimeselector.IsNoRuntimeFoundError(err) || err.Error() != direct.GetNoRuntimeMessage() || direct.GetNoRuntimeMessage() == "" {
		t.Errorf("SelectRuntime (a100) error = %T %q\nservice: %q", err, err, direct.GetNoRuntimeMessage())
	}
	if e, ok := err.(*runtimeselector.NoRuntimeFoundError); !ok || e.ModelName != "safetensors" || e.Namespace != "llama-demo" || e.TotalRuntimes != 8 || e.ClusterRuntimes != 7 {
		t.Errorf("NoRuntimeFoundError fields: %+v", err)
	}

	for _, tc := range []struct {
		name  string
		err   error
		is    func(error) bool
		wants string
	}{
		{"model without a format", func() error {
			_, err := s.SelectRuntime(ctx, &omev1beta1.BaseModelSpec{}, llamaISVC(""))
			return err
		}(), runtimeselector.IsModelValidationError, "invalid model specification: modelFormat.name: model format name is required"},
		{"nil model", func() error {
			_, err := s.GetCompatibleRuntimes(ctx, nil, llamaISVC(""), "llama-demo")
			return err
		}(), runtimeselector.IsModelValidationError, "invalid model specification: model: model specification is nil"},
		{"unknown runtime", s.ValidateRuntime(ctx, "nope", llamaModel(), llamaISVC("")),
			runtimeselector.IsRuntimeNotFoundError, "runtime nope not found in namespace llama-demo or at cluster scope"},
		{"disabled runtime", s.ValidateRuntime(ctx, "llama-disabled", llamaModel(), llamaISVC("")),
			runtimeselector.IsRuntimeDisabledError, "cluster-scoped runtime llama-disabled is disabled"},
		{"incompatible runtime", s.ValidateRuntime(ctx, "srt-llama-3-3-70b-instruct", llamaModel(), llamaISVC("nvidia-a100")),
			runtimeselector.IsRuntimeCompatibilityError, "runtime srt-llama-3-3-70b-instruct does not support model : " + accelReason},
		{"GetRuntime of an unknown runtime", func() error {
			_, _, err := s.GetRuntime(ctx, "nope", "llama-demo")
			return err
		}(), runtimeselector.IsRuntimeNotFoundError, "runtime nope not found in namespace llama-demo or at cluster scope"},
	} {
		if tc.err == nil || !tc.is(tc.err) || tc.err.Error() != tc.wants {
			t.Errorf("%s: error %T %v, want %q", tc.name, tc.err, tc.err, tc.wants)
		}
	}
	if err := s.ValidateRuntime(ctx, "llama-3-3-70b-hopper", llamaModel(), llamaISVC("nvidia-h100")); err != nil {
		t.Errorf("ValidateRuntime(hopper, h100) = %v", err)
	}
	spec, isCluster, err := s.GetRuntime(ctx, "team-llama", "llama-demo")
	if err != nil || isCluster || len(spec.SupportedModelFormats) == 0 {
		t.Errorf("GetRuntime(team-llama) = %v, %v, %v", spec, isCluster, err)
	}
	matches, err := s.GetCompatibleRuntimes(ctx, llamaModel(), llamaISVC("nvidia-h100"), "llama-demo")
	if err != nil || len(matches) != 1 || matches[0].Name != "llama-3-3-70b-hopper" || matches[0].MatchDetails.Priority != 1 {
		t.Errorf("GetCompatibleRuntimes = %+v, %v", matches, err)
	}
}

// New, the drop-in: $OME_SELECTOR_ADDRESS, and the specs read through the reader given.
func TestNewReadsTheAddressAndTheSpecsFromKubernetes(t *testing.T) {
	srv := servertest.Start(t)
	t.Setenv(omeadapter.AddressEnv, srv.Address)
	hopper := &omev1beta1.ClusterServingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "llama-3-3-70b-hopper"}, Spec: omev1beta1.ServingRuntimeSpec{
		ProtocolVersions: []constants.InferenceServiceProtocol{"openAI"},
	}}
	var s runtimeselector.Selector = omeadapter.New(fakeClient(t, []client.Object{hopper}))
	sel, err := s.SelectRuntime(context.Background(), llamaModel(), llamaISVC("nvidia-h100"))
	if err != nil {
		t.Fatal(err)
	}
	// The spec is the reader's object (here deliberately not the service's), as OME returns it.
	if sel.Name != "llama-3-3-70b-hopper" || len(sel.Spec.ProtocolVersions) != 1 || len(sel.Spec.SupportedModelFormats) != 0 {
		t.Errorf("SelectRuntime = %+v", sel)
	}
}
