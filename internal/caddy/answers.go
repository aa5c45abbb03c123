package caddy

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/quicbench/quicbench/internal/origin"
	"github.com/quicbench/quicbench/internal/results"
	"github.com/quicbench/quicbench/internal/site"
)

// answer is one resource of the site as Caddy answers it: the request it
// answers exactly, and the file holding its body.
type answer struct {
	host, method string // method: GET (which answers HEAD too), POST, …
	path, target string // escaped path; path and "?query"
	res          *site.Resource
	file         string // the body's file name below site/; "" for none
	etag         string // the entity tag the Go origin gives res (origin.ETag)
	// fallback says the answer also takes requests for its path with any
	// other query: the only resource of its method and path, which the
	// Go origin's matching gives every such request (a fuzzy match).
	fallback bool
}

// answers are every resource of a site as Caddy answers them, in a fixed
// order: by host, then by key.
type answers struct {
	list []*answer
}

// newAnswers indexes s's resources, names their body files, and refuses a
// resource Caddy could not answer as recorded: a request target its
// configuration cannot hold, a status it cannot send.
func newAnswers(s *site.Site) (*answers, error) {
	a := &answers{}
	perDir := map[string]int{}
	for _, o := range s.Origins {
		keys := make([]string, 0, len(o.Resources))
		for k := range o.Resources {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			res := o.Resources[k]
			if res.Method == http.MethodHead {
				continue // the Go origin answers HEAD as GET: never with it
			}
			an := &answer{host: o.Host, method: cmp.Or(res.Method, http.MethodGet), path: res.Path, target: res.Target(), res: res, etag: origin.ETag(res)}
			if err := answerable(an); err != nil {
				return nil, &results.InputError{Err: fmt.Errorf("caddy cannot answer %s https://%s%s as recorded: %w; replay this page with --server go", an.method, an.host, an.target, err)}
			}
			if len(res.Body) > 0 && origin.BodyAllowed(res.StatusCode()) {
				an.file = fmt.Sprintf("r%d", len(a.list))
			}
			a.list = append(a.list, an)
			perDir[an.host+" "+an.method+" "+an.path]++
		}
	}
	for _, an := range a.list {
		if key := an.host + " " + an.method + " " + an.path; perDir[key] == 1 {
			an.fallback = true
		}
	}
	return a, nil
}

// answerable says why Caddy's configuration could not answer an exactly
// as recorded, or nil: its request target is compared after Caddy's
// placeholder replacement, which holds printable ASCII without braces
// exactly; a status below 200 is no final answer.
func answerable(an *answer) error {
	for _, s := range []string{an.target, an.method} {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= ' ' || c >= 0x7f || c == '{' || c == '}' {
				return fmt.Errorf("its request target or method has %q, which Caddy's request matching reads as its own syntax or cannot hold", c)
			}
		}
	}
	if st := an.res.StatusCode(); st < 200 || st > 999 {
		return fmt.Errorf("status %d is not a final response", st)
	}
	for _, f := range an.res.Header {
		if strings.HasPrefix(f.Name, "*") || strings.HasSuffix(f.Name, "*") {
			return fmt.Errorf("a header field's name begins or ends with '*', which Caddy reads as a wildcard")
		}
		validator := strings.EqualFold(f.Name, "ETag") || strings.EqualFold(f.Name, "Last-Modified")
		if validator && (strings.HasPrefix(f.Value, "*") || strings.HasSuffix(f.Value, "*")) {
			return fmt.Errorf("its %s begins or ends with '*', which Caddy's header matching reads as a wildcard", f.Name)
		}
	}
	return nil
}

// escapeBraces makes s a literal for Caddy's placeholder replacer, which
// reads "{name}" as a placeholder and "\{" as a brace.
func escapeBraces(s string) string {
	return strings.NewReplacer("{", `\{`, "}", `\}`).Replace(s)
}
