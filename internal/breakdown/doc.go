// Package breakdown takes a page load's time apart into what it waited
// on, from what the load recorded: from the headers of the packets the
// emulated link carried and dropped, the time TCP connections stalled on
// loss recovery and the bytes held behind a missing segment (head-of-line
// blocking); from a QUIC sender's loss events, the time its streams
// waited for resent data; and from both with the servers' records, the
// parts of the load's time that add up to its PLT (Apart). It is pure: it
// reads records made after the load, never inside its timed window.
package breakdown
