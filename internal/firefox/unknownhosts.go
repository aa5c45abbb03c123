package firefox

import (
	"encoding/json"

	"github.com/quicbench/quicbench/internal/client"
)

// unknownHostError is BiDi's errorText for a request whose host Firefox
// could not resolve: its /etc/hosts names only the page's hosts.
const unknownHostError = "NS_ERROR_UNKNOWN_HOST"

// fileUnknownHostEvent files one BiDi network event in log: the requests
// of a visit that failed because their host is none of the page's (for a
// recording, the hosts it lacks). Such requests never reach a server, so
// the servers' replay cannot count them. It runs on the connection's
// reading goroutine and never blocks.
func fileUnknownHostEvent(log *client.UnknownHostLog, method string, params json.RawMessage) {
	var e struct {
		Request   bidiRequest `json:"request"`
		ErrorText string      `json:"errorText"`
	}
	if json.Unmarshal(params, &e) != nil {
		return
	}
	switch method {
	case "network.beforeRequestSent":
		log.Sent(e.Request.ID, e.Request.Method+" "+e.Request.URL)
	case "network.responseCompleted":
		log.Finished(e.Request.ID, false)
	case "network.fetchError":
		log.Finished(e.Request.ID, e.ErrorText == unknownHostError)
	}
}
