package caddy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/netns"
	"github.com/quicbench/quicbench/internal/site"
)

// This file gives Caddy the Go origin's matching where its own routes
// cannot (a request target no route holds exactly: the nearest recorded
// query among several of a path, an image at another size). Caddy asks
// quicbench which answer the Go origin's matching gives such a request
// (its reverse proxy, to a service on the loopback of the servers
// namespace), then sends that answer itself, as its exact route would: its
// header fields and its body from its file, over Caddy's own HTTP/1.1,
// HTTP/2 or HTTP/3. The question costs a round trip on the loopback
// (tens of µs) and the matching's work in quicbench's process.

// answerField is the field of the service's reply that names the answer
// to send: its index in answers.list.
const answerField = "X-Quicbench-Answer"

// matchService answers Caddy's question for one site.
type matchService struct {
	matcher *site.Matcher
	// index is each answer's place in answers.list, by its resource.
	index  map[*site.Resource]int
	server *http.Server
	addr   string // host:port on the servers namespace's loopback
}

// startMatchService listens on the loopback of ns and answers for s,
// whose answers a are.
func startMatchService(ns *netns.Namespace, s *site.Site, a *answers) (*matchService, error) {
	ln, err := ns.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("caddy: the matching service: %w", err)
	}
	m := &matchService{matcher: site.NewMatcher(s), index: map[*site.Resource]int{}, addr: ln.Addr().String()}
	for i, an := range a.list {
		m.index[an.res] = i
	}
	m.server = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := m.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = ln.Close()
		}
	}()
	return m, nil
}

// ServeHTTP replies to Caddy with the answer for the request it passed
// on (its host, method and request target as the browser sent them): 204
// with answerField, or 404 for a request the site does not have.
func (m *matchService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res, kind := m.matcher.Match(hostOnly(r.Host), r.Method, r.URL.EscapedPath(), r.URL.RawQuery)
	i, ok := m.index[res]
	if kind == site.Unmatched || !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set(answerField, strconv.Itoa(i))
	w.WriteHeader(http.StatusNoContent)
}

// Close stops the service.
func (m *matchService) Close() error { return m.server.Close() }

// hostOnly is a Host field's host, lower case, without its port.
func hostOnly(host string) string {
	host = strings.ToLower(host)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	return host
}

// askRoute is a host's last route: the request no earlier route took
// exactly goes to the matching service, and the answer it names is sent
// as answerRoute sends it; a 404 from the service is a 404.
func askRoute(p confParams, host string) obj {
	var replies []obj
	for i, an := range p.answers.list {
		if an.host == host {
			steps := answerSteps(p, an)
			replies = append(replies, obj{"match": obj{"headers": obj{answerField: []string{strconv.Itoa(i)}}}, "routes": steps})
		}
	}
	notFound := []obj{{"handle": []obj{{"handler": "static_response", "status_code": "404"}}}}
	replies = append(replies, obj{"routes": notFound})
	return obj{"handle": []obj{{
		"handler":         "reverse_proxy",
		"upstreams":       []obj{{"dial": p.matchAddr}},
		"handle_response": replies,
	}}}
}
