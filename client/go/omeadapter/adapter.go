// Package omeadapter implements OME's runtimeselector.Selector (github.com/sgl-project/ome
// v0.1.5, pkg/runtimeselector) over ome-selector, with OME's own Go types and error types, so
// OME's manager, InferenceService reconciler and webhook can swap
//
//	runtimeselector.New(mgr.GetClient())   →   omeadapter.New(mgr.GetClient())
//
// and change nothing else. The service decides (the OME v1.3 rules); the Kubernetes reader only
// supplies the runtime specs the answers carry, in full (the protos model part of a spec).
//
// Errors are OME's types, so runtimeselector.Is...Error keeps working, and each Error() is the
// service's text exactly:
//
//   - *runtimeselector.ModelValidationError: `invalid model specification: <field>: <message>`
//     (SelectRuntime's model_error; a nil model is checked here, with OME's text);
//   - *runtimeselector.NoRuntimeFoundError: the service's `no runtime found to support model ...`.
//     OME's Error() prints ExcludedRuntimes from a Go map (random order); to print the service's
//     order, ExcludedRuntimes holds ONE entry whose key is the list up to the last runtime's
//     name and whose error is that runtime's reason. Read the structured exclusions from
//     SelectRuntime's FULL view instead;
//   - *runtimeselector.RuntimeNotFoundError: `runtime <name> not found in namespace <ns> or at
//     cluster scope` (NOT_FOUND);
//   - *runtimeselector.RuntimeDisabledError: `cluster-scoped runtime <name> is disabled`;
//   - *runtimeselector.RuntimeCompatibilityError: `runtime <name> does not support model
//     <model>: <reason>`, as the service's warning for a named runtime quotes it.
//
// Other service errors are *selectorclient.Error; a named runtime's broken inheritance chain is
// an error with the service's text (`inheritance cycle detected: [a b a]` ...), which OME v0.1.5
// has no type for.
package omeadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	omev1beta1 "github.com/sgl-project/ome/pkg/apis/ome/v1beta1"
	"github.com/sgl-project/ome/pkg/runtimeselector"
	"google.golang.org/grpc/codes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	pb "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

// AddressEnv names the environment variable New reads the service's address from
// (deploy/sidecar sets it to the sidecar's socket).
const AddressEnv = "OME_SELECTOR_ADDRESS"

// DefaultAddress is the address when AddressEnv is unset: the sidecar's unix socket.
const DefaultAddress = "unix:/run/ome-selector/api.sock"

// Selector is runtimeselector.Selector over ome-selector. Safe for concurrent use.
type Selector struct {
	client *selectorclient.Client
	reader client.Reader
	err    error
	local  runtimeselector.Selector // OME's own, for GetSupportedModelFormat only
}

var _ runtimeselector.Selector = (*Selector)(nil)

// New is the drop-in for runtimeselector.New: it connects to $OME_SELECTOR_ADDRESS
// (DefaultAddress when unset) with selectorclient's defaults, and reads runtime specs through
// reader (mgr.GetClient()). A connection that cannot be set up makes every call fail with
// that error.
func New(reader client.Reader, opts ...selectorclient.Option) runtimeselector.Selector {
	addr := os.Getenv(AddressEnv)
	if addr == "" {
		addr = DefaultAddress
	}
	c, err := selectorclient.New(addr, opts...)
	if err != nil {
		return &Selector{err: fmt.Errorf("omeadapter: connect to %s: %w", addr, err)}
	}
	return NewWithClient(c, reader)
}

// NewWithClient is a Selector on an existing client. With a nil reader the specs in the
// answers are the service's (GetRuntimeStatus: the merged spec as the protos model it, see
// ToProto for what is dropped).
func NewWithClient(c *selectorclient.Client, reader client.Reader) *Selector {
	return &Selector{client: c, reader: reader, local: runtimeselector.New(nil)}
}

// Close closes a connection New opened.
func (s *Selector) Close() error {
	if s.client == nil {
		return nil
	}
	return s.client.Close()
}

