// Package examples holds quicbench's example spec files — one per paper of
// ../shared/seeds at its full scale, the quick slices that reproduce each
// paper's claims in under half an hour, and the browsers comparison —
// embedded in the binary, so that quicbench reproduce finds them wherever
// it runs.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed *.yaml
var specs embed.FS

// Read returns the example spec file of that name, such as
// "cook2017-quick.yaml".
func Read(name string) ([]byte, error) {
	data, err := fs.ReadFile(specs, name)
	if err != nil {
		return nil, fmt.Errorf("example spec %s: %w", name, err)
	}
	return data, nil
}

// Names lists the example spec files in lexical order.
func Names() ([]string, error) {
	entries, err := fs.ReadDir(specs, ".")
	if err != nil {
		return nil, fmt.Errorf("example specs: %w", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}
