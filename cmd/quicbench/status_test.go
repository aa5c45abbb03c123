package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

func TestStatusOfAStoppedRun(t *testing.T) {
	for _, tc := range []struct {
		code  int
		cause error
		want  int
	}{
		{130, &signalError{syscall.SIGHUP}, 129},
		{130, &signalError{syscall.SIGPIPE}, 141},
		{130, &signalError{syscall.SIGINT}, 130},
		{130, &signalError{syscall.SIGTERM}, 130},
		{0, &signalError{syscall.SIGHUP}, 0}, // it had finished: its own status
		{2, nil, 2},
		{130, context.Canceled, 130},
		{130, errors.New("other"), 130},
	} {
		if got := statusOf(tc.code, tc.cause); got != tc.want {
			t.Errorf("statusOf(%d, %v) = %d, want %d", tc.code, tc.cause, got, tc.want)
		}
	}
}
