package papers

import (
	"fmt"
	"strings"

	"github.com/quicbench/quicbench/internal/factor"
)

// All returns the five papers in the order of their seed files.
func All() []Paper {
	return []Paper{nepomuceno2018(), masri(), cook2017(), wolsing2019(), biswal2016()}
}

// Lookup finds a paper by its ID or its first author's surname, in any
// case ("cook2017", "Cook").
func Lookup(name string) (Paper, error) {
	want := strings.ToLower(strings.TrimSpace(name))
	for _, p := range All() {
		if p.ID == want || strings.TrimRight(p.ID, "0123456789") == want {
			return p, nil
		}
	}
	return Paper{}, fmt.Errorf("no paper %q: give one of %s (quicbench reproduce --list describes them)", name, strings.Join(IDs(), ", "))
}

// ForSpec finds the paper one of whose specs, at either scale, is the
// spec named name (its name: key, such as "cook2017-quick").
func ForSpec(name string) (Paper, bool) {
	for _, p := range All() {
		for _, files := range p.Specs {
			for _, f := range files {
				if strings.TrimSuffix(f, ".yaml") == name {
					return p, true
				}
			}
		}
	}
	return Paper{}, false
}

// The contrasts the claims use.
func protocols(from, to string) Contrast {
	return Contrast{Factor: factor.IDProtocol, From: from, To: to}
}
func networks(from, to string) Contrast {
	return Contrast{Factor: factor.IDNetwork, From: from, To: to}
}
func stacks(from, to string) Contrast { return Contrast{Factor: factor.IDStack, From: from, To: to} }
