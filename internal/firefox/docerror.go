package firefox

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// documentError keeps Firefox's own name (BiDi's errorText) of the last
// failed navigation request of a tab: browsingContext.navigate names a
// failure by the error page it reached, and where it reads that page's
// address too early it says only "Address rejected". It keeps the first
// failed navigation of a frame too (its URL and name): an error page in a
// frame fails the tab's navigate the same way. Safe for concurrent use:
// events arrive on the connection's reading goroutine.
type documentError struct {
	mu   sync.Mutex
	name string
	// frameURL and frameName are the first failed frame navigation's.
	frameURL, frameName string
}

// note takes a BiDi network event of the tab whose browsing context is
// top: a fetchError of a navigation request (its navigation set) of top
// itself is kept as the document's; the first of a frame as the frame's.
func (d *documentError) note(top, method string, params json.RawMessage) {
	if method != "network.fetchError" {
		return
	}
	var e struct {
		Context    string      `json:"context"`
		Navigation *string     `json:"navigation"`
		ErrorText  string      `json:"errorText"`
		Request    bidiRequest `json:"request"`
	}
	if json.Unmarshal(params, &e) != nil || e.Navigation == nil || e.ErrorText == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case e.Context == top:
		d.name = e.ErrorText
	case d.frameName == "":
		d.frameURL, d.frameName = e.Request.URL, e.ErrorText
	}
}

// errorName finds a Firefox error's name in a text.
var errorName = regexp.MustCompile(`\b(?:NS_ERROR|SSL_ERROR|SEC_ERROR|MOZILLA_PKIX_ERROR)_[A-Z0-9_]+`)

// explain adds to a failed navigation's error the name Firefox gave the
// document's failure, from the tab's failed navigation request or from
// the error itself, and what to do about it; for an error page Firefox
// did not name ("Address rejected"), where to look.
func (d *documentError) explain(err error) error {
	d.mu.Lock()
	name, frameURL, frameName := d.name, d.frameURL, d.frameName
	d.mu.Unlock()
	if name == "" {
		name = errorName.FindString(err.Error())
	}
	switch {
	case name != "":
		return fmt.Errorf("%w: Firefox failed the page's document with %.100s%s", err, name, documentErrorFix(name))
	case strings.Contains(err.Error(), addressRejected) && frameName != "":
		return fmt.Errorf("%w: the page's document loaded, but a frame in it reached an error page: %.200q failed with %.100s%s", err, frameURL, frameName, frameErrorFix(frameName))
	case strings.Contains(err.Error(), addressRejected):
		return fmt.Errorf("%w: Firefox reached an error page for the page's document without naming its cause (a response it cannot show, such as a download, or one its network refused; the same page's load in Chromium, or --har, shows the document's answer)", err)
	}
	return err
}

// addressRejected is what Firefox's BiDi navigate says of an error page
// whose cause it could not read.
const addressRejected = "Address rejected"

// documentErrorFix says, for Firefox's name of a document's failure, what
// it means for a replay and what to do; "" for a name it does not know.
func documentErrorFix(name string) string {
	switch {
	case name == unknownHostError:
		return " (the document's host is none the testbed serves: the recording lacks it; name the page with --document)"
	case strings.HasPrefix(name, "SSL_ERROR_") || strings.HasPrefix(name, "SEC_ERROR_") || strings.HasPrefix(name, "MOZILLA_PKIX_ERROR_"):
		return " (Firefox refused the TLS connection or the run's certificate for the document's host; quicbench cleanup, then run again; report it if it stays)"
	case name == "NS_ERROR_INVALID_CONTENT_ENCODING" || name == "NS_ERROR_CORRUPTED_CONTENT" || name == "NS_ERROR_NET_PARTIAL_TRANSFER":
		return " (the recorded response's header fields do not fit its body, such as a Content-Encoding its body does not have: import the recording again, or name another page with --document)"
	case name == "NS_ERROR_PORT_ACCESS_NOT_ALLOWED":
		return " (the document's URL names a port Firefox refuses: name the page on port 443 with --document)"
	case strings.HasPrefix(name, "NS_ERROR_NET_") || name == "NS_ERROR_CONNECTION_REFUSED":
		return " (the connection to the testbed's server broke: the run directory's server logs say why)"
	}
	return ""
}

// frameErrorFix says, for Firefox's name of a frame's failure, what it
// means for a replay and what to do.
func frameErrorFix(name string) string {
	if name == unknownHostError {
		return " (the recording lacks the frame's host: the recording browser got the frame elsewhere, or not at all; record the page again, or import a copy without that frame)"
	}
	return documentErrorFix(name)
}