// SelectRuntime auto-selects the runtime for model (spec.runtime of isvc is not read, as in
// OME's Selector): the service's rank 1.
func (s *Selector) SelectRuntime(ctx context.Context, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService) (*runtimeselector.RuntimeSelection, error) {
	resp, err := s.selectRuntime(ctx, model, isvc, isvc.Namespace, "")
	if err != nil {
		return nil, err
	}
	if resp.GetModelError() != "" {
		return nil, modelError(resp.GetModelError())
	}
	if resp.GetSelection() == nil {
		return nil, noRuntimeError(resp.GetNoRuntimeMessage())
	}
	ref := resp.GetSelection().GetRuntime()
	spec, err := s.spec(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &runtimeselector.RuntimeSelection{Name: ref.GetName(), Spec: spec, Score: resp.GetSelection().GetScore(), IsCluster: isCluster(ref)}, nil
}

// GetCompatibleRuntimes is the service's ranked candidates in namespace, best first. A
// candidate's MatchDetails: every match flag true (it passed every check; SizeMatch when both
// the model's size and the runtime's range are set), Priority of its scoring entry, Weight its
// score, AutoSelectEnabled true; no Reasons.
func (s *Selector) GetCompatibleRuntimes(ctx context.Context, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService, namespace string) ([]runtimeselector.RuntimeMatch, error) {
	resp, err := s.selectRuntime(ctx, model, isvc, namespace, "")
	if err != nil {
		return nil, err
	}
	if resp.GetModelError() != "" {
		return nil, modelError(resp.GetModelError())
	}
	var matches []runtimeselector.RuntimeMatch
	for _, c := range resp.GetCandidates() {
		spec, err := s.spec(ctx, c.GetRuntime())
		if err != nil {
			return nil, err
		}
		priority := int32(1)
		if i := int(c.GetSupportedModelFormatIndex()); i >= 0 && i < len(spec.SupportedModelFormats) && spec.SupportedModelFormats[i].Priority != nil {
			priority = *spec.SupportedModelFormats[i].Priority
		}
		matches = append(matches, runtimeselector.RuntimeMatch{
			RuntimeSelection: runtimeselector.RuntimeSelection{Name: c.GetRuntime().GetName(), Spec: spec, Score: c.GetScore(), IsCluster: isCluster(c.GetRuntime())},
			MatchDetails: runtimeselector.MatchDetails{
				FormatMatch: true, FrameworkMatch: true, ArchitectureMatch: true, DiffusionPipelineMatch: true, QuantizationMatch: true,
				SizeMatch: model.ModelParameterSize != nil && spec.ModelSizeRange != nil,
				Priority:  priority, Weight: c.GetScore(), AutoSelectEnabled: true,
			},
		})
	}
	return matches, nil
}

// ValidateRuntime checks the runtime isvc would name (runtimeName, looked up in isvc's
// namespace first, then at cluster scope): nil when it supports the model, else OME's error
// with the service's text (the first failing check).
func (s *Selector) ValidateRuntime(ctx context.Context, runtimeName string, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService) error {
	resp, err := s.selectRuntime(ctx, model, isvc, isvc.Namespace, runtimeName)
	var se *selectorclient.Error
	if errors.As(err, &se) && se.Code == codes.NotFound {
		return notFoundError(se.Message, runtimeName, isvc.Namespace)
	}
	if err != nil {
		return err
	}
	if resp.GetModelError() != "" {
		return modelError(resp.GetModelError())
	}
	if text := resp.GetRuntimeError(); text != "" {
		if e := disabledError(text); e != nil {
			return e
		}
		if e := compatibilityError(text); e != nil {
			return e
		}
		return errors.New(text)
	}
	if len(resp.GetSelection().GetReasons()) == 0 {
		return nil
	}
	for _, w := range resp.GetWarnings() {
		if m := namedWarning.FindStringSubmatch(w); m != nil {
			if e := compatibilityError(m[1]); e != nil {
				return e
			}
		}
	}
	// No warning quotes the error (not expected): the primary reason, with OME's fields.
	return &runtimeselector.RuntimeCompatibilityError{RuntimeName: runtimeName, ModelName: model.ModelFormat.Name, ModelFormat: model.ModelFormat.Name, Reason: resp.GetSelection().GetReasons()[0].GetMessage()}
}

// GetRuntime is the runtime name in namespace (a ServingRuntime), else at cluster scope, and
// whether it is a ClusterServingRuntime.
func (s *Selector) GetRuntime(ctx context.Context, name string, namespace string) (*omev1beta1.ServingRuntimeSpec, bool, error) {
	if s.err != nil {
		return nil, false, s.err
	}
	for _, ref := range []*selectorv1.RuntimeRef{
		{Kind: selectorv1.RuntimeKind_RUNTIME_KIND_SERVING_RUNTIME, Namespace: namespace, Name: name},
		{Kind: selectorv1.RuntimeKind_RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, Name: name},
	} {
		spec, err := s.spec(ctx, ref)
		var se *selectorclient.Error
		if errors.As(err, &se) && se.Code == codes.NotFound {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		return spec, isCluster(ref), nil
	}
	return nil, false, &runtimeselector.RuntimeNotFoundError{RuntimeName: name, Namespace: namespace}
}

// GetSupportedModelFormat is OME's own (runtimeselector.New(nil)): the best-scoring entry of
// a spec the caller holds, computed in process; the service has no call that scores a spec it
// does not cache.
func (s *Selector) GetSupportedModelFormat(ctx context.Context, runtime *omev1beta1.ServingRuntimeSpec, model *omev1beta1.BaseModelSpec, userSpecifiedRuntime bool) *omev1beta1.SupportedModelFormat {
	return s.local.GetSupportedModelFormat(ctx, runtime, model, userSpecifiedRuntime)
}

// selectRuntime asks the service for isvc in namespace with model inline; runtimeName set
// names it (spec.runtime.name), empty auto-selects (spec.runtime cleared).
func (s *Selector) selectRuntime(ctx context.Context, model *omev1beta1.BaseModelSpec, isvc *omev1beta1.InferenceService, namespace, runtimeName string) (*selectorv1.SelectRuntimeResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	if model == nil {
		return nil, &runtimeselector.ModelValidationError{Field: "model", Message: "model specification is nil"}
	}
	if isvc == nil {
		return nil, errors.New("omeadapter: nil InferenceService")
	}
	req := &selectorv1.SelectRuntimeRequest{InferenceService: &pb.InferenceService{}, ModelSpec: &pb.BaseModelSpec{}}
	if err := ToProto(isvc, req.InferenceService); err != nil {
		return nil, err
	}
	if err := ToProto(model, req.ModelSpec); err != nil {
		return nil, err
	}
	if req.InferenceService.Metadata == nil {
		req.InferenceService.Metadata = &pb.ObjectMeta{}
	}
	req.InferenceService.Metadata.Namespace = namespace
	if req.InferenceService.Spec == nil {
		req.InferenceService.Spec = &pb.InferenceServiceSpec{}
	}
	req.InferenceService.Spec.Runtime = nil
	if runtimeName != "" {
		req.InferenceService.Spec.Runtime = &pb.ServingRuntimeRef{Name: runtimeName}
	}
	return s.client.Selection().SelectRuntime(ctx, req)
}

// spec is the runtime's spec: the object from the reader, else the service's merged spec.
func (s *Selector) spec(ctx context.Context, ref *selectorv1.RuntimeRef) (*omev1beta1.ServingRuntimeSpec, error) {
	resp, err := s.client.Selection().GetRuntimeStatus(ctx, &selectorv1.GetRuntimeStatusRequest{Runtime: ref})
	if err != nil {
		return nil, err
	}
	if s.reader != nil {
		if isCluster(ref) {
			obj := &omev1beta1.ClusterServingRuntime{}
			if err := s.reader.Get(ctx, client.ObjectKey{Name: ref.GetName()}, obj); err != nil {
				return nil, err
			}
			return &obj.Spec, nil
		}
		obj := &omev1beta1.ServingRuntime{}
		if err := s.reader.Get(ctx, client.ObjectKey{Namespace: ref.GetNamespace(), Name: ref.GetName()}, obj); err != nil {
			return nil, err
		}
		return &obj.Spec, nil
	}
	if resp.GetSpec() == nil {
		for _, c := range resp.GetStatus().GetConditions() {
			if c.GetType() == "InheritanceReady" && c.GetMessage() != "" {
				return nil, errors.New(c.GetMessage())
			}
		}
		return nil, fmt.Errorf("omeadapter: runtime %s has no spec", ref.GetName())
	}
	spec := &omev1beta1.ServingRuntimeSpec{}
	if err := FromProto(resp.GetSpec(), spec); err != nil {
		return nil, err
	}
	return spec, nil
}

func isCluster(ref *selectorv1.RuntimeRef) bool {
	return ref.GetKind() == selectorv1.RuntimeKind_RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
}

var (
	noRuntime = regexp.MustCompile(`(?s)^no runtime found to support model (.*) with format (.*) in namespace ([^ .]*)` +
		`(?:\. Checked (\d+) runtimes \((\d+) namespace-scoped, (\d+) cluster-scoped\))?(?:\. Excluded runtimes: (.*))?$`)
	disabled      = regexp.MustCompile(`^(cluster|namespace)-scoped runtime (\S+) is disabled$`)
	incompatible  = regexp.MustCompile(`(?s)^runtime (\S+) does not support model (.*?): (.*)$`)
	namedWarning  = regexp.MustCompile(`(?s)^runtime ".*?" does not declare support for model ".*?" \((.*)\); proceeding because the runtime was named explicitly$`)
	notFoundShape = regexp.MustCompile(`^runtime (\S+) not found in namespace (\S*) or at cluster scope$`)
)

// modelError: `invalid model specification: <field>: <message>` as a ModelValidationError;
// another text (e.g. `model X is disabled`) as a plain error.
func modelError(text string) error {
	rest, ok := strings.CutPrefix(text, "invalid model specification: ")
	if field, message, found := strings.Cut(rest, ": "); ok && found {
		return &runtimeselector.ModelValidationError{Field: field, Message: message}
	}
	return errors.New(text)
}

// noRuntimeError fills a NoRuntimeFoundError whose Error() is text (see the package comment).
func noRuntimeError(text string) error {
	m := noRuntime.FindStringSubmatch(text)
	if m == nil {
		return &runtimeselector.NoRuntimeFoundError{ModelName: text}
	}
	e := &runtimeselector.NoRuntimeFoundError{ModelName: m[1], ModelFormat: m[2], Namespace: m[3]}
	e.TotalRuntimes, _ = strconv.Atoi(m[4])
	e.NamespacedRuntimes, _ = strconv.Atoi(m[5])
	e.ClusterRuntimes, _ = strconv.Atoi(m[6])
	if list := m[7]; list != "" {
		// "a (r1); b (r2)": key "a (r1); b", error "r2", printed as "%s (%v)".
		if i := strings.LastIndex(strings.TrimSuffix(list, ")"), " ("); i >= 0 && strings.HasSuffix(list, ")") {
			e.ExcludedRuntimes = map[string]error{list[:i]: errors.New(list[i+2 : len(list)-1])}
		}
	}
	return e
}

func disabledError(text string) error {
	m := disabled.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	return &runtimeselector.RuntimeDisabledError{RuntimeName: m[2], IsCluster: m[1] == "cluster"}
}

func compatibilityError(text string) error {
	m := incompatible.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	return &runtimeselector.RuntimeCompatibilityError{RuntimeName: m[1], ModelName: m[2], ModelFormat: m[2], Reason: m[3]}
}

// notFoundError: the service's NOT_FOUND text for a named runtime as a RuntimeNotFoundError.
func notFoundError(text, name, namespace string) error {
	if m := notFoundShape.FindStringSubmatch(text); m != nil {
		return &runtimeselector.RuntimeNotFoundError{RuntimeName: m[1], Namespace: m[2]}
	}
	return &runtimeselector.RuntimeNotFoundError{RuntimeName: name, Namespace: namespace}
}
