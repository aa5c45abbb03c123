package chromium

import (
	"github.com/chromedp/cdproto/network"

	"github.com/quicbench/quicbench/internal/client"
)

// nameNotResolved is the error text of a request whose host Chromium could
// not resolve: ResolverRules maps every name but the page's hosts to
// ~NOTFOUND.
const nameNotResolved = "net::ERR_NAME_NOT_RESOLVED"

// unknownHostEvents returns the chromedp.Listen callback that files the
// tab's network events in log: the requests of a visit that failed because
// their host is none of the page's (for a recording, the hosts it lacks).
// Such requests never reach a server, so the servers' replay cannot count
// them. Chromium sends the events only after Network.enable.
func unknownHostEvents(log *client.UnknownHostLog) func(ev any) {
	return func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Request != nil {
				log.Sent(string(e.RequestID), e.Request.Method+" "+e.Request.URL)
			}
		case *network.EventLoadingFinished:
			log.Finished(string(e.RequestID), false)
		case *network.EventLoadingFailed:
			log.Finished(string(e.RequestID), e.ErrorText == nameNotResolved)
		}
	}
}
