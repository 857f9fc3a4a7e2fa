package omeadapter

import (
	"encoding/json"
	"fmt"

	omev1beta1 "github.com/sgl-project/ome/pkg/apis/ome/v1beta1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
)

// The protos mirror the CRDs' JSON (proto field `supported_model_formats` is JSON
// `supportedModelFormats`), so OME's Go objects convert through their JSON: encoding/json one
// way, protojson the other. The protos carry the whole spec of ServingRuntime,
// ClusterServingRuntime and the InferenceService components (generated from the CRDs by
// protos/crdgen.py; a Kubernetes quantity or int-or-string is a google.protobuf.Value holding
// the number or string as written). ToProto drops the rest (protojson's DiscardUnknown):
//
//   - every kind: `metadata` other than name, namespace, labels, annotations, uid,
//     resourceVersion, generation and creationTimestamp (managedFields, ownerReferences,
//     finalizers, deletionTimestamp ...);
//   - ServingRuntime / ClusterServingRuntime: `status` other than inheritanceChain and conditions;
//   - BaseModel / ClusterBaseModel `spec`: storage, modelConfiguration, apiCapabilities,
//     servingMode, maxTokens, additionalMetadata, compartmentID; all of `status`;
//   - InferenceService: `status` other than conditions and observedGeneration;
//   - AcceleratorClass: `status`.
//
// TestRoundTripEveryCatalogObject lists the dropped JSON paths of every catalog object and
// fails on one outside this list, and on any under the spec of a runtime or InferenceService.

// ToProto converts an OME API object (or spec) to its proto message m through JSON, dropping
// the fields the protos do not model. OME's Go types cannot tell an absent `weight` from
// `weight: 0` (int64 with omitempty); objects from the API server always carry the CRD's
// default 1, so a 0 there is an explicit 0 (which scores as 10 for a format, 5 for a
// framework), and ToProto sends it as set.
func ToProto(obj any, m proto.Message) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("omeadapter: encode %T: %w", obj, err)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, m); err != nil {
		return fmt.Errorf("omeadapter: %T as %s: %w", obj, m.ProtoReflect().Descriptor().FullName(), err)
	}
	restoreZeroWeights(obj, m)
	return nil
}

// FromProto converts a proto message to the OME type out points to, through JSON (protojson's
// camelCase names are the CRD's; int64 values, which protojson writes as strings, are written
// as numbers for encoding/json).
func FromProto(m proto.Message, out any) error {
	data, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Errorf("omeadapter: encode %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return err
	}
	data, err = json.Marshal(int64Numbers(m.ProtoReflect().Descriptor(), tree))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("omeadapter: %s as %T: %w", m.ProtoReflect().Descriptor().FullName(), out, err)
	}
	return nil
}

// int64Numbers rewrites the protojson strings of 64-bit integer fields of message md in tree as
// JSON numbers.
func int64Numbers(md protoreflect.MessageDescriptor, tree any) any {
	obj, ok := tree.(map[string]any)
	if !ok || md.FullName() == "google.protobuf.Struct" || md.FullName() == "google.protobuf.Timestamp" {
		return tree
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		v, ok := obj[fd.JSONName()]
		if !ok {
			continue
		}
		switch {
		case fd.IsMap():
			if vd := fd.MapValue(); vd.Message() != nil {
				if m, ok := v.(map[string]any); ok {
					for k, e := range m {
						m[k] = int64Numbers(vd.Message(), e)
					}
				}
			}
		case fd.IsList():
			if l, ok := v.([]any); ok {
				for j, e := range l {
					l[j] = fieldValue(fd, e)
				}
			}
		default:
			obj[fd.JSONName()] = fieldValue(fd, v)
		}
	}
	return obj
}

func fieldValue(fd protoreflect.FieldDescriptor, v any) any {
	switch fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if s, ok := v.(string); ok {
			return json.Number(s)
		}
	case protoreflect.MessageKind:
		return int64Numbers(fd.Message(), v)
	}
	return v
}

// restoreZeroWeights sets the weights encoding/json left out as 0 (see ToProto).
func restoreZeroWeights(obj any, m proto.Message) {
	var spec *omev1beta1.ServingRuntimeSpec
	var pspec *pb.ServingRuntimeSpec
	switch o := obj.(type) {
	case *omev1beta1.ServingRuntimeSpec:
		spec = o
	case *omev1beta1.ServingRuntime:
		spec = &o.Spec
	case *omev1beta1.ClusterServingRuntime:
		spec = &o.Spec
	default:
		return
	}
	switch p := m.(type) {
	case *pb.ServingRuntimeSpec:
		pspec = p
	case *pb.ServingRuntime:
		pspec = p.GetSpec()
	case *pb.ClusterServingRuntime:
		pspec = p.GetSpec()
	}
	if pspec == nil || len(pspec.GetSupportedModelFormats()) != len(spec.SupportedModelFormats) {
		return
	}
	for i, f := range spec.SupportedModelFormats {
		pf := pspec.GetSupportedModelFormats()[i]
		if f.ModelFormat != nil && f.ModelFormat.Weight == 0 && pf.GetModelFormat() != nil {
			pf.ModelFormat.Weight = proto.Int64(0)
		}
		if f.ModelFramework != nil && f.ModelFramework.Weight == 0 && pf.GetModelFramework() != nil {
			pf.ModelFramework.Weight = proto.Int64(0)
		}
	}
}
