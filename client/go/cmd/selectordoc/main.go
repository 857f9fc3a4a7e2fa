// Command selectordoc is the program of docs/go.md ("Calling from Go"), run by its test.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

func main() {
	// The sidecar's socket, or host:port; add selectorclient.WithTLSFiles(ca, cert, key) for mTLS.
	addr := os.Getenv("OME_SELECTOR_ADDRESS")
	if addr == "" {
		addr = "unix:/run/ome-selector/api.sock"
	}
	client, err := selectorclient.New(addr)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.WaitUntilServing(ctx, selectorclient.SelectionServiceName); err != nil {
		log.Fatal(err)
	}

	isvc := &omev1beta1.InferenceService{
		Metadata: &omev1beta1.ObjectMeta{Name: "llama-3-3-70b", Namespace: "llama-demo"},
		Spec: &omev1beta1.InferenceServiceSpec{
			Model:               &omev1beta1.ModelRef{Name: "llama-3-3-70b-instruct"},
			AcceleratorSelector: &omev1beta1.AcceleratorSelector{AcceleratorClass: proto.String("nvidia-h100")},
		},
	}
	resp, err := client.Selection().SelectRuntime(ctx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc})
	if err != nil {
		log.Fatal(err)
	}
	if sel := resp.GetSelection(); sel != nil {
		fmt.Printf("selected: %s score=%d\n", sel.GetRuntime().GetName(), sel.GetScore())
	} else {
		fmt.Printf("no runtime: %s\n", resp.GetNoRuntimeMessage())
	}
	fmt.Printf("summary: %s\n", resp.GetExclusionSummary().GetText())

	// Bad input is INVALID_ARGUMENT with the field that is wrong.
	isvc.Metadata.Namespace = ""
	_, err = client.Selection().SelectRuntime(ctx, &selectorv1.SelectRuntimeRequest{InferenceService: isvc})
	var selErr *selectorclient.Error
	if errors.As(err, &selErr) {
		for _, v := range selErr.FieldViolations {
			fmt.Printf("%s: %s: %s\n", selErr.Code, v.Field, v.Description)
		}
	}
}
