package firefox

import (
	"errors"
	"strings"
	"testing"
)

// TestADocumentsFailureIsNamed: a fetchError of the tab's own navigation
// names a failed navigation's cause with what to do; a subresource's and
// another event are not taken for it; a frame's failed navigation is named
// as the frame's, the first of them.
func TestADocumentsFailureIsNamed(t *testing.T) {
	var d documentError
	failed := errors.New("browsingContext.navigate: unknown error: Error: Address rejected")
	unnamed := "Firefox reached an error page for the page's document without naming its cause"
	if err := d.explain(failed); !errors.Is(err, failed) || !strings.Contains(err.Error(), unnamed) {
		t.Errorf("without a failed document: %v, want it said that Firefox named no cause", err)
	}
	named := errors.New("browsingContext.navigate: unknown error: Error: NS_ERROR_INVALID_CONTENT_ENCODING")
	if err := d.explain(named); !strings.Contains(err.Error(), "with NS_ERROR_INVALID_CONTENT_ENCODING (the recorded response's header fields") {
		t.Errorf("a named error page: %v, want its fix", err)
	}
	if other := errors.New("no such frame"); d.explain(other) != other {
		t.Errorf("another error was changed: %v", d.explain(other))
	}
	for _, ev := range []struct{ method, params string }{
		{"network.fetchError", `{"context":"frame","navigation":"n1","errorText":"NS_ERROR_NET_RESET","request":{"url":"https://btn.test/b.html"}}`},
		{"network.fetchError", `{"context":"top","navigation":null,"errorText":"NS_ERROR_UNKNOWN_HOST"}`},
		{"network.responseCompleted", `{"context":"top","navigation":"n1"}`},
		{"network.fetchError", `not json`},
	} {
		d.note("top", ev.method, []byte(ev.params))
	}
	if err := d.explain(failed); strings.Contains(err.Error(), unnamed) || !strings.Contains(err.Error(), `a frame in it reached an error page: "https://btn.test/b.html" failed with NS_ERROR_NET_RESET (the connection`) {
		t.Errorf("after a frame's and a subresource's failures: %v, want the frame named, not the document", err)
	}
	d.note("top", "network.fetchError", []byte(`{"context":"frame2","navigation":"n3","errorText":"NS_ERROR_UNKNOWN_HOST","request":{"url":"https://other.test/"}}`))
	if err := d.explain(failed); !strings.Contains(err.Error(), "btn.test") {
		t.Errorf("after a second frame's failure: %v, want the first named", err)
	}
	var frameOnly documentError
	frameOnly.note("top", "network.fetchError", []byte(`{"context":"f","navigation":"n1","errorText":"NS_ERROR_UNKNOWN_HOST","request":{"url":"https://ghbtns.test/b.html"}}`))
	if err := frameOnly.explain(failed); !strings.Contains(err.Error(), "the recording lacks the frame's host") {
		t.Errorf("a frame of a host the recording lacks: %v", err)
	}
	d.note("top", "network.fetchError", []byte(`{"context":"top","navigation":"n2","errorText":"NS_ERROR_INVALID_CONTENT_ENCODING"}`))
	err := d.explain(failed)
	if !errors.Is(err, failed) || !strings.Contains(err.Error(), "Firefox failed the page's document with NS_ERROR_INVALID_CONTENT_ENCODING (the recorded response's header fields do not fit its body") {
		t.Errorf("after the document's failure: %v", err)
	}
	for name, want := range map[string]string{
		"SSL_ERROR_BAD_CERT_DOMAIN":        "certificate",
		"NS_ERROR_PORT_ACCESS_NOT_ALLOWED": "port 443",
		"NS_ERROR_CONNECTION_REFUSED":      "server logs",
		"NS_ERROR_UNKNOWN_HOST":            "--document",
		"NS_ERROR_SOMETHING_NEW":           "",
	} {
		if got := documentErrorFix(name); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: %q, want one saying %q", name, got, want)
		}
	}
}
