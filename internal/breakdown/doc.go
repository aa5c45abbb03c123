// Package breakdown takes a page load's time apart into what it waited
// on, from what the load recorded: here, from the packets the emulated
// link carried and dropped, the time TCP connections stalled on loss
// recovery and the bytes held behind a missing segment (head-of-line
// blocking). It is pure: it reads records made after the load, never
// inside its timed window.
package breakdown
