package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
)

// docs/go.md shows this program whole (its ```go block is main.go byte for byte) and its
// output (the ```text block after it); both are checked here against a real server.
func TestDocsGoShowsThisProgramAndItsOutput(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(servertest.Root(), "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```\n\nIt prints:\n\n```text\n(.*?)```").FindSubmatch(doc)
	if blocks == nil {
		t.Fatal("docs/go.md has no ```go block followed by \"It prints:\" and a ```text block")
	}
	if string(blocks[1]) != string(src) {
		t.Fatalf("docs/go.md's program differs from client/go/cmd/selectordoc/main.go: copy main.go into the doc")
	}
	bin := filepath.Join(t.TempDir(), "selectordoc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := servertest.Start(t) // the embedded example catalog
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "OME_SELECTOR_ADDRESS="+srv.Address)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("selectordoc: %v\n%s", err, out)
	}
	if got, want := string(out), string(blocks[2]); got != want {
		t.Errorf("output:\n%s\ndocs/go.md says:\n%s", got, want)
	}
	if !strings.Contains(string(out), "selected: llama-3-3-70b-hopper score=2\n") {
		t.Errorf("output %q does not select llama-3-3-70b-hopper", out)
	}
}
